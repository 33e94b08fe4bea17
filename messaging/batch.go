package messaging

import (
	"context"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// The batch moves are Move for many messages in one statement each: the claim of
// due messages (pending -> sending) and their confirmation (sending -> confirmed),
// the two steps every sent message takes. They keep Move's rules: compare-and-set
// on the status (and the claim token), the same fields, the same events.

// Claim moves the messages of ms that are still pending to sending in one
// statement, under one new claim token, and records the network key key(m) of
// each (as Move with WithKey does). It returns the messages it claimed, as Move
// would; those missing were moved by another writer first.
func Claim(ctx context.Context, tx *ent.Tx, ms []*ent.Message, key func(*ent.Message) engine.Key) ([]*ent.Message, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	now := time.Now()
	token := switchboard.RandomToken(10)
	ids := make([]string, len(ms))
	keys := make(map[string]engine.Key, len(ms))
	for i, m := range ms {
		ids[i], keys[m.ID] = m.ID, key(m)
	}
	// Each row gets its own key: CASE id WHEN ... THEN ... END.
	perRow := func(value func(engine.Key) string) sql.Querier {
		return sql.ExprFunc(func(b *sql.Builder) {
			b.WriteString("CASE ").Ident(message.FieldID)
			for _, id := range ids {
				b.WriteString(" WHEN ").Arg(id).WriteString(" THEN ").Arg(value(keys[id]))
			}
			b.WriteString(" END")
		})
	}
	n, err := tx.Message.Update().Where(message.IDIn(ids...), storage.FilterOnly(StatusIs(StatusPending))).
		SetStatus(string(StatusSending)).SetUpdatedAt(now).SetClaimToken(token).AddDispatchAttempts(1).
		Modify(func(u *sql.UpdateBuilder) {
			u.Set(message.FieldWaID, perRow(func(k engine.Key) string { return k.ID }))
			u.Set(message.FieldWaParticipant, perRow(func(k engine.Key) string { return k.Participant }))
			u.Set(message.FieldWaSerialized, perRow(func(k engine.Key) string { return k.Serialized() }))
		}).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("messaging: claim %d messages: %w", len(ms), err)
	}
	won := ms
	if n < len(ms) {
		got, err := tx.Message.Query().Where(message.IDIn(ids...), message.ClaimToken(token)).IDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("messaging: claim %d messages: %w", len(ms), err)
		}
		mine := make(map[string]bool, len(got))
		for _, id := range got {
			mine[id] = true
		}
		won = nil
		for _, m := range ms {
			if mine[m.ID] {
				won = append(won, m)
			}
		}
	}
	out := make([]*ent.Message, len(won))
	var events []outbox.Pending
	for i, m := range won {
		next := *m
		k := keys[m.ID]
		next.Status, next.UpdatedAt, next.ClaimToken, next.DispatchAttempts = string(StatusSending), now, token, m.DispatchAttempts+1
		next.WaID, next.WaParticipant, next.WaSerialized = k.ID, k.Participant, k.Serialized()
		events = append(events, eventsOf(StatusOf(m), &next)...)
		out[i] = &next
	}
	if err := outbox.RecordAll(ctx, tx, events); err != nil {
		return nil, err
	}
	return out, nil
}

// Confirm moves the messages of ms, all sending under the claim token they were
// claimed with together, to confirmed at at, in one statement per token and
// engine, and takes them out of the queue. A message's EngineID is the engine
// it was sent through: a message without an engine of its own (the one it
// named, or one an ack recorded first) records it in the same statement. A
// message moved on meanwhile (an ack came first, the claim was released) is
// left as it is. The move causes no event (see eventsFor), so none is recorded.
func Confirm(ctx context.Context, tx *ent.Tx, ms []*ent.Message, at time.Time) error {
	type group struct{ token, engine string }
	groups := map[group][]string{}
	for _, m := range ms {
		if StatusOf(m) != StatusSending {
			return fmt.Errorf("messaging: confirm %s: it is %s, not sending", m.ID, m.Status)
		}
		g := group{m.ClaimToken, m.EngineID}
		groups[g] = append(groups[g], m.ID)
	}
	now := time.Now()
	for g, ids := range groups {
		u := tx.Message.Update().Where(message.IDIn(ids...), storage.FilterOnly(StatusIs(StatusSending), message.ClaimToken(g.token))).
			SetStatus(string(StatusConfirmed)).SetUpdatedAt(now).SetConfirmedAt(at).SetClaimToken("")
		if g.engine != "" {
			engineID := g.engine
			u.Modify(func(b *sql.UpdateBuilder) {
				b.Set(message.FieldEngineID, sql.ExprFunc(func(b *sql.Builder) {
					b.WriteString("COALESCE(NULLIF(").Ident(message.FieldEngineID).WriteString(", ''), ").Arg(engineID).WriteString(")")
				}))
			})
		}
		if err := u.Exec(ctx); err != nil {
			return fmt.Errorf("messaging: confirm %d messages: %w", len(ids), err)
		}
	}
	return nil
}

