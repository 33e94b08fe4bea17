package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// Run applies stored engine events until ctx is done, waiting between passes
// as p says. With p.Sweep set (a wake.Listener passes the inserts of every
// replica to WakeChannel), a pass applies what is due until less than a batch
// is left, and the wait after it lasts until the next retry or lease end comes
// due, at most p.Sweep. Without it, the wait is p.Min while there is work and
// a doubling poll up to p.Max when there is none. An event stored in this
// process wakes it at once. Run fills in p.Wake and p.Due.
func (h *Inbox) Run(ctx context.Context, p poll.Pace) {
	p.Wake, p.Due = h.wakeup(), h.nextDue
	poll.Run(ctx, p, func(ctx context.Context) poll.Outcome {
		found := false
		for ctx.Err() == nil {
			// A claimed batch is finished even when ctx ends meanwhile (a shutdown):
			// it is bounded, and cutting it off would count failures that are none.
			n, err := h.ApplyOnce(context.WithoutCancel(ctx), time.Now())
			if err != nil && ctx.Err() == nil {
				slog.Error("inbox: claim failed", "err", err)
				if !found {
					return poll.Failed
				}
			}
			found = found || n > 0
			if n < inboxBatch || err != nil {
				break
			}
		}
		// A pass that claimed less than a batch left nothing due behind it: with
		// p.Sweep set, what comes due next is asked of p.Due, not looked for by
		// another pass at once.
		if found && p.Sweep <= 0 {
			return poll.Found
		}
		return poll.Idle
	})
}

// WakeChannel is the channel that wakes Run, for a wake.Listener to signal.
func (h *Inbox) WakeChannel() chan<- struct{} { return h.wakeup() }

// nextDue is the earliest time after now at which a pending event comes due by
// the clock: a retry, or the end of a lease (a leased event's next attempt is
// its lease's end), which is also when the events waiting behind it in its
// subject can go. The zero time when there is none.
func (h *Inbox) nextDue(ctx context.Context, since time.Time) (time.Time, error) {
	rows, err := h.Client.InboxEvent.Query().
		Where(inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil(), inboxevent.NextAttemptAtGT(since)).
		Order(ent.Asc(inboxevent.FieldNextAttemptAt)).Limit(1).
		Select(inboxevent.FieldNextAttemptAt).All(viewer.SystemContext(ctx))
	if err != nil || len(rows) == 0 {
		return time.Time{}, err
	}
	return rows[0].NextAttemptAt, nil
}

// ApplyOnce claims up to one batch of due events and applies them in the
// order the network observed them. It returns how many it claimed.
func (h *Inbox) ApplyOnce(ctx context.Context, now time.Time) (int, error) {
	// An applied event whose commit a crash loses is applied again: it is stored.
	ctx = storage.RelaxedCommit(ctx)
	sys := viewer.SystemContext(ctx)
	ids, err := h.dueInOrder(sys, now)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	token := switchboard.RandomToken(10)
	// The lease also moves the next attempt to its end: a leased event waits, as
	// one waiting for its retry does, and both are found in one index range.
	until := now.Add(inboxLease)
	if _, err := h.Client.InboxEvent.Update().Where(inboxevent.IDIn(ids...), storage.FilterOnly(claimable(now))).
		SetLeaseToken(token).SetLeaseUntil(until).SetNextAttemptAt(until).Save(sys); err != nil {
		return 0, err
	}
	claimed, err := h.Client.InboxEvent.Query().Where(inboxevent.IDIn(ids...), inboxevent.LeaseToken(token)).
		Order(ent.Asc(inboxevent.FieldAt), ent.Asc(inboxevent.FieldCreatedAt)).All(sys)
	if err != nil {
		return 0, err
	}
	// The batch is split by subject into parts applied side by side, each in one
	// transaction (a subject's events stay in one part, in order). When any of a
	// part cannot apply (an event fails, or waits for an earlier one), its events
	// are applied one by one, so that one event's trouble holds up only its subject.
	parts := make([][]*ent.InboxEvent, partsFor(len(claimed)))
	for _, row := range claimed {
		i := subjectPart(row.Subject, len(parts))
		parts[i] = append(parts[i], row)
	}
	var wg sync.WaitGroup
	for _, part := range parts {
		if len(part) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.applyRows(ctx, part, token); err != nil {
				h.applyOneByOne(ctx, part, token)
			}
		}()
	}
	wg.Wait()
	return len(ids), nil
}

// inboxParts is how many parts of a claimed batch apply side by side, each
// of at least partSize events: a smaller batch is applied whole, its acks
// together (acks.go), rather than in parts of one or two events each.
const (
	inboxParts = 4
	partSize   = 64
)

