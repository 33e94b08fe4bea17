package gateway

import (
	"context"
	"sync"

	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
)

// LIDs: WhatsApp addresses a user by phone number or by LID. Whenever an event
// gives both forms of a user (a message's SenderAlt or RecipientAlt, a group
// participant with its phone number, whatsmeow's LID store), the engine reports
// the mapping to the sink before the events it came with: a history event with
// the contact {id: <digits>@c.us, lid: <digits>@lid}. The store then keeps one
// chat per person (docs/conversations.md, "LIDs"). Each mapping is reported
// once per process (the last memoryLimit), again after the sink refused it.

// reportTries hands evs to the sink, trying up to tries times (0: no limit),
// after the mappings learned meanwhile.
func (e *Engine) reportTries(ctx context.Context, tries int, evs []engine.Event) bool {
	if len(evs) == 0 {
		return true
	}
	// The mappings learned while mapping evs go first, so that the store knows
	// the number of a LID before the messages that came by it.
	lids := e.lids.take()
	if len(lids) > 0 {
		first := evs[0].At // the mappings come at the time of the first event
		for i := range lids {
			lids[i].At = first
		}
		evs = append(lids, evs...)
	}
	ok := e.deliverTries(ctx, tries, evs)
	if !ok {
		e.lids.unreport(lids)
	}
	return ok
}

// lidBook is the mappings the engine learned: those to report, and those
// reported.
type lidBook struct {
	mu       sync.Mutex
	pending  []engine.ContactInfo
	reported *fifo[string] // LID -> phone-number chat id
}

// learn notes that the user lid (a LID JID) is the phone number pn.
func (b *lidBook) learn(lid, pn types.JID) {
	if lid.Server != types.HiddenUserServer || pn.Server != types.DefaultUserServer || lid.User == "" || pn.User == "" {
		return
	}
	c := engine.ContactInfo{ID: chatID(pn), LID: chatID(lid)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reported == nil {
		b.reported = newFIFO[string](memoryLimit)
	}
	if was, ok := b.reported.get(c.LID); ok && was == c.ID {
		return
	}
	b.reported.put(c.LID, c.ID)
	b.pending = append(b.pending, c)
}

// take returns the events of the mappings learned and not reported yet, one
// each, and forgets them as pending.
func (b *lidBook) take() []engine.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	evs := make([]engine.Event, 0, len(b.pending))
	for _, c := range b.pending {
		evs = append(evs, engine.Event{ID: "wa_lid_" + c.LID + "_" + c.ID, Type: engine.EventHistory,
			History: &engine.History{Contacts: []engine.ContactInfo{c}}})
	}
	b.pending = nil
	return evs
}

// unreport makes the mappings of evs (taken, then refused by the sink) pending
// again.
func (b *lidBook) unreport(evs []engine.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ev := range evs {
		if ev.History != nil && len(ev.History.Contacts) == 1 && ev.History.Contacts[0].LID != "" {
			b.pending = append(b.pending, ev.History.Contacts[0])
		}
	}
}