// Step is a move for MoveEach: the message M, as read, to status To at time At.
type Step struct {
	M  *ent.Message
	To Status
	At time.Time
}

// ErrMovedMeanwhile says that a message MoveEach was to move was no longer as
// it was read: the transaction must be rolled back, and the moves made one by
// one (MoveLatest).
var ErrMovedMeanwhile = errors.New("messaging: a message moved meanwhile")

// MoveEach is Move for many messages that no other writer moves at the same time
// (the acks of messages the network has, which one applier applies in order),
// each at its own time: the messages of a workspace that go from one status to
// another are moved in one statement, and the events of every move are recorded
// in one insert. A step that is no move forward is left out (nil in the result);
// a message still in the dispatch's hands (pending or sending) is not for
// MoveEach. It returns the moved messages in the order of steps, or
// ErrMovedMeanwhile when one was no longer as it was read.
func MoveEach(ctx context.Context, tx *ent.Tx, steps []Step) ([]*ent.Message, error) {
	type group struct {
		workspaceID string
		from, to    Status
	}
	var order []group
	groups := map[group][]int{}
	for i, st := range steps {
		from := StatusOf(st.M)
		if from == StatusPending || from == StatusSending {
			return nil, fmt.Errorf("messaging: move %s: it is %s, still the dispatch's", st.M.ID, from)
		}
		if !CanMove(from, st.To) {
			continue
		}
		g := group{st.M.WorkspaceID, from, st.To}
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	now := time.Now()
	out := make([]*ent.Message, len(steps))
	var events []outbox.Pending
	for _, g := range order {
		idx := groups[g]
		ids := make([]string, len(idx))
		for k, i := range idx {
			ids[k] = steps[i].M.ID
			next := *steps[i].M
			next.Status, next.UpdatedAt, next.Queued = string(g.to), now, false
			out[i] = &next
		}
		u := tx.Message.Update().Where(message.IDIn(ids...), storage.FilterOnly(StatusIs(g.from))).
			SetStatus(string(g.to)).SetUpdatedAt(now)
		for _, st := range stampsOf(g.to) {
			// Each message gets its own time: CASE WHEN id = ... THEN ... ELSE column END,
			// the column's own value for the messages that keep theirs.
			var set []int
			for _, i := range idx {
				if field := st.field(out[i]); *field == nil || st.always {
					at := steps[i].At
					*field = &at
					set = append(set, i)
				}
			}
			if len(set) == 0 {
				continue
			}
			column := st.column
			u.Modify(func(b *sql.UpdateBuilder) {
				b.Set(column, sql.ExprFunc(func(b *sql.Builder) {
					b.WriteString("CASE")
					for _, i := range set {
						b.WriteString(" WHEN ").Ident(message.FieldID).WriteString(" = ").Arg(steps[i].M.ID).
							WriteString(" THEN ").Arg(steps[i].At)
					}
					b.WriteString(" ELSE ").Ident(column).WriteString(" END")
				}))
			})
		}
		n, err := u.Save(viewer.WorkspaceContext(ctx, g.workspaceID))
		if err != nil {
			return nil, fmt.Errorf("messaging: move %d messages to %s: %w", len(ids), g.to, err)
		} else if n != len(ids) {
			return nil, ErrMovedMeanwhile
		}
		for _, i := range idx {
			events = append(events, eventsOf(g.from, out[i])...)
		}
	}
	if err := outbox.RecordAll(ctx, tx, events); err != nil {
		return nil, err
	}
	return out, nil
}
