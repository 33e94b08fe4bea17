package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/message"
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
	if p, err := h.Prune(ctx, time.Now()); err != nil {
		slog.Warn("reconciler: prune", "err", err)
	} else if p != (Pruned{}) {
		slog.Info("reconciler pruned old records", "idempotency_keys", p.IdempotencyKeys, "events", p.Events,
			"deliveries", p.Deliveries, "attempts", p.Attempts, "inbox_events", p.InboxEvents, "media", p.Media, "board_items", p.BoardItems)
	}
	if n, err := h.ReconcileMusic(ctx, time.Now()); err != nil {
		slog.Warn("reconciler: music", "err", err)
	} else if n > 0 {
		slog.Info("reconciler re-queued music generations", "count", n)
	}
	n, err := h.ReconcileOnce(ctx, time.Now(), Settle)
	if n > 0 {
		slog.Info("reconciler re-queued messages", "count", n)
	}
	return err
}

// ReconcileOnce runs one reconciliation pass as of now, skipping messages changed
// within settle, and returns how many tasks it had to add back. It pages through
// all the work with a cursor, batch by batch, however much there is.
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
		Where(message.Status(messaging.StatusSending), message.UpdatedAtLT(now.Add(-h.Queue.StaleAfter())))
	err := walk(ctx, messagesAfter(stale), func(page []*ent.Message) {
		for _, m := range page {
			wctx := viewer.WorkspaceContext(ctx, m.WorkspaceID)
			if err := h.release(wctx, m); err != nil {
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
	due := h.Client.Message.Query().
		Where(message.Status(messaging.StatusPending), message.UpdatedAtLT(now.Add(-settle)),
			message.Or(message.SendAtIsNil(), message.SendAtLTE(now.Add(ReconcileEvery))))
	err = walk(ctx, messagesAfter(due), func(page []*ent.Message) {
		lost := lost(ctx, h.Queue, QueueMessages, page, func(m *ent.Message) string { return DispatchTaskID(m.ID) })
		for _, m := range lost {
			added, err := h.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, dueAt(m.SendAt, now))
			count(added, err, "message", m.ID)
		}
	})
	if err != nil {
		return queued, err
	}
	steps, err := h.ReconcileCampaigns(ctx, now, settle)
	queued += steps
	if err != nil {
		return queued, err
	}
	deliveries := h.Client.Delivery.Query().
		Where(delivery.Status(DeliveryPending), delivery.UpdatedAtLT(now.Add(-settle)),
			delivery.Or(delivery.NextAttemptAtIsNil(), delivery.NextAttemptAtLTE(now.Add(ReconcileEvery))))
	err = walk(ctx, deliveriesAfter(deliveries), func(page []*ent.Delivery) {
		lost := lost(ctx, h.Queue, QueueWebhooks, page, func(d *ent.Delivery) string { return DeliverTaskID(d.ID) })
		for _, d := range lost {
			added, err := h.Queue.Deliver(ctx, d.WorkspaceID, d.ID, dueAt(d.NextAttemptAt, now))
			count(added, err, "delivery", d.ID)
		}
	})
	return queued, err
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

// deliveriesAfter pages q in (created_at, id) order.
func deliveriesAfter(q *ent.DeliveryQuery) func(context.Context, *ent.Delivery) ([]*ent.Delivery, error) {
	return func(ctx context.Context, after *ent.Delivery) ([]*ent.Delivery, error) {
		page := q.Clone()
		if after != nil {
			page.Where(delivery.Or(delivery.CreatedAtGT(after.CreatedAt),
				delivery.And(delivery.CreatedAt(after.CreatedAt), delivery.IDGT(after.ID))))
		}
		return page.Order(ent.Asc(delivery.FieldCreatedAt), ent.Asc(delivery.FieldID)).Limit(reconcileBatch).All(ctx)
	}
}

// ReapEngines records session.disconnected for every engine whose presence
// heartbeat lapsed before now without a goodbye (its process died).
func (h *Handlers) ReapEngines(ctx context.Context, now time.Time) error {
	lapses, err := h.Engines.Presence().Reap(ctx, now)
	for _, l := range lapses {
		ev := engine.Event{Type: engine.EventGone, WorkspaceID: l.WorkspaceID, EngineID: l.ID, At: now}
		if herr := h.HandleEvent(ctx, ev); herr != nil {
			slog.Error("reconciler: record lapsed engine", "engine", l.ID, "err", herr)
		}
	}
	return err
}
