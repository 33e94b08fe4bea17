package jobs

import (
	"context"
	stdsql "database/sql"
	"log/slog"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/viewer"
)

// ReconcileEvery is how often the reconciler runs.
const ReconcileEvery = 15 * time.Second

// Settle is how long the periodic reconciler leaves a new or just-changed message
// to the normal path before it looks at it.
const Settle = 5 * time.Second

// reconcileBatch is how many rows the reconciler reads at a time.
const reconcileBatch = 500

// ReconcileTask is the periodic task that runs Reconcile.
func ReconcileTask() *asynq.Task { return asynq.NewTask(TypeReconcile, nil) }

// Reconcile rebuilds from the database what Redis should hold: every pending
// message, campaign step and webhook delivery due within the next pass gets its
// task (a no-op when it is already queued), and every message claimed by a worker that died is released.
// The database is the source of truth, so a Redis flush or restart loses nothing.
func (h *Handlers) Reconcile(ctx context.Context, _ *asynq.Task) error {
	if err := h.ReapEngines(ctx, time.Now()); err != nil {
		slog.Warn("reconciler: reap lapsed engines", "err", err)
	}
	if n, err := h.LiftRestrictions(ctx, time.Now()); err != nil {
		slog.Warn("reconciler: restrictions", "err", err)
	} else if n > 0 {
		slog.Info("reconciler resumed campaigns after restrictions", "count", n)
	}
	if h.Music != nil { // a process without music generation has none to reconcile
		if n, err := h.Music.Reconcile(ctx, time.Now()); err != nil {
			slog.Warn("reconciler: music", "err", err)
		} else if n > 0 {
			slog.Info("reconciler re-queued music generations", "count", n)
		}
	}
	n, err := h.ReconcileOnce(ctx, time.Now(), Settle)
	if n > 0 {
		slog.Info("reconciler re-queued messages", "count", n)
	}
	return err
}

// ReconcileOnce runs one reconciliation pass as of now, skipping messages changed
// within settle, and returns how many tasks it had to add back. It goes through
// all the work, batch by batch, however much there is.
func (h *Handlers) ReconcileOnce(ctx context.Context, now time.Time, settle time.Duration) (int, error) {
	ctx = viewer.SystemContext(ctx)
	if err := h.Queue.Register(ctx); err != nil {
		return 0, err
	}
	queued := 0
	count := func(added bool, err error, what, id string) {
		if err != nil {
			slog.Error("reconciler: enqueue", what, id, "err", err)
		} else if added {
			queued++
		}
	}
	stale := h.Client.Message.Query().
		Where(message.Queued(true), messaging.StatusIs(messaging.StatusSending), message.UpdatedAtLT(now.Add(-h.Queue.StaleAfter())))
	err := walk(ctx, messagesAfter(stale), func(page []*ent.Message) {
		for _, m := range page {
			wctx := viewer.WorkspaceContext(ctx, m.WorkspaceID)
			if err := h.Dispatcher.Release(wctx, m); err != nil {
				slog.Error("reconciler: release stale message", "message", m.ID, "err", err)
				continue
			}
			added, err := h.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, time.Time{})
			count(added, err, "message", m.ID)
		}
	})
	if err != nil {
		return queued, err
	}
	due := []func(*entsql.Selector){message.Queued(true), messaging.StatusIs(messaging.StatusPending), message.UpdatedAtLT(now.Add(-settle)),
		message.Or(message.SendAtIsNil(), message.SendAtLTE(now.Add(ReconcileEvery)))}
	// ownTask names the one task of a row, by taskID of its id.
	ownTask := func(taskID func(string) string) func(queuedRow) []string {
		return func(r queuedRow) []string { return []string{taskID(r.id)} }
	}
	// requeue queues again the tasks of a page that Redis lost.
	requeue := func(queue, what string, taskIDs func(queuedRow) []string,
		enqueue func(ctx context.Context, workspaceID, id string, at time.Time) (bool, error)) func([]queuedRow) {
		return func(page []queuedRow) {
			for _, r := range lost(ctx, h.Queue, queue, page, taskIDs) {
				added, err := enqueue(ctx, r.workspaceID, r.id, dueAt(r.at, now))
				count(added, err, what, r.id)
			}
		}
	}
	err = h.streamQueued(ctx, message.Table, message.FieldSendAt, due,
		requeue(QueueMessages, "message", func(r queuedRow) []string { return dispatchTaskIDs(r.id, r.at) }, h.Queue.Restore))
	if err != nil {
		return queued, err
	}
	fetches := []func(*entsql.Selector){message.MediaFetch(inbox.FetchDue), message.UpdatedAtLT(now.Add(-settle))}
	err = h.streamQueued(ctx, message.Table, message.FieldCreatedAt, fetches,
		requeue(QueueMedia, "media download", ownTask(MediaFetchTaskID), h.fetchMediaAt))
	if err != nil {
		return queued, err
	}
	steps, err := h.ReconcileCampaigns(ctx, now, settle)
	queued += steps
	if err != nil {
		return queued, err
	}
	deliveries := []func(*entsql.Selector){entdelivery.Status(string(delivery.Pending)), entdelivery.UpdatedAtLT(now.Add(-settle)),
		entdelivery.Or(entdelivery.NextAttemptAtIsNil(), entdelivery.NextAttemptAtLTE(now.Add(ReconcileEvery)))}
	err = h.streamQueued(ctx, entdelivery.Table, entdelivery.FieldNextAttemptAt, deliveries,
		requeue(QueueWebhooks, "delivery", ownTask(DeliverTaskID), h.Queue.Deliver))
	return queued, err
}

