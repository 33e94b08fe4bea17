package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/boards"
	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/ent/idempotencykey"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/storage"
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
			"deliveries", p.Deliveries, "inbox_events", p.InboxEvents, "media", p.Media,
			"board_items", p.BoardItems)
	}
	return nil
}

// Pruned counts what Prune removed. A delivery's attempts go with it (the
// foreign key cascades).
type Pruned struct {
	IdempotencyKeys, Events, Deliveries, InboxEvents, Media, BoardItems int
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
		finished = entdelivery.And(entdelivery.StatusNEQ(string(delivery.Pending)), entdelivery.UpdatedAtLT(now.Add(-KeepDeliveries)))
	)
	type part = func(*sql.Selector)
	sweeps := []struct {
		what    string
		removed *int
		sweep   sweep
	}{
		{"idempotency keys", &p.IdempotencyKeys, sweep{column: idempotencykey.FieldCreatedAt,
			read: func(ctx context.Context, c *ent.Client, page part, v any) error {
				return c.IdempotencyKey.Query().Where(keys).Modify(page).Scan(ctx, v)
			},
			remove: func(ctx context.Context, c *ent.Client, within part) (int, error) {
				return c.IdempotencyKey.Delete().Where(keys, within).Exec(ctx)
			}}},
		{"events", &p.Events, sweep{column: event.FieldFannedOutAt,
			read: func(ctx context.Context, c *ent.Client, page part, v any) error {
				return c.Event.Query().Where(events).Modify(page).Scan(ctx, v)
			},
			remove: func(ctx context.Context, c *ent.Client, within part) (int, error) {
				return c.Event.Delete().Where(events, within).Exec(ctx)
			}}},
		{"applied engine events", &p.InboxEvents, sweep{column: inboxevent.FieldAppliedAt,
			read: func(ctx context.Context, c *ent.Client, page part, v any) error {
				return c.InboxEvent.Query().Where(applied).Modify(page).Scan(ctx, v)
			},
			remove: func(ctx context.Context, c *ent.Client, within part) (int, error) {
				return c.InboxEvent.Delete().Where(applied, within).Exec(ctx)
			}}},
		{"engine events given up", &p.InboxEvents, sweep{column: inboxevent.FieldDeadAt,
			read: func(ctx context.Context, c *ent.Client, page part, v any) error {
				return c.InboxEvent.Query().Where(dead).Modify(page).Scan(ctx, v)
			},
			remove: func(ctx context.Context, c *ent.Client, within part) (int, error) {
				return c.InboxEvent.Delete().Where(dead, within).Exec(ctx)
			}}},
		{"deliveries", &p.Deliveries, sweep{column: entdelivery.FieldUpdatedAt,
			read: func(ctx context.Context, c *ent.Client, page part, v any) error {
				return c.Delivery.Query().Where(finished).Modify(page).Scan(ctx, v)
			},
			remove: func(ctx context.Context, c *ent.Client, within part) (int, error) {
				return c.Delivery.Delete().Where(finished, within).Exec(ctx)
			}}},
	}
	for _, s := range sweeps {
		n, err := s.sweep.run(ctx, h.Client)
		*s.removed += n
		if err != nil {
			return p, fmt.Errorf("prune %s: %w", s.what, err)
		}
	}
	var err error
	if p.BoardItems, err = boards.Purge(ctx, h.Client, now); err != nil {
		return p, err
	}
	if h.MediaRetention > 0 && h.Media != nil {
		p.Media, err = h.Media.Prune(ctx, now.Add(-h.MediaRetention))
	}
	return p, err
}

// pruneChunk is about how many records one prune statement removes. A backlog
// past its retention goes a chunk at a time, each in a short transaction of its
// own, so that pruning never holds many rows' locks for long nor builds one
// huge transaction.
const pruneChunk = 1000

// A sweep removes one table's records past their retention, oldest first, a
// chunk at a time: a chunk is a range of the column the retention counts from,
// read from an index on it.
type sweep struct {
	// column holds the time the retention counts from.
	column string
	// read scans, into v, the records past their retention shaped by page.
	read func(ctx context.Context, c *ent.Client, page func(*sql.Selector), v any) error
	// remove deletes the records past their retention that are within a range.
	remove func(ctx context.Context, c *ent.Client, within func(*sql.Selector)) (int, error)
}

// run removes the records a chunk at a time and counts them.
func (s sweep) run(ctx context.Context, client *ent.Client) (int, error) {
	var from *time.Time
	total := 0
	for {
		n, next, err := s.chunk(ctx, client, from)
		total += n
		if err != nil || next == nil {
			return total, err
		}
		from = next
	}
}

// chunk removes the next chunk of records past their retention, from from on
// (from the first when from is nil), and returns where the next chunk starts,
// or nil when none is left. A chunk is a range of the column: from its first
// record's time up to, not including, the time of the record after it (or
// every record of its time, when a whole chunk shares one). Its bounds are
// times read back, and a range ends before the next time rather than at the
// last one: SQLite compares the times as the text they were written as, and a
// time written with its monotonic clock reading never equals itself read back.
// A range, not a list of ids: PostgreSQL reads a range from the column's index,
// where for a list of a thousand ids (or a range open at one end, on a table
// it has no statistics of) it finds a scan of the whole table cheaper, once a
// chunk. The times are read in index order (storage.InIndexOrder), not by
// sorting every record left; nothing new enters a range in the past.
func (s sweep) chunk(ctx context.Context, client *ent.Client, from *time.Time) (int, *time.Time, error) {
	tx, err := client.Tx(storage.InIndexOrder(ctx))
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var times []struct {
		At time.Time `json:"at"`
	}
	if err := s.read(ctx, tx.Client(), func(sel *sql.Selector) {
		if from != nil {
			sel.Where(sql.GTE(sel.C(s.column), *from))
		}
		sel.Select(sql.As(sel.C(s.column), "at")).OrderBy(sel.C(s.column)).Limit(pruneChunk + 1)
	}, &times); err != nil || len(times) == 0 {
		return 0, nil, err
	}
	first := times[0].At
	var next *time.Time
	if len(times) > pruneChunk {
		t := times[pruneChunk].At
		if !t.After(first) { // a chunk's worth of one time: all of that time
			t = first.Add(time.Microsecond) // PostgreSQL keeps microseconds
		}
		next = &t
	}
	n, err := s.remove(ctx, tx.Client(), func(sel *sql.Selector) {
		sel.Where(sql.GTE(sel.C(s.column), first))
		if next != nil {
			sel.Where(sql.LT(sel.C(s.column), *next))
		}
	})
	if err != nil {
		return 0, nil, err
	}
	if err := tx.Commit(); err != nil {
		return 0, nil, err // nothing went
	}
	return n, next, nil
}
