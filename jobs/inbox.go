package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/viewer"
)

// The inbox is the durable path of what engines report. HandleEvent stores an
// event as it arrives (one insert, deduplicated by the engine's event id); the
// applier claims stored events in batches with a lease token, applies each one in
// the same transaction that marks it applied (so it takes effect exactly once), and
// retries a failure with backoff for hours before it gives up and says why.
const (
	inboxBatch = 200
	// inboxLease is how long a claimed batch is reserved for its applier; an
	// applier that dies leaves its events to be claimed again after it.
	inboxLease = time.Minute
	// InboxMaxAttempts is how many times an event is tried before it is dead.
	InboxMaxAttempts = 16
)

// inboxBackoff is the wait after the n-th failed attempt: 1s doubling to 15 min;
// InboxMaxAttempts attempts span about two hours.
func inboxBackoff(n int) time.Duration {
	return min(time.Second<<min(n-1, 10), 15*time.Minute)
}

// HandleEvent implements engine.Sink: it stores what an engine observed in the
// inbox. Once it returns nil the event will be applied, whatever happens to this
// process; an error means it was not stored and the engine should report it again.
func (h *Handlers) HandleEvent(ctx context.Context, ev engine.Event) error {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	dedupe := ev.ID
	if dedupe == "" {
		dedupe = switchboard.NewID("ev")
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("jobs: encode %s event: %w", ev.Type, err)
	}
	ctx = viewer.WorkspaceContext(ctx, ev.WorkspaceID)
	err = h.Client.InboxEvent.Create().SetDedupeKey(dedupe).SetType(string(ev.Type)).
		SetSubject(ev.Subject()).SetPayload(payload).SetAt(ev.At).Exec(ctx)
	if ent.IsConstraintError(err) {
		return nil // reported before: stored once
	} else if err != nil {
		return fmt.Errorf("jobs: store %s event: %w", ev.Type, err)
	}
	h.wakeInbox()
	return nil
}

// wakeInbox tells the applier that an event is waiting.
func (h *Handlers) wakeInbox() {
	h.inboxOnce.Do(func() { h.inboxWake = make(chan struct{}, 1) })
	select {
	case h.inboxWake <- struct{}{}:
	default:
	}
}

// RunInbox applies stored engine events until ctx is done: at once when one
// arrives in this process, else polling every min while there is work and
// backing off to max when there is none.
func (h *Handlers) RunInbox(ctx context.Context, min, max time.Duration) {
	h.inboxOnce.Do(func() { h.inboxWake = make(chan struct{}, 1) })
	poll.Loop(ctx, min, max, h.inboxWake, func(ctx context.Context) bool {
		found := false
		for ctx.Err() == nil {
			// A claimed batch is finished even when ctx ends meanwhile (a shutdown):
			// it is bounded, and cutting it off would count failures that are none.
			n, err := h.ApplyInboxOnce(context.WithoutCancel(ctx), time.Now())
			if err != nil && ctx.Err() == nil {
				slog.Error("inbox: claim failed", "err", err)
			}
			found = found || n > 0
			if n < inboxBatch || err != nil {
				break
			}
		}
		return found
	})
}

// ApplyInboxOnce claims up to one batch of due events and applies them in the
// order the network observed them. It returns how many it claimed.
func (h *Handlers) ApplyInboxOnce(ctx context.Context, now time.Time) (int, error) {
	sys := viewer.SystemContext(ctx)
	ids, err := h.Client.InboxEvent.Query().Where(claimable(now), noEarlierPending(now)).
		Order(ent.Asc(inboxevent.FieldAt), ent.Asc(inboxevent.FieldCreatedAt)).
		Limit(inboxBatch).IDs(sys)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	token := switchboard.RandomToken(10)
	if _, err := h.Client.InboxEvent.Update().Where(inboxevent.IDIn(ids...), claimable(now)).
		SetLeaseToken(token).SetLeaseUntil(now.Add(inboxLease)).Save(sys); err != nil {
		return 0, err
	}
	claimed, err := h.Client.InboxEvent.Query().Where(inboxevent.LeaseToken(token)).
		Order(ent.Asc(inboxevent.FieldAt), ent.Asc(inboxevent.FieldCreatedAt)).All(sys)
	if err != nil {
		return 0, err
	}
	failed := map[string]time.Time{} // subject -> when its failed event is tried again
	for _, row := range claimed {
		if next, ok := failed[row.Subject]; ok {
			// Keep the order of the subject: wait for the event before this one.
			h.releaseEvent(sys, row, token, next, "waiting for an earlier event of "+row.Subject, false)
			continue
		}
		err := h.applyRow(ctx, row, token)
		if errors.Is(err, errEarlierFirst) {
			// Claimed beside an earlier event of its subject that another applier
			// holds: try again shortly, after it.
			next := time.Now().Add(inboxWait)
			failed[row.Subject] = next
			h.releaseEvent(sys, row, token, next, err.Error(), false)
			continue
		}
		if err != nil {
			n := row.Attempts + 1
			next := time.Now().Add(inboxBackoff(n))
			failed[row.Subject] = next
			dead := n >= InboxMaxAttempts
			h.releaseEvent(sys, row, token, next, err.Error(), true)
			if dead {
				slog.Error("inbox: event given up", "event", row.ID, "type", row.Type, "subject", row.Subject, "attempts", n, "err", err)
			} else {
				slog.Warn("inbox: apply failed; will retry", "event", row.ID, "type", row.Type, "attempt", n,
					"retry_in", inboxBackoff(n), "err", err)
			}
		}
	}
	return len(ids), nil
}