// partsFor is how many parts a batch of n events is applied in.
func partsFor(n int) int {
	return min(max(n/partSize, 1), inboxParts)
}

// subjectPart is which of parts parts of a batch the events of an order key go
// to: by the workspace and the chat the subject belongs to, so that parts applied
// side by side seldom write the same rows (a chat, its contact) and wait on each
// other.
// A bare subject (stored before order keys were scoped) goes by its chat alone.
func subjectPart(key string, parts int) int {
	workspace, _, subject, _ := engine.ParseOrderKey(key)
	chat := subject
	if k, ok := strings.CutPrefix(subject, "message:"); ok {
		if k, ok := engine.ParseKey(k); ok {
			chat = k.Remote
		}
	} else if _, id, ok := strings.Cut(subject, ":"); ok {
		chat = id
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(workspace))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(chat))
	return int(h.Sum32() % uint32(parts))
}

// applyOneByOne applies claimed events each in its own transaction. An event that
// fails is released for a retry with backoff, and the later events of its subject
// wait for it.
func (h *Inbox) applyOneByOne(ctx context.Context, claimed []*ent.InboxEvent, token string) {
	sys := viewer.SystemContext(ctx)
	failed := map[string]time.Time{} // subject -> when its failed event is tried again
	for _, row := range claimed {
		if next, ok := failed[row.Subject]; ok {
			// Keep the order of the subject: wait for the event before this one.
			h.releaseEvent(sys, row, token, next, "waiting for an earlier event of "+engine.SubjectOf(row.Subject), false)
			continue
		}
		err := h.applyRows(ctx, []*ent.InboxEvent{row}, token)
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
			next := time.Now().Add(backoff(n))
			failed[row.Subject] = next
			dead := n >= MaxAttempts
			h.releaseEvent(sys, row, token, next, err.Error(), true)
			if dead {
				slog.Error("inbox: event given up", "event", row.ID, "type", row.Type, "subject", row.Subject, "attempts", n, "err", err)
			} else {
				slog.Warn("inbox: apply failed; will retry", "event", row.ID, "type", row.Type, "attempt", n,
					"retry_in", backoff(n), "err", err)
			}
		}
	}
}

// claimable selects events that are due and not held by a live lease.
func claimable(now time.Time) predicate.InboxEvent {
	return inboxevent.And(inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil(), inboxevent.NextAttemptAtLTE(now),
		inboxevent.Or(inboxevent.LeaseUntilIsNil(), inboxevent.LeaseUntilLT(now)))
}

// claimPages bounds the pages of claimable events one claim reads when the
// oldest ones wait behind earlier events of their subjects.
const claimPages = 10

// dueInOrder returns the ids of up to inboxBatch claimable events, oldest first,
// leaving out those whose subject has an earlier event still waiting (for its
// retry, or in another applier's lease), so that the events of one subject apply
// in order. The waiting events are read once and the check is made here: written
// as one anti-join, PostgreSQL planned it from the queue table's statistics of a
// quieter moment as a scan of every pending event per candidate (1.9 s a claim
// with 14,000 events pending, the acks of a 10,000-contact campaign). The pages
// are read in one transaction that reads them from the index in their order
// (storage.InIndexOrder), not by sorting every pending event.
func (h *Inbox) dueInOrder(ctx context.Context, now time.Time) ([]string, error) {
	tx, err := h.Client.Tx(storage.InIndexOrder(ctx))
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	waiting, err := tx.InboxEvent.Query().
		Where(inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil(), inboxevent.NextAttemptAtGT(now)).
		Select(inboxevent.FieldSubject, inboxevent.FieldAt).All(ctx)
	if err != nil {
		return nil, err
	}
	first := make(map[string]time.Time, len(waiting)) // subject -> its earliest waiting event
	for _, w := range waiting {
		if at, ok := first[w.Subject]; !ok || w.At.Before(at) {
			first[w.Subject] = w.At
		}
	}
	var ids []string
	var after *ent.InboxEvent
	for page := 0; page < claimPages && len(ids) < inboxBatch; page++ {
		q := tx.InboxEvent.Query().Where(claimable(now))
		if after != nil {
			q.Where(inboxevent.Or(inboxevent.AtGT(after.At),
				inboxevent.And(inboxevent.At(after.At), inboxevent.CreatedAtGT(after.CreatedAt)),
				inboxevent.And(inboxevent.At(after.At), inboxevent.CreatedAt(after.CreatedAt), inboxevent.IDGT(after.ID))))
		}
		rows, err := q.Order(ent.Asc(inboxevent.FieldAt), ent.Asc(inboxevent.FieldCreatedAt), ent.Asc(inboxevent.FieldID)).
			Limit(inboxBatch).Select(inboxevent.FieldID, inboxevent.FieldSubject, inboxevent.FieldAt, inboxevent.FieldCreatedAt).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if at, ok := first[r.Subject]; ok && at.Before(r.At) {
				continue
			}
			if ids = append(ids, r.ID); len(ids) == inboxBatch {
				break
			}
		}
		if len(rows) < inboxBatch {
			break
		}
		after = rows[len(rows)-1]
	}
	return ids, tx.Commit()
}

