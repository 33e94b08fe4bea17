package gateway

import (
	"context"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// Pace of CheckNumbers (docs/contacts.md): the numbers go to the network in
// usync queries of at most CheckBatch numbers, and one engine's queries are
// DefaultCheckGap apart (Config.CheckGap), whatever the calls they come from.
const (
	CheckBatch      = 50
	DefaultCheckGap = 3 * time.Second
)

// checkPace spaces an engine's number queries.
type checkPace struct {
	mu   chan struct{} // held while a query waits for its turn and runs
	last time.Time
}

// turn waits until the next query may go, holding the pace; done releases it.
func (e *Engine) turn(ctx context.Context) (done func(), err error) {
	select {
	case e.pace.mu <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	gap := e.cfg.CheckGap
	if gap == 0 {
		gap = DefaultCheckGap
	}
	if wait := time.Until(e.pace.last.Add(gap)); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			<-e.pace.mu
			return nil, ctx.Err()
		}
	}
	return func() { e.pace.last = time.Now(); <-e.pace.mu }, nil
}

// CheckNumbers implements engine.NumberChecker with whatsmeow's IsOnWhatsApp,
// CheckBatch numbers a query, paced.
func (e *Engine) CheckNumbers(ctx context.Context, phones []string) ([]engine.NumberStatus, error) {
	cl, err := e.ready()
	if err != nil {
		return nil, err
	}
	byQuery := map[string]types.IsOnWhatsAppResponse{}
	for start := 0; start < len(phones); start += CheckBatch {
		batch := phones[start:min(start+CheckBatch, len(phones))]
		ask := make([]string, len(batch))
		for i, p := range batch {
			ask[i] = "+" + p
		}
		done, err := e.turn(ctx)
		if err != nil {
			return nil, err
		}
		res, err := cl.IsOnWhatsApp(ctx, ask)
		done()
		if err != nil {
			return nil, fmt.Errorf("gateway: check numbers: %w", err)
		}
		for _, r := range res {
			byQuery[r.Query] = r
		}
	}
	out := make([]engine.NumberStatus, len(phones))
	for i, p := range phones {
		out[i] = e.numberStatus(ctx, cl, p, byQuery["+"+p])
	}
	return out, nil
}

// numberStatus is what the network answered about phone (r; zero: nothing).
func (e *Engine) numberStatus(ctx context.Context, cl client, phone string, r types.IsOnWhatsAppResponse) engine.NumberStatus {
	st := engine.NumberStatus{Phone: phone, OnNetwork: r.IsIn}
	if !r.IsIn {
		return st
	}
	e.mem.setOnNetwork(phone, true)
	pn := types.NewJID(phone, types.DefaultUserServer)
	if r.PhoneNumber.Server == types.DefaultUserServer {
		pn = r.PhoneNumber.ToNonAD()
	}
	st.ChatID = chatID(pn)
	lid := types.EmptyJID
	if r.JID.Server == types.HiddenUserServer {
		lid = r.JID.ToNonAD()
	} else if alt, err := cl.AltJID(ctx, pn); err == nil && alt.Server == types.HiddenUserServer {
		lid = alt.ToNonAD()
	}
	if !lid.IsEmpty() {
		e.lids.learn(lid, pn)
		st.LID = chatID(lid)
	}
	if v := r.VerifiedName; v != nil {
		st.IsBusiness = true
		if v.Details != nil {
			st.BusinessName = v.Details.GetVerifiedName()
		}
	}
	return st
}

// Block implements engine.Blocker with whatsmeow's UpdateBlocklist.
func (e *Engine) Block(ctx context.Context, chatID string) error {
	return e.updateBlocklist(ctx, chatID, events.BlocklistChangeActionBlock)
}

// Unblock implements engine.Blocker with whatsmeow's UpdateBlocklist.
func (e *Engine) Unblock(ctx context.Context, chatID string) error {
	return e.updateBlocklist(ctx, chatID, events.BlocklistChangeActionUnblock)
}

func (e *Engine) updateBlocklist(ctx context.Context, id string, action events.BlocklistChangeAction) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	j, err := parseChat(id)
	if err != nil {
		return err
	}
	if _, err := cl.UpdateBlocklist(ctx, j, action); err != nil {
		return fmt.Errorf("gateway: %s %s: %w", action, id, err)
	}
	return nil
}

// Blocklist implements engine.Blocker with whatsmeow's GetBlocklist; the
// network lists LIDs, answered by phone number when the store knows it.
func (e *Engine) Blocklist(ctx context.Context) ([]string, error) {
	cl, err := e.ready()
	if err != nil {
		return nil, err
	}
	bl, err := cl.GetBlocklist(ctx)
	if err != nil {
		return nil, fmt.Errorf("gateway: block list: %w", err)
	}
	out := make([]string, 0, len(bl.JIDs))
	for _, j := range bl.JIDs {
		out = append(out, e.pnChatID(ctx, cl, j.ToNonAD(), types.EmptyJID))
	}
	return out, nil
}

// blocklistEvents maps the network's block-list changes to EventBlock events.
// A change of the whole list ("modify", no changes listed) reports nothing: the
// list reads fresh from the network (Blocklist).
func (e *Engine) blocklistEvents(ctx context.Context, cl client, v *events.Blocklist) []engine.Event {
	var out []engine.Event
	for _, c := range v.Changes {
		id := e.pnChatID(ctx, cl, c.JID.ToNonAD(), types.EmptyJID)
		blocked := c.Action == events.BlocklistChangeActionBlock
		if !blocked && c.Action != events.BlocklistChangeActionUnblock {
			continue
		}
		out = append(out, engine.Event{ID: fmt.Sprintf("wa_block_%s_%s_%s", id, c.Action, v.DHash), Type: engine.EventBlock,
			Block: &engine.BlockChange{ChatID: id, Blocked: blocked}})
	}
	return out
}

// The gateway serves the contact operations.
var (
	_ engine.NumberChecker = (*Engine)(nil)
	_ engine.Blocker       = (*Engine)(nil)
)
