package messaging

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/view"
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
	for i, m := range won {
		next := *m
		k := keys[m.ID]
		next.Status, next.UpdatedAt, next.ClaimToken, next.DispatchAttempts = string(StatusSending), now, token, m.DispatchAttempts+1
		next.WaID, next.WaParticipant, next.WaSerialized = k.ID, k.Participant, k.Serialized()
		for _, typ := range eventsFor(StatusOf(m), StatusSending) {
			if err := outbox.RecordFor(ctx, tx, m.WorkspaceID, typ, view.NewMessage(&next)); err != nil {
				return nil, err
			}
		}
		out[i] = &next
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
