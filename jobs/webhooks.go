package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// Delivery and webhook states.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"

	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)

// DisableAfter is how many consecutive failed attempts disable an endpoint.
const DisableAfter = 8

// RotationOverlap is how long a rotated-out secret keeps signing beside the new one.
const RotationOverlap = 24 * time.Hour

// retryAfter tells RetryDelayFunc when a failed task runs again.
type retryAfter struct {
	delay time.Duration
	cause string
}

func (e *retryAfter) Error() string {
	return fmt.Sprintf("retry in %s: %s", e.delay, e.cause)
}

// RetryDelayFunc is the asynq server's RetryDelayFunc: a delivery attempt names
// its own delay (the retry schedule at the attempt number the database holds);
// other tasks back off with RetryDelay.
func RetryDelayFunc(n int, err error, t *asynq.Task) time.Duration {
	var ra *retryAfter
	if errors.As(err, &ra) {
		return ra.delay
	}
	return RetryDelay(n, err, t)
}

// RunFanout turns recorded events into webhook deliveries until ctx is done,
// polling every min while there are events and backing off to max when there are
// none.
func (h *Handlers) RunFanout(ctx context.Context, min, max time.Duration) {
	poll.Loop(ctx, min, max, nil, func(ctx context.Context) bool {
		found := false
		for ctx.Err() == nil {
			n, err := h.FanOutOnce(context.WithoutCancel(ctx)) // a batch in hand is finished
			if err != nil && ctx.Err() == nil {
				slog.Error("webhook fan-out failed", "err", err)
			}
			found = found || n > 0
			if n < fanoutBatch || err != nil {
				break
			}
		}
		return found
	})
}

const fanoutBatch = 500