// claimable selects events that are due and not held by a live lease.
func claimable(now time.Time) predicate.InboxEvent {
	return inboxevent.And(inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil(), inboxevent.NextAttemptAtLTE(now),
		inboxevent.Or(inboxevent.LeaseUntilIsNil(), inboxevent.LeaseUntilLT(now)))
}

// noEarlierPending leaves out events whose subject has an earlier event that is
// still waiting (for its retry, or in another applier's lease), so that the events
// of one subject apply in order.
func noEarlierPending(now time.Time) predicate.InboxEvent {
	return func(s *sql.Selector) {
		e2 := sql.Table(inboxevent.Table).As("earlier")
		s.Where(sql.Not(sql.Exists(sql.Select(e2.C(inboxevent.FieldID)).From(e2).Where(sql.And(
			sql.ColumnsEQ(e2.C(inboxevent.FieldSubject), s.C(inboxevent.FieldSubject)),
			sql.ColumnsLT(e2.C(inboxevent.FieldAt), s.C(inboxevent.FieldAt)),
			sql.IsNull(e2.C(inboxevent.FieldAppliedAt)),
			sql.IsNull(e2.C(inboxevent.FieldDeadAt)),
			sql.Or(sql.GT(e2.C(inboxevent.FieldNextAttemptAt), now), sql.GTE(e2.C(inboxevent.FieldLeaseUntil), now)),
		)))))
	}
}

var (
	errLeaseLost    = errors.New("jobs: inbox lease lost")
	errEarlierFirst = errors.New("jobs: an earlier event of the same subject is not applied yet")
)

// inboxWait is how long an event waits for an earlier one of its subject.
const inboxWait = 200 * time.Millisecond

// applyRow applies one claimed event and marks it applied, in one transaction.
func (h *Handlers) applyRow(ctx context.Context, row *ent.InboxEvent, token string) error {
	var ev engine.Event
	if err := json.Unmarshal(row.Payload, &ev); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	ctx = viewer.WorkspaceContext(ctx, row.WorkspaceID)
	ev.WorkspaceID = row.WorkspaceID
	return messaging.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		// The claim alone cannot keep a subject in order: two appliers may claim
		// an event and the one before it at the same moment. What counts is
		// whether every earlier event is applied (or given up) when this commits.
		earlier, err := tx.InboxEvent.Query().Where(inboxevent.Subject(row.Subject), inboxevent.AtLT(row.At),
			inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil()).Exist(ctx)
		if err != nil {
			return err
		} else if earlier {
			return errEarlierFirst
		}
		if err := h.apply(ctx, tx, ev); err != nil {
			return err
		}
		n, err := tx.InboxEvent.Update().Where(inboxevent.ID(row.ID), inboxevent.LeaseToken(token)).
			SetAppliedAt(time.Now()).SetAttempts(row.Attempts + 1).SetLeaseToken("").ClearLeaseUntil().Save(ctx)
		if err == nil && n == 0 {
			err = errLeaseLost
		}
		return err
	})
}

// releaseEvent gives a claimed event back for a later attempt at next. A failure
// counts as an attempt, and the last allowed attempt makes the event dead.
func (h *Handlers) releaseEvent(ctx context.Context, row *ent.InboxEvent, token string, next time.Time, reason string, failure bool) {
	u := h.Client.InboxEvent.Update().Where(inboxevent.ID(row.ID), inboxevent.LeaseToken(token)).
		SetLeaseToken("").ClearLeaseUntil().SetNextAttemptAt(next).SetLastError(truncate(reason, 500))
	if failure {
		u.AddAttempts(1)
		if row.Attempts+1 >= InboxMaxAttempts {
			u.SetDeadAt(time.Now())
		}
	}
	if err := u.Exec(ctx); err != nil {
		// The lease runs out by itself and the event is claimed again.
		slog.Error("inbox: release failed", "event", row.ID, "err", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