// queuedRow is what the reconciler needs of a queued row to queue its task again:
// its id, its workspace, and when it is due (nil: now).
type queuedRow struct {
	id, workspaceID string
	at              *time.Time
}

// streamQueued calls fn with the rows of table (one with id and workspace_id
// columns) that preds select, reconcileBatch at a time, as one statement yields
// them; at is the column of when a row is due. A pass over a backlog reads each
// row once: pages behind a cursor each read and sorted every row still to come
// (PostgreSQL takes the partial index of queued rows, then sorts), n²/500 rows
// for n, 44 ms a page with a few thousand due messages waiting in a burst. fn
// must not use the database: on SQLite the statement holds its one connection
// until the last row.
func (h *Handlers) streamQueued(ctx context.Context, table, at string, preds []func(*entsql.Selector),
	fn func([]queuedRow)) error {
	s := entsql.Dialect(h.Dialect).Select("id", "workspace_id", at).From(entsql.Table(table))
	for _, p := range preds {
		p(s)
	}
	query, args := s.Query()
	rows, err := h.Client.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	page := make([]queuedRow, 0, reconcileBatch)
	for rows.Next() {
		var r queuedRow
		var due stdsql.NullTime
		if err := rows.Scan(&r.id, &r.workspaceID, &due); err != nil {
			return err
		}
		if due.Valid {
			r.at = &due.Time
		}
		if page = append(page, r); len(page) == reconcileBatch {
			fn(page)
			page = page[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(page) > 0 {
		fn(page)
	}
	return nil
}

// walk calls fn with every page that batches yields, one page of reconcileBatch
// rows at a time behind a cursor (the last row of the previous page), so that a
// backlog larger than a page is walked to its end and rows that fn changes are
// not seen twice.
func walk[T any](ctx context.Context, batch func(ctx context.Context, after *T) ([]*T, error), fn func([]*T)) error {
	var cursor *T
	for {
		rows, err := batch(ctx, cursor)
		if err != nil {
			return err
		}
		fn(rows)
		if len(rows) < reconcileBatch {
			return nil
		}
		cursor = rows[len(rows)-1]
	}
}

// messagesAfter pages q in (created_at, id) order.
func messagesAfter(q *ent.MessageQuery) func(context.Context, *ent.Message) ([]*ent.Message, error) {
	return func(ctx context.Context, after *ent.Message) ([]*ent.Message, error) {
		page := q.Clone()
		if after != nil {
			page.Where(message.Or(message.CreatedAtGT(after.CreatedAt),
				message.And(message.CreatedAt(after.CreatedAt), message.IDGT(after.ID))))
		}
		return page.Order(ent.Asc(message.FieldCreatedAt), ent.Asc(message.FieldID)).Limit(reconcileBatch).All(ctx)
	}
}

// ReapEngines records session.disconnected for every engine whose presence
// heartbeat lapsed before now without a goodbye (its process died).
func (h *Handlers) ReapEngines(ctx context.Context, now time.Time) error {
	lapses, err := h.Engines.Presence().Reap(ctx, now)
	for _, l := range lapses {
		ev := engine.Event{Type: engine.EventGone, WorkspaceID: l.WorkspaceID, EngineID: l.ID, At: now}
		if herr := h.Inbox.HandleEvent(ctx, ev); herr != nil {
			slog.Error("reconciler: record lapsed engine", "engine", l.ID, "err", herr)
		}
	}
	return err
}

// fetchMediaAt queues a message's media download now, whatever at says: the
// reconciler's form of Queue.FetchMedia.
func (h *Handlers) fetchMediaAt(ctx context.Context, workspaceID, messageID string, _ time.Time) (bool, error) {
	return h.Queue.FetchMedia(ctx, workspaceID, messageID)
}