// FanOutOnce creates the deliveries of up to one batch of recorded events and
// queues them, in one transaction: it claims the events (on PostgreSQL with FOR
// UPDATE SKIP LOCKED, so that any number of fan-out loops, replicas included, share
// the work without doing any of it twice), reads the enabled webhooks of their
// workspaces once, and inserts every delivery in one statement.
func (h *Handlers) FanOutOnce(ctx context.Context) (int, error) {
	// A fan-out a crash loses is done again: its events are still in the outbox.
	sys := viewer.SystemContext(storage.RelaxedCommit(ctx))
	var created []*ent.Delivery
	var claimed int
	err := storage.WithTx(sys, h.Client, func(tx *ent.Tx) error {
		q := tx.Event.Query().Where(event.FannedOutAtIsNil()).Order(ent.Asc(event.FieldCreatedAt)).Limit(fanoutBatch)
		if h.rowLocks() {
			q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		events, err := q.All(sys)
		if err != nil || len(events) == 0 {
			return err
		}
		claimed = len(events)
		ids := make([]string, len(events))
		workspaces := map[string]bool{}
		for i, ev := range events {
			ids[i] = ev.ID
			workspaces[ev.WorkspaceID] = true
		}
		if err := tx.Event.Update().Where(event.IDIn(ids...)).SetFannedOutAt(time.Now()).Exec(sys); err != nil {
			return err
		}
		hooks, err := tx.Webhook.Query().
			Where(webhook.WorkspaceIDIn(slices.Collect(maps.Keys(workspaces))...), webhook.Status(WebhookEnabled)).All(sys)
		if err != nil {
			return err
		}
		var creates []*ent.DeliveryCreate
		for _, ev := range events {
			for _, hook := range hooks {
				if hook.WorkspaceID != ev.WorkspaceID || !slices.Contains(hook.Events, ev.Type) {
					continue
				}
				c, err := newDelivery(tx, hook.WorkspaceID, hook.ID, ev.ID, ev.Type, ev.CreatedAt, ev.Data)
				if err != nil {
					return err
				}
				creates = append(creates, c)
			}
		}
		if len(creates) == 0 {
			return nil
		}
		created, err = tx.Delivery.CreateBulk(creates...).Save(sys)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fan out: %w", err)
	}
	for _, d := range created {
		if _, err := h.Queue.Deliver(sys, d.WorkspaceID, d.ID, time.Time{}); err != nil {
			slog.Warn("enqueue delivery failed; the reconciler will retry", "delivery", d.ID, "err", err)
		}
	}
	return claimed, nil
}

// newDelivery prepares a delivery of an event to a webhook; its id is also the id
// of its envelope.
func newDelivery(tx *ent.Tx, workspaceID, webhookID, eventID, typ string, at time.Time, data json.RawMessage) (*ent.DeliveryCreate, error) {
	id := newDeliveryID()
	payload, err := json.Marshal(wh.Envelope{ID: id, Type: typ, CreatedAt: at.UTC(), Data: data})
	if err != nil {
		return nil, err
	}
	return tx.Delivery.Create().SetID(id).SetWorkspaceID(workspaceID).SetWebhookID(webhookID).SetEventID(eventID).
		SetEventType(typ).SetPayload(payload).SetNextAttemptAt(time.Now()), nil
}

// Redeliver makes a new delivery of the event behind d to the same webhook and
// queues it. The new delivery carries d's envelope unchanged, its id included, so a
// receiver that stores envelope ids (as the spec tells it to) recognises the event.
func (h *Handlers) Redeliver(ctx context.Context, d *ent.Delivery) (*ent.Delivery, error) {
	var nd *ent.Delivery
	err := storage.WithTx(ctx, h.Client, func(tx *ent.Tx) (err error) {
		nd, err = tx.Delivery.Create().SetWebhookID(d.WebhookID).SetEventID(d.EventID).
			SetEventType(d.EventType).SetPayload(d.Payload).SetNextAttemptAt(time.Now()).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := h.Queue.Deliver(ctx, nd.WorkspaceID, nd.ID, time.Time{}); err != nil {
		slog.Warn("enqueue delivery failed; the reconciler will retry", "delivery", nd.ID, "err", err)
	}
	return nd, nil
}

// Deliver makes one attempt of a delivery and records it. The attempt number comes
// from the database, so a lost Redis task or a killed worker only repeats an attempt.
func (h *Handlers) Deliver(ctx context.Context, t *asynq.Task) error {
	var p deliverPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	// An attempt whose record a crash loses is made again: webhooks are
	// delivered at least once, and a repeat carries the same webhook-id.
	ctx = viewer.WorkspaceContext(storage.RelaxedCommit(ctx), p.WorkspaceID)
	d, err := h.loadDelivery(ctx, p.WorkspaceID, p.DeliveryID)
	if err != nil {
		return err
	}
	if d == nil || d.Status != DeliveryPending {
		return nil
	}
	if wait, err := poll.WaitOutRemainder(ctx, d.NextAttemptAt); err != nil {
		return err
	} else if wait > 0 {
		return &retryAfter{delay: wait, cause: "not due yet"}
	}
	now := time.Now()
	hook, ok, err := outbox.Enabled(ctx, h.Client.Webhook, p.WorkspaceID, d.WebhookID)
	if err != nil {
		return err
	} else if !ok {
		// What this process remembers may predate the webhook (made on another
		// replica a moment ago): the database decides.
		hook, err = h.Client.Webhook.Get(ctx, d.WebhookID)
		switch {
		case ent.IsNotFound(err):
			return h.finish(ctx, d, DeliveryFailed, "webhook deleted")
		case err != nil:
			return err
		case hook.Status != WebhookEnabled:
			return h.finish(ctx, d, DeliveryFailed, "webhook disabled")
		}
		outbox.Forget(p.WorkspaceID)
	}
	secrets := []string{hook.Secret}
	if hook.PreviousSecret != "" && hook.PreviousSecretExpiresAt != nil && now.Before(*hook.PreviousSecretExpiresAt) {
		secrets = append(secrets, hook.PreviousSecret)
	}
	res := h.Sender.Send(ctx, wh.Request{URL: hook.URL, WebhookID: hook.ID, DeliveryID: d.ID, Payload: d.Payload, Secrets: secrets})
	if res.OK() {
		return h.recordSuccess(ctx, d, res, now)
	}
	return h.record(ctx, d, hook, res, now)
}

// Most attempts succeed, and one transaction each made their record the larger
// part of a delivery's cost. While RunRecorder runs, the successes that end at the
// same moment are recorded together: one transaction, an update of each delivery
// that is still pending, one insert of their attempts and one update of their
// webhooks' failure counts. Failures are recorded one by one: each decides a retry
// or the endpoint's auto-disable.

// recordBatch bounds how many successes one transaction records.
const recordBatch = 128

// success is a successful attempt waiting for its batch to be recorded.
type success struct {
	d    *ent.Delivery
	res  wh.Result
	at   time.Time
	done chan error // buffered: the batch never waits for the task
}

// RunRecorder records the successful attempts that end at the same time in
// batches of up to recordBatch, with workers batches in flight, until ctx is done.
// Attempts that end while it does not run are recorded one by one.
func (h *Handlers) RunRecorder(ctx context.Context, workers int) {
	poll.RunBatcher(ctx, &h.recorder, workers, recordBatch, h.recordSuccesses)
}

// recordSuccess records a successful attempt of d with the others of its moment,
// or alone when the recorder does not run.
func (h *Handlers) recordSuccess(ctx context.Context, d *ent.Delivery, res wh.Result, at time.Time) error {
	r := h.recorder.Load()
	if r == nil {
		return h.recordOne(ctx, d, res, at)
	}
	s := &success{d: d, res: res, at: at, done: make(chan error, 1)}
	if err := r.Send(ctx, s); err != nil {
		return err
	}
	select {
	case err := <-s.done:
		return err
	case <-ctx.Done():
		// The batch goes on without this task; if it records nothing, the task's
		// retry makes the attempt again (webhooks are delivered at least once).
		return ctx.Err()
	}
}

// recordOne records one successful attempt in a transaction of its own.
func (h *Handlers) recordOne(ctx context.Context, d *ent.Delivery, res wh.Result, at time.Time) error {
	s := &success{d: d, res: res, at: at, done: make(chan error, 1)}
	h.recordSuccesses(ctx, []*success{s})
	return <-s.done
}

// recordSuccesses records the successful attempts of batch in one transaction and
// answers each. A delivery no longer pending (a concurrent run finished it) gets
// no attempt recorded.
func (h *Handlers) recordSuccesses(ctx context.Context, batch []*success) {
	// As for a single attempt: a record a crash loses means the attempt is made again.
	sys := viewer.SystemContext(storage.RelaxedCommit(ctx))
	// Rows are updated in one order, so that two batches never wait on each other in a cycle.
	slices.SortFunc(batch, func(a, b *success) int { return cmp.Compare(a.d.ID, b.d.ID) })
	var hooks []string
	for _, s := range batch {
		if !slices.Contains(hooks, s.d.WebhookID) {
			hooks = append(hooks, s.d.WebhookID)
		}
	}
	var recorded int
	err := storage.WithTx(sys, h.Client, func(tx *ent.Tx) error {
		if h.rowLocks() {
			// Deleting a webhook locks it, then its deliveries: taking the webhooks
			// first keeps the two from waiting on each other in a cycle. KEY SHARE
			// lets their failure counts be updated meanwhile.
			_, err := tx.Webhook.Query().Where(webhook.IDIn(hooks...)).
				Modify(func(s *sql.Selector) { s.For(sql.LockKeyShare) }).IDs(sys)
			if err != nil {
				return err
			}
		}
		ids := make([]string, len(batch))
		for i, s := range batch {
			ids[i] = s.d.ID
		}
		// The deliveries still pending, locked until the batch commits, are the
		// ones it records; then one update finishes them all, each with the time
		// of its own attempt.
		q := tx.Delivery.Query().Where(delivery.IDIn(ids...), delivery.Status(DeliveryPending)).
			Order(ent.Asc(delivery.FieldID)) // locked in one order, as the webhooks above
		if h.rowLocks() {
			q.ForUpdate()
		}
		pending, err := q.IDs(sys)
		if err != nil || len(pending) == 0 {
			return err
		}
		left := make(map[string]bool, len(pending))
		for _, id := range pending {
			left[id] = true
		}
		var attempts []*ent.DeliveryAttemptCreate
		var done []*success
		for _, s := range batch {
			if left[s.d.ID] { // once, should a batch hold a delivery twice
				delete(left, s.d.ID)
				attempts = append(attempts, newAttempt(tx, s.d, s.res, s.at, ""))
				done = append(done, s)
			}
		}
		n, err := tx.Delivery.Update().Where(delivery.IDIn(pending...)).
			SetStatus(DeliverySucceeded).AddAttempts(1).SetLastError("").ClearNextAttemptAt().
			Modify(func(u *sql.UpdateBuilder) { u.Set(delivery.FieldLastAttemptAt, h.attemptTimes(done)) }).Save(sys)
		if err != nil {
			return err
		} else if n != len(pending) {
			return fmt.Errorf("record deliveries: %d of %d locked rows updated", n, len(pending))
		}
		if err := tx.DeliveryAttempt.CreateBulk(attempts...).Exec(sys); err != nil {
			return err
		}
		recorded = len(attempts)
		return tx.Webhook.Update().Where(webhook.IDIn(hooks...), webhook.ConsecutiveFailuresGT(0)).
			SetConsecutiveFailures(0).Exec(sys)
	})
	if err == nil {
		metrics.Deliveries.WithLabelValues("succeeded").Add(float64(recorded))
	}
	for _, s := range batch {
		s.done <- err
	}
}

// attemptTimes is the time of each delivery's own attempt, as one expression
// of its id (CASE id WHEN ... THEN ... END).
func (h *Handlers) attemptTimes(done []*success) sql.Querier {
	return sql.ExprFunc(func(b *sql.Builder) {
		b.WriteString("CASE ").Ident(delivery.FieldID)
		for _, s := range done {
			b.WriteString(" WHEN ").Arg(s.d.ID).WriteString(" THEN ").Arg(s.at)
			if h.Dialect == dialect.Postgres {
				b.WriteString("::timestamptz") // a bare parameter in a CASE is taken for text
			}
		}
		b.WriteString(" END")
	})
}

// newAttempt prepares the record of the next attempt of d.
func newAttempt(tx *ent.Tx, d *ent.Delivery, res wh.Result, at time.Time, errText string) *ent.DeliveryAttemptCreate {
	return tx.DeliveryAttempt.Create().SetWorkspaceID(d.WorkspaceID).SetDeliveryID(d.ID).SetWebhookID(d.WebhookID).
		SetNumber(d.Attempts + 1).SetAt(at).SetStatusCode(res.StatusCode).SetError(errText).
		SetLatencyMs(res.Latency.Milliseconds()).SetResponseBody(res.Body).SetSuccess(res.OK())
}

// record stores a failed attempt and its consequences: the next try, the end of
// the schedule, or the endpoint's auto-disable.
func (h *Handlers) record(ctx context.Context, d *ent.Delivery, hook *ent.Webhook, res wh.Result, at time.Time) error {
	number := d.Attempts + 1
	done := time.Now() // the wait before the next attempt counts from the end of this one
	var delay time.Duration
	disabled := false
	err := storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		// The webhook first, then the delivery: the order in which deleting a
		// webhook locks them, so that the two never wait on each other in a cycle.
		hook, err := tx.Webhook.UpdateOneID(hook.ID).AddConsecutiveFailures(1).Save(ctx)
		if err != nil {
			return err
		}
		errText := errOr(res)
		if err := newAttempt(tx, d, res, at, errText).Exec(ctx); err != nil {
			return err
		}
		// A bulk update by id: UpdateOne would read the row back, which nothing here uses.
		upd := tx.Delivery.Update().Where(delivery.ID(d.ID), delivery.Status(DeliveryPending)).
			SetAttempts(number).SetLastAttemptAt(at).SetLastError(errText)
		if hook.ConsecutiveFailures >= DisableAfter && hook.Status == WebhookEnabled {
			if err := tx.Webhook.UpdateOneID(hook.ID).SetStatus(WebhookDisabled).SetDisabledAt(at).Exec(ctx); err != nil {
				return err
			}
			disabled = true
			return pendingUpdated(upd.SetStatus(DeliveryFailed).ClearNextAttemptAt().
				SetLastError(errText + "; webhook disabled after 8 consecutive failures").Save(ctx))
		}
		if number > len(h.RetrySchedule) {
			return pendingUpdated(upd.SetStatus(DeliveryFailed).ClearNextAttemptAt().Save(ctx))
		}
		delay = h.RetrySchedule[number-1]
		return pendingUpdated(upd.SetNextAttemptAt(done.Add(delay)).Save(ctx))
	})
	if errors.Is(err, errNotPending) || ent.IsNotFound(err) {
		return nil // finished elsewhere (a concurrent run), or its webhook deleted meanwhile
	} else if err != nil {
		return err
	}
	if disabled {
		outbox.Announce(ctx, h.Queue.Redis(), hook.WorkspaceID)
	}
	switch {
	case delay > 0:
		metrics.Deliveries.WithLabelValues("retrying").Inc()
		return &retryAfter{delay: time.Until(done.Add(delay)), cause: errOr(res)}
	default:
		metrics.Deliveries.WithLabelValues("failed").Inc()
		slog.Warn("webhook delivery failed for good", "delivery", d.ID, "webhook", hook.ID,
			"workspace", hook.WorkspaceID, "attempts", number, "err", errOr(res))
	}
	return nil
}

func errOr(res wh.Result) string {
	if res.Err != "" {
		return res.Err
	}
	return fmt.Sprintf("HTTP %d", res.StatusCode)
}

// errNotPending says a delivery was finished elsewhere (a concurrent run) before
// this one could record its outcome.
var errNotPending = errors.New("delivery no longer pending")

// pendingUpdated turns the count of an update of one pending delivery into an
// error: errNotPending when it updated nothing.
func pendingUpdated(n int, err error) error {
	if err == nil && n == 0 {
		return errNotPending
	}
	return err
}

// finish ends a delivery without an attempt.
func (h *Handlers) finish(ctx context.Context, d *ent.Delivery, status, reason string) error {
	err := pendingUpdated(h.Client.Delivery.Update().Where(delivery.ID(d.ID), delivery.Status(DeliveryPending)).
		SetStatus(status).SetLastError(reason).ClearNextAttemptAt().Save(ctx))
	if errors.Is(err, errNotPending) {
		return nil
	} else if err != nil {
		return err
	}
	metrics.Deliveries.WithLabelValues(status).Inc()
	slog.Warn("webhook delivery ended without an attempt", "delivery", d.ID, "webhook", d.WebhookID,
		"workspace", d.WorkspaceID, "status", status, "reason", reason)
	return nil
}
