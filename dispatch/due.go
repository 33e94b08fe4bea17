package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/viewer"
)

// A message scheduled ahead does not need a task of its own: the messages due in
// the same second share one task, queued once, that runs when the second begins
// (asynq schedules in whole seconds) and reads them from the database as they
// come due (DispatchDue). 100,000 messages due over a minute cost sixty tasks,
// not 100,000 round trips to Redis when they are scheduled and two more each when
// they are due. A message the sweep cannot send now (no engine, an engine's
// failure) goes back to a task of its own, which retries it with backoff.

// dueWorkers bounds the batches of due messages a process dispatches at once,
// whatever the number of sweeps.
const dueWorkers = 4

// dueGather is the least a sweep waits for the next message of its window: the
// messages due meanwhile go out together.
const dueGather = 20 * time.Millisecond

// Later is a message a sweep of due messages leaves to a dispatch task of its
// own, due at At (the zero time: now): one that waits for an engine or whose
// engine failed for now, or one the sweep found early by its own clock.
type Later struct {
	WorkspaceID, MessageID string
	At                     time.Time
}

// DispatchDue dispatches the queued messages still pending that are due in the
// window [from, to) as they come due, and returns those left for a task of their
// own (Later). What is due goes out MaxBatch at a time in (send_at, id) order,
// with up to dueWorkers batches in flight; then the sweep sleeps until the
// window's next message, until the window ends. A message cancelled, rescheduled
// out of the window or claimed by another run meanwhile is left alone; one sent
// already is not pending. The error is the database's or ctx's: what it kept the
// sweep from sending is still pending, for the sweep's retry.
func (d *Dispatcher) DispatchDue(ctx context.Context, from, to time.Time) ([]Later, error) {
	var later []Later
	for {
		// In UTC, as sendAt is stored: SQLite compares times as text.
		upto := time.Now().UTC()
		if upto.After(to) {
			upto = to
		}
		l, err := d.dispatchWindow(ctx, from, upto)
		later = append(later, l...)
		if err != nil || !upto.Before(to) {
			return later, err
		}
		next, err := d.Client.Message.Query().Where(pendingDue(upto, to)).Order(ent.Asc(message.FieldSendAt)).
			Select(message.FieldSendAt).First(viewer.SystemContext(ctx))
		if ent.IsNotFound(err) {
			return later, nil
		} else if err != nil {
			return later, err
		}
		t := time.NewTimer(max(time.Until(*next.SendAt), dueGather))
		select {
		case <-ctx.Done():
			t.Stop()
			return later, ctx.Err()
		case <-t.C:
		}
		from = upto
	}
}

// pendingDue selects the queued messages still pending that are due in [from, to).
func pendingDue(from, to time.Time) predicate.Message {
	return message.And(message.Queued(true), messaging.StatusIs(messaging.StatusPending),
		message.SendAtGTE(from), message.SendAtLT(to))
}

// dispatchWindow dispatches the queued messages still pending that are due in
// [from, upto), and returns those left for a task of their own. Each batch takes
// one of the process's dueWorkers places first, so that many sweeps at once (a
// worker that starts after a while, with many seconds due) neither read far
// ahead nor hold more of the database than these.
func (d *Dispatcher) dispatchWindow(ctx context.Context, from, upto time.Time) ([]Later, error) {
	sys := viewer.SystemContext(ctx)
	var (
		mu    sync.Mutex
		later []Later
		wg    sync.WaitGroup
	)
	places := d.duePlaces()
	var after *ent.Message
	for {
		select {
		case places <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return later, ctx.Err()
		}
		q := d.Client.Message.Query().Where(pendingDue(from, upto))
		if after != nil {
			q = q.Where(message.Or(message.SendAtGT(*after.SendAt),
				message.And(message.SendAt(*after.SendAt), message.IDGT(after.ID))))
		}
		rows, err := q.Order(ent.Asc(message.FieldSendAt), ent.Asc(message.FieldID)).Limit(MaxBatch).All(sys)
		if err != nil || len(rows) == 0 {
			<-places
			wg.Wait()
			return later, err
		}
		wg.Add(1)
		go func() {
			defer func() { <-places; wg.Done() }()
			reqs := make([]*request, len(rows))
			for i, m := range rows {
				reqs[i] = &request{workspaceID: m.WorkspaceID, messageID: m.ID, done: make(chan result, 1)}
			}
			d.dispatchRows(ctx, reqs, rows)
			mu.Lock()
			defer mu.Unlock()
			for _, r := range reqs {
				switch res := <-r.done; {
				case res.early != nil:
					later = append(later, Later{WorkspaceID: r.workspaceID, MessageID: r.messageID, At: *res.early})
				case res.err != nil:
					later = append(later, Later{WorkspaceID: r.workspaceID, MessageID: r.messageID})
				}
			}
		}()
		if len(rows) < MaxBatch {
			wg.Wait()
			return later, nil
		}
		after = rows[len(rows)-1]
	}
}

// duePlaces is the process's places for batches of due messages, made on first
// use.
func (d *Dispatcher) duePlaces() chan struct{} {
	d.dueOnce.Do(func() { d.due = make(chan struct{}, dueWorkers) })
	return d.due
}
