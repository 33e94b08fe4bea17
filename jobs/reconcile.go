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

// StaleSending is how long a message may stay claimed (sending) before the
// reconciler assumes its worker died and queues it again.
const StaleSending = 2 * time.Minute

// Settle is how long the periodic reconciler leaves a new or just-changed message
// to the normal path before it looks at it.
const Settle = 5 * time.Second

// reconcileBatch bounds the work of one pass; the next pass takes the rest.
const reconcileBatch = 500

// ReconcileTask is the periodic task that runs Reconcile.
func ReconcileTask() *asynq.Task { return asynq.NewTask(TypeReconcile, nil) }

// Reconcile rebuilds from the database what Redis should hold: every pending
// message and webhook delivery due within the next pass gets its task (a no-op when
// it is already queued), and every message claimed by a worker that died is released.
// The database is the source of truth, so a Redis flush or restart loses nothing.
func (h *Handlers) Reconcile(ctx context.Context, _ *asynq.Task) error {
	if err := h.ReapEngines(ctx, time.Now()); err != nil {
		slog.Warn("reconciler: reap lapsed engines", "err", err)
	}
	if p, err := h.Prune(ctx, time.Now()); err != nil {
		slog.Warn("reconciler: prune", "err", err)
	} else if p != (Pruned{}) {
		slog.Info("reconciler pruned old records", "idempotency_keys", p.IdempotencyKeys, "events", p.Events,
			"deliveries", p.Deliveries, "attempts", p.Attempts)
	}
	n, err := h.ReconcileOnce(ctx, time.Now(), Settle)
	if n > 0 {
		slog.Info("reconciler re-queued messages", "count", n)
	}
	return err
}

// ReconcileOnce runs one reconciliation pass as of now, skipping messages changed
// within settle, and returns how many dispatch tasks it had to add back.
func (h *Handlers) ReconcileOnce(ctx context.Context, now time.Time, settle time.Duration) (int, error) {
	ctx = viewer.SystemContext(ctx)
	stale, err := h.Client.Message.Query().
		Where(message.Status(messaging.StatusSending), message.UpdatedAtLT(now.Add(-StaleSending))).
		Limit(reconcileBatch).All(ctx)
	if err != nil {
		return 0, err
	}
	queued := 0
	for _, m := range stale {
		wctx := viewer.WorkspaceContext(ctx, m.WorkspaceID)
		if err := h.move(wctx, m, messaging.StatusPending); err != nil {
			slog.Error("reconciler: release stale message", "message", m.ID, "err", err)
			continue
		}
		if added, err := h.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, time.Time{}); err != nil {
			slog.Error("reconciler: enqueue", "message", m.ID, "err", err)
		} else if added {
			queued++
		}
	}
	due, err := h.Client.Message.Query().
		Where(message.Status(messaging.StatusPending), message.UpdatedAtLT(now.Add(-settle)),
			message.Or(message.SendAtIsNil(), message.SendAtLTE(now.Add(ReconcileEvery)))).
		Order(ent.Asc(message.FieldCreatedAt)).Limit(reconcileBatch).All(ctx)
	if err != nil {
		return queued, err
	}
	for _, m := range due {
		added, err := h.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, dueAt(m.SendAt, now))
		if err != nil {
			slog.Error("reconciler: enqueue", "message", m.ID, "err", err)
		} else if added {
			queued++
		}
	}
	deliveries, err := h.Client.Delivery.Query().
		Where(delivery.Status(DeliveryPending), delivery.UpdatedAtLT(now.Add(-settle)),
			delivery.Or(delivery.NextAttemptAtIsNil(), delivery.NextAttemptAtLTE(now.Add(ReconcileEvery)))).
		Order(ent.Asc(delivery.FieldCreatedAt)).Limit(reconcileBatch).All(ctx)
	if err != nil {
		return queued, err
	}
	for _, d := range deliveries {
		added, err := h.Queue.Deliver(ctx, d.WorkspaceID, d.ID, dueAt(d.NextAttemptAt, now))
		if err != nil {
			slog.Error("reconciler: enqueue delivery", "delivery", d.ID, "err", err)
		} else if added {
			queued++
		}
	}
	return queued, nil
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