var (
	errLeaseLost    = errors.New("inbox: lease lost")
	errEarlierFirst = errors.New("inbox: an earlier event of the same subject is not applied yet")
)

// inboxWait is how long an event waits for an earlier one of its subject.
const inboxWait = 200 * time.Millisecond

// applyRows applies claimed events, in their order, and marks them applied, all in
// one transaction; any error undoes all of it.
func (h *Inbox) applyRows(ctx context.Context, rows []*ent.InboxEvent, token string) error {
	subjects := make([]string, 0, len(rows))
	latest := rows[0].At
	for _, row := range rows {
		subjects = append(subjects, row.Subject)
		if row.At.After(latest) {
			latest = row.At
		}
	}
	sys := viewer.SystemContext(ctx)
	ids := make([]string, len(rows))
	evs := make([]engine.Event, len(rows))
	for i, row := range rows {
		if err := json.Unmarshal(row.Payload, &evs[i]); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		evs[i].WorkspaceID, ids[i] = row.WorkspaceID, row.ID
	}
	if err := h.reserveMedia(ctx, rows, evs, token); err != nil {
		return err
	}
	var due []fetch
	err := storage.WithTx(sys, h.Client, func(tx *ent.Tx) error {
		due = due[:0]
		// The claim alone cannot keep a subject in order: two appliers may claim
		// an event and the one before it at the same moment. What counts is
		// whether an earlier event of the subject, held elsewhere or waiting for
		// its retry, is still unapplied when this commits.
		others, err := tx.InboxEvent.Query().Where(inboxevent.SubjectIn(subjects...), inboxevent.AtLT(latest),
			inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil(),
			inboxevent.Or(inboxevent.LeaseTokenIsNil(), inboxevent.LeaseTokenNEQ(token))).
			Select(inboxevent.FieldSubject, inboxevent.FieldAt).All(sys)
		if err != nil {
			return err
		}
		earliest := map[string]time.Time{}
		for _, o := range others {
			if at, ok := earliest[o.Subject]; !ok || o.At.Before(at) {
				earliest[o.Subject] = o.At
			}
		}
		for _, row := range rows {
			if at, ok := earliest[row.Subject]; ok && at.Before(row.At) {
				return errEarlierFirst
			}
		}
		sent, err := readAcked(sys, tx, evs)
		if err != nil {
			return err
		}
		var run ackRun // the acks read together (sent) are applied together
		for i, row := range rows {
			if evs[i].Type == engine.EventAck && sent != nil {
				if run.add(evs[i]) {
					continue
				}
				if err := run.apply(sys, tx, sent); err != nil {
					return err
				}
				run.add(evs[i])
				continue
			}
			if err := run.apply(sys, tx, sent); err != nil {
				return err
			}
			kept := arrivals{urls: row.MediaUrls, due: &due}
			if err := h.apply(viewer.WorkspaceContext(ctx, row.WorkspaceID), tx, evs[i], sent, kept); err != nil {
				return err
			}
		}
		if err := run.apply(sys, tx, sent); err != nil {
			return err
		}
		n, err := tx.InboxEvent.Update().Where(inboxevent.IDIn(ids...), inboxevent.LeaseToken(token)).
			SetAppliedAt(time.Now()).AddAttempts(1).SetLeaseToken("").ClearLeaseUntil().Save(sys)
		if err == nil && n != len(ids) {
			err = errLeaseLost
		}
		return err
	})
	if err == nil {
		h.queueFetches(sys, due)
	}
	return err
}

// releaseEvent gives a claimed event back for a later attempt at next. A failure
// counts as an attempt, and the last allowed attempt makes the event dead.
func (h *Inbox) releaseEvent(ctx context.Context, row *ent.InboxEvent, token string, next time.Time, reason string, failure bool) {
	u := h.Client.InboxEvent.Update().Where(inboxevent.ID(row.ID), inboxevent.LeaseToken(token)).
		SetLeaseToken("").ClearLeaseUntil().SetNextAttemptAt(next).SetLastError(truncate(reason, 500))
	if failure {
		u.AddAttempts(1)
		if row.Attempts+1 >= MaxAttempts {
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
