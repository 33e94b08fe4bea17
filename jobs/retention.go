package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/boards"
	"github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/deliveryattempt"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/ent/idempotencykey"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/viewer"
)

// How long finished records are kept.
const (
	// KeepIdempotencyKeys is how long a retry with the same Idempotency-Key replays.
	KeepIdempotencyKeys = 24 * time.Hour
	// KeepEvents is how long fanned-out outbox events and applied engine events
	// are kept (engine events that were given up stay as long as deliveries).
	KeepEvents = 7 * 24 * time.Hour
	// KeepDeliveries is how long finished deliveries and their attempts stay visible.
	KeepDeliveries = 30 * 24 * time.Hour
)

// PruneEvery is how often records past their retention are removed. The
// retentions are a day and more, and a pass reads the tables it prunes (some of
// them whole): run with the reconciler, every 15 s, it read every waiting
// message's media and every inbox event each time.
const PruneEvery = 10 * time.Minute

// PruneTask is the periodic task that runs Prune.
func PruneTask() *asynq.Task { return asynq.NewTask(TypePrune, nil) }

// HandlePrune runs Prune as of now and logs what it removed.
func (h *Handlers) HandlePrune(ctx context.Context, _ *asynq.Task) error {
	p, err := h.Prune(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if p != (Pruned{}) {
		slog.Info("pruned old records", "idempotency_keys", p.IdempotencyKeys, "events", p.Events,
			"deliveries", p.Deliveries, "attempts", p.Attempts, "inbox_events", p.InboxEvents, "media", p.Media,
			"board_items", p.BoardItems)
	}
	return nil
}

// Pruned counts what Prune removed.
type Pruned struct {
	IdempotencyKeys, Events, Deliveries, Attempts, InboxEvents, Media, BoardItems int
}

// Prune removes records past their retention as of now: idempotency keys,
// fanned-out events, applied engine events, board items past their board's
// memory, uploaded media past MediaRetention,
// and finished deliveries with their attempts. Pending work is
// never removed.
func (h *Handlers) Prune(ctx context.Context, now time.Time) (Pruned, error) {
	ctx = viewer.SystemContext(ctx)
	var p Pruned
	var err error
	if p.IdempotencyKeys, err = h.Client.IdempotencyKey.Delete().
		Where(idempotencykey.CreatedAtLT(now.Add(-KeepIdempotencyKeys))).Exec(ctx); err != nil {
		return p, err
	}
	if p.Events, err = h.Client.Event.Delete().
		Where(event.FannedOutAtLT(now.Add(-KeepEvents))).Exec(ctx); err != nil {
		return p, err
	}
	if p.InboxEvents, err = h.Client.InboxEvent.Delete().Where(inboxevent.Or(
		inboxevent.AppliedAtLT(now.Add(-KeepEvents)), inboxevent.DeadAtLT(now.Add(-KeepDeliveries)))).Exec(ctx); err != nil {
		return p, err
	}
	old := delivery.And(delivery.StatusNEQ(DeliveryPending), delivery.UpdatedAtLT(now.Add(-KeepDeliveries)))
	if p.Attempts, err = h.Client.DeliveryAttempt.Delete().
		Where(deliveryattempt.HasDeliveryWith(old)).Exec(ctx); err != nil {
		return p, err
	}
	if p.Deliveries, err = h.Client.Delivery.Delete().Where(old).Exec(ctx); err != nil {
		return p, err
	}
	if p.BoardItems, err = boards.Purge(ctx, h.Client, now); err != nil {
		return p, err
	}
	if h.MediaRetention > 0 {
		p.Media, err = media.Prune(ctx, h.Client, now.Add(-h.MediaRetention))
	}
	return p, err
}
