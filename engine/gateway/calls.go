package gateway

import (
	"context"
	"fmt"
	"sync"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

var _ engine.CallRejecter = (*Engine)(nil)

// maxCallBook bounds the calls whose callers the engine remembers.
const maxCallBook = 256

// callBook remembers the caller of each recent call as the network named it
// (a LID or a phone number), since a rejection must name the call's creator.
type callBook struct {
	mu      sync.Mutex
	creator map[string]types.JID // by call id
}

// note remembers the creator of call id.
func (b *callBook) note(id string, creator types.JID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.creator == nil || len(b.creator) >= maxCallBook {
		b.creator = map[string]types.JID{}
	}
	b.creator[id] = creator
}

// of returns the creator of call id, if remembered.
func (b *callBook) of(id string) (types.JID, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	j, ok := b.creator[id]
	return j, ok
}

// callEvent maps a call offer (events.CallOffer: one-to-one, or a group call
// with GroupJID; events.CallOfferNotice: a group call's notice) to an
// EventCall. The caller is its phone-number chat when the engine knows one.
func (e *Engine) callEvent(ctx context.Context, cl client, evt any) engine.Event {
	var meta types.BasicCallMeta
	c := &engine.Call{}
	switch v := evt.(type) {
	case *events.CallOffer:
		meta = v.BasicCallMeta
		if v.Data != nil {
			_, c.Video = v.Data.GetOptionalChildByTag("video")
		}
	case *events.CallOfferNotice:
		meta = v.BasicCallMeta
		c.Video, c.Group = v.Media == "video", v.Type == "group"
	}
	creator := meta.CallCreator
	if creator.IsEmpty() {
		creator = meta.From
	}
	e.calls.note(meta.CallID, creator)
	c.ID, c.From = meta.CallID, e.pnChatID(ctx, cl, creator.ToNonAD(), meta.CallCreatorAlt.ToNonAD())
	if !meta.GroupJID.IsEmpty() {
		c.Group, c.GroupID = true, chatID(meta.GroupJID)
	}
	return engine.Event{ID: "wa_call_" + meta.CallID, Type: engine.EventCall, At: meta.Timestamp, Call: c}
}

// RejectCall implements engine.CallRejecter (whatsmeow's RejectCall), naming
// the call's creator as the offer did.
func (e *Engine) RejectCall(ctx context.Context, from, callID string) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	creator, ok := e.calls.of(callID)
	if !ok {
		if creator, err = parseChat(from); err != nil {
			return err
		}
	}
	if err := cl.RejectCall(ctx, creator, callID); err != nil {
		return fmt.Errorf("gateway: reject call: %w", err)
	}
	return nil
}
