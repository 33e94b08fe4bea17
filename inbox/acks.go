package inbox

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/viewer"
)

// Acks of different messages commute: each moves its own message, and what the
// first proof of delivery adds (a contact, the chat's summary) is the same in any
// order. So the consecutive acks of a claimed batch, each of another message, are
// applied together: one statement moves the messages of a workspace from one
// status to the next (messaging.MoveEach), one insert records their events, and one
// statement each adds the new contacts and chat summaries. An ack of a message
// the batch has not read, or one that asks more than a move (a failure's reason,
// the engine the message went through), or of a message the dispatch still holds,
// is applied alone (applyAck), in its place among them.

// ackRun gathers consecutive acks of a batch, of distinct messages.
type ackRun struct {
	evs  []engine.Event
	keys map[string]bool // sentKey of each
}

// add adds ev to the run, or reports false when the run holds an ack of the
// same message: the run must be applied first.
func (r *ackRun) add(ev engine.Event) bool {
	k := sentKey(ev.WorkspaceID, ev.Key.Serialized())
	if r.keys[k] {
		return false
	}
	if r.keys == nil {
		r.keys = map[string]bool{}
	}
	r.keys[k] = true
	r.evs = append(r.evs, ev)
	return true
}

// apply applies the run's acks (see applyAcks) and empties it.
func (r *ackRun) apply(ctx context.Context, tx *ent.Tx, sent sentMessages) error {
	if len(r.evs) == 0 {
		return nil
	}
	err := applyAcks(ctx, tx, r.evs, sent)
	r.evs = r.evs[:0]
	clear(r.keys)
	return err
}

// applyAcks applies acks of distinct messages that sent holds: together
// where they need nothing but a move, the others one by one.
func applyAcks(ctx context.Context, tx *ent.Tx, evs []engine.Event, sent sentMessages) error {
	var steps []messaging.Step
	var alone, together []engine.Event
	for _, ev := range evs {
		m := sent[sentKey(ev.WorkspaceID, ev.Key.Serialized())]
		to := messaging.StatusForAck(ev.Ack)
		switch {
		case m == nil, to == messaging.StatusFailed, m.EngineID == "" && ev.EngineID != "",
			messaging.StatusOf(m) == messaging.StatusPending, messaging.StatusOf(m) == messaging.StatusSending:
			alone = append(alone, ev)
		default:
			steps = append(steps, messaging.Step{M: m, To: to, At: ev.At})
			together = append(together, ev)
		}
	}
	if len(steps) == 1 {
		// One is applied alone: the same statements, and applyAck retries a race.
		alone, steps = append(alone, together...), nil
	}
	for _, ev := range alone {
		if err := applyAck(viewer.WorkspaceContext(ctx, ev.WorkspaceID), tx, ev, sent); err != nil {
			return err
		}
	}
	if len(steps) == 0 {
		return nil
	}
	moved, err := messaging.MoveEach(viewer.SystemContext(ctx), tx, steps)
	if err != nil {
		return err
	}
	delivered := map[string][]*ent.Message{} // by workspace: the first proofs of delivery
	var workspaces []string
	for i, next := range moved {
		if next == nil {
			continue
		}
		sent[sentKey(next.WorkspaceID, next.WaSerialized)] = next // a later ack of the batch starts from here
		if next.ReceivedAt != nil && steps[i].M.ReceivedAt == nil {
			if delivered[next.WorkspaceID] == nil {
				workspaces = append(workspaces, next.WorkspaceID)
			}
			delivered[next.WorkspaceID] = append(delivered[next.WorkspaceID], next)
		}
	}
	for _, ws := range workspaces {
		wctx := viewer.WorkspaceContext(ctx, ws)
		if err := knowContacts(wctx, tx, delivered[ws]); err != nil {
			return err
		}
		if err := touchChats(wctx, tx, delivered[ws], false); err != nil {
			return err
		}
	}
	return nil
}
