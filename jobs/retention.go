package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"
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
// memory, uploaded media past MediaRetention, and finished deliveries with their
// attempts. Pending work is never removed.
func (h *Handlers) Prune(ctx context.Context, now time.Time) (Pruned, error) {
	ctx = viewer.SystemContext(ctx)
	var p Pruned
	// What is past its retention, table by table.
	var (
		keys     = idempotencykey.CreatedAtLT(now.Add(-KeepIdempotencyKeys))
		events   = event.FannedOutAtLT(now.Add(-KeepEvents))
		applied  = inboxevent.AppliedAtLT(now.Add(-KeepEvents))
		dead     = inboxevent.DeadAtLT(now.Add(-KeepDeliveries))
		finished = delivery.And(delivery.StatusNEQ(DeliveryPending), delivery.UpdatedAtLT(now.Add(-KeepDeliveries)))
	)
	type page = func(*sql.Selector)
	sweeps := []struct {
		what    string
		removed *int
		sweep   sweeper
	}{
		{"idempotency keys", &p.IdempotencyKeys, sweep[int]{column: idempotencykey.FieldCreatedAt,
			read: func(ctx context.Context, pg page, recs *[]expired[int]) error {
				return h.Client.IdempotencyKey.Query().Where(keys).Modify(pg).Scan(ctx, recs)
			},
			remove: func(ctx context.Context, ids []int) (int, error) {
				return h.Client.IdempotencyKey.Delete().Where(idempotencykey.IDIn(ids...), keys).Exec(ctx)
			}}},
		{"events", &p.Events, sweep[string]{column: event.FieldFannedOutAt,
			read: func(ctx context.Context, pg page, recs *[]expired[string]) error {
				return h.Client.Event.Query().Where(events).Modify(pg).Scan(ctx, recs)
			},
			remove: func(ctx context.Context, ids []string) (int, error) {
				return h.Client.Event.Delete().Where(event.IDIn(ids...), events).Exec(ctx)
			}}},
		{"applied engine events", &p.InboxEvents, sweep[string]{column: inboxevent.FieldAppliedAt,
			read: func(ctx context.Context, pg page, recs *[]expired[string]) error {
				return h.Client.InboxEvent.Query().Where(applied).Modify(pg).Scan(ctx, recs)
			},
			remove: func(ctx context.Context, ids []string) (int, error) {
				return h.Client.InboxEvent.Delete().Where(inboxevent.IDIn(ids...), applied).Exec(ctx)
			}}},
		{"engine events given up", &p.InboxEvents, sweep[string]{column: inboxevent.FieldDeadAt,
			read: func(ctx context.Context, pg page, recs *[]expired[string]) error {
				return h.Client.InboxEvent.Query().Where(dead).Modify(pg).Scan(ctx, recs)
			},
			remove: func(ctx context.Context, ids []string) (int, error) {
				return h.Client.InboxEvent.Delete().Where(inboxevent.IDIn(ids...), dead).Exec(ctx)
			}}},
		{"deliveries", &p.Deliveries, sweep[string]{column: delivery.FieldUpdatedAt,
			read: func(ctx context.Context, pg page, recs *[]expired[string]) error {
				return h.Client.Delivery.Query().Where(finished).Modify(pg).Scan(ctx, recs)
			},
			// A finished delivery gets no more attempts (a redelivery is a
			// delivery of its own), so its attempts can go first.
			remove: func(ctx context.Context, ids []string) (int, error) {
				n, err := h.Client.DeliveryAttempt.Delete().Where(deliveryattempt.DeliveryIDIn(ids...)).Exec(ctx)
				p.Attempts += n
				if err != nil {
					return 0, err
				}
				return h.Client.Delivery.Delete().Where(delivery.IDIn(ids...), finished).Exec(ctx)
			}}},
	}
	for _, s := range sweeps {
		n, err := s.sweep.run(ctx)
		*s.removed += n
		if err != nil {
			return p, fmt.Errorf("prune %s: %w", s.what, err)
		}
	}
	var err error
	if p.BoardItems, err = boards.Purge(ctx, h.Client, now); err != nil {
		return p, err
	}
	if h.MediaRetention > 0 {
		p.Media, err = media.Prune(ctx, h.Client, now.Add(-h.MediaRetention))
	}
	return p, err
}

// pruneChunk is how many records one prune statement removes. A backlog past
// its retention goes a chunk at a time, each chunk in short statements of its
// own, so that pruning never holds many rows' locks for long nor builds one
// huge transaction.
const pruneChunk = 1000

// expired is a record past its retention: its id and its cutoff column.
type expired[ID any] struct {
	ID ID        `json:"id"`
	At time.Time `json:"at"`
}

// A sweeper removes one table's records past their retention.
type sweeper interface {
	run(ctx context.Context) (int, error)
}

// A sweep removes one table's records past their retention, oldest first, a
// chunk at a time. ID is the type of the table's ids.
type sweep[ID any] struct {
	// column holds the time the retention counts from; an index on it gives
	// the records in order.
	column string
	// read scans the records past their retention, shaped by page, into recs.
	read func(ctx context.Context, page func(*sql.Selector), recs *[]expired[ID]) error
	// remove deletes those of ids still past their retention and counts them.
	remove func(ctx context.Context, ids []ID) (int, error)
}

// run removes the records chunk by chunk. Each chunk is read from where the
// last one ended (its column's last value, included: ties are not skipped, and
// what was removed is gone), so a long backlog is read once, not once a chunk.
func (s sweep[ID]) run(ctx context.Context) (int, error) {
	var from *time.Time
	total := 0
	for {
		var recs []expired[ID]
		err := s.read(ctx, func(sel *sql.Selector) {
			if from != nil {
				sel.Where(sql.GTE(sel.C(s.column), *from))
			}
			sel.Select(sel.C("id"), sql.As(sel.C(s.column), "at")).OrderBy(sel.C(s.column)).Limit(pruneChunk)
		}, &recs)
		if err != nil || len(recs) == 0 {
			return total, err
		}
		ids := make([]ID, len(recs))
		for i, r := range recs {
			ids[i] = r.ID
		}
		n, err := s.remove(ctx, ids)
		total += n
		// A short chunk was the last; one of which nothing went had changed
		// since it was read, and the next prune looks again.
		if err != nil || len(recs) < pruneChunk || n == 0 {
			return total, err
		}
		from = &recs[len(recs)-1].At
	}
}
