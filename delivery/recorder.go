package delivery

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	entwebhook "github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// Most attempts succeed, and one transaction each made their record the larger
// part of a delivery's cost. While RunRecorder runs, the successes that end within
// recordGather of each other are recorded together: one transaction, an update of each delivery
// that is still pending, one insert of their attempts and one update of their
// webhooks' failure counts. Failures are recorded one by one: each decides a retry
// or the endpoint's auto-disable.

// recordBatch bounds how many successes one transaction records, and
// recordGather is how long a batch waits for more: a receiver already has its
// event, and a batch of a few successes costs what one does (eight statements).
// A batch is full at half the attempts a worker makes at once: were it as large
// as all of them, every attempt of a busy worker would wait out the gather (64
// attempts each held 25 ms capped a worker at about 1,800 deliveries a second).
const (
	recordBatch  = wh.Concurrency / 2
	recordGather = 25 * time.Millisecond
)

// success is a successful attempt waiting for its batch to be recorded.
type success struct {
	d    *ent.Delivery
	res  wh.Result
	at   time.Time
	done chan error // buffered: the batch never waits for the task
}

// RunRecorder records the successful attempts that end within recordGather of
// each other in batches of up to recordBatch, with workers batches in flight, until ctx is done.
// Attempts that end while it does not run are recorded one by one.
func (svc *Service) RunRecorder(ctx context.Context, workers int) {
	poll.RunBatcher(ctx, &svc.recorder, workers, recordBatch, recordGather, svc.recordSuccesses)
}

// recordSuccess records a successful attempt of d with the others of its moment,
// or alone when the recorder does not run.
func (svc *Service) recordSuccess(ctx context.Context, d *ent.Delivery, res wh.Result, at time.Time) error {
	r := svc.recorder.Load()
	if r == nil {
		return svc.recordOne(ctx, d, res, at)
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
func (svc *Service) recordOne(ctx context.Context, d *ent.Delivery, res wh.Result, at time.Time) error {
	s := &success{d: d, res: res, at: at, done: make(chan error, 1)}
	svc.recordSuccesses(ctx, []*success{s})
	return <-s.done
}

// recordSuccesses records the successful attempts of batch in one transaction and
// answers each. A delivery no longer pending (a concurrent run finished it) gets
// no attempt recorded.
func (svc *Service) recordSuccesses(ctx context.Context, batch []*success) {
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
	err := storage.WithTx(sys, svc.Client, func(tx *ent.Tx) error {
		if svc.rowLocks() {
			// Deleting a webhook locks it, then its deliveries: taking the webhooks
			// first keeps the two from waiting on each other in a cycle. KEY SHARE
			// lets their failure counts be updated meanwhile.
			_, err := tx.Webhook.Query().Where(entwebhook.IDIn(hooks...)).
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
		q := tx.Delivery.Query().Where(entdelivery.IDIn(ids...), entdelivery.Status(string(Pending))).
			Order(ent.Asc(entdelivery.FieldID)) // locked in one order, as the webhooks above
		if svc.rowLocks() {
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
		n, err := tx.Delivery.Update().Where(entdelivery.IDIn(pending...)).
			SetStatus(string(Succeeded)).AddAttempts(1).SetLastError("").ClearNextAttemptAt().
			Modify(func(u *sql.UpdateBuilder) { u.Set(entdelivery.FieldLastAttemptAt, svc.attemptTimes(done)) }).Save(sys)
		if err != nil {
			return err
		} else if n != len(pending) {
			return fmt.Errorf("record deliveries: %d of %d locked rows updated", n, len(pending))
		}
		if err := tx.DeliveryAttempt.CreateBulk(attempts...).Exec(sys); err != nil {
			return err
		}
		recorded = len(attempts)
		return tx.Webhook.Update().Where(entwebhook.IDIn(hooks...), entwebhook.ConsecutiveFailuresGT(0)).
			SetConsecutiveFailures(0).Exec(sys)
	})
	if err == nil {
		metrics.Deliveries.WithLabelValues(string(Succeeded)).Add(float64(recorded))
	}
	for _, s := range batch {
		s.done <- err
	}
}

// attemptTimes is the time of each delivery's own attempt, as one expression
// of its id (CASE id WHEN ... THEN ... END).
func (svc *Service) attemptTimes(done []*success) sql.Querier {
	return sql.ExprFunc(func(b *sql.Builder) {
		b.WriteString("CASE ").Ident(entdelivery.FieldID)
		for _, s := range done {
			b.WriteString(" WHEN ").Arg(s.d.ID).WriteString(" THEN ").Arg(s.at)
			if svc.Dialect == dialect.Postgres {
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
