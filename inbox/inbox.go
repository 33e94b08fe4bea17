// Package inbox is the durable path of what engines report, and the one writer
// of the conversation store (chats, messages, contacts, group members). An Inbox
// is the engines' sink: it stores each event as it arrives, applies the stored
// events in the order the network observed them, and lets a read wait until what
// was reported before it is applied (WaitApplied).
package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// Inbox stores engine events and applies them; it implements engine.Sink and
// engine.BatchSink. The zero value with a Client is ready to use.
type Inbox struct {
	Client *ent.Client
	// Media keeps the attachments of incoming messages on arrival; nil leaves
	// them to be downloaded when first read.
	Media *Downloads
	// Calls answers incoming calls on arrival (calls.go); nil stores them only.
	Calls CallHandler

	once  sync.Once
	woken chan struct{} // a stored event waits for the applier
}

var _ engine.BatchSink = (*Inbox)(nil)

// The inbox is the durable path of what engines report. HandleEvent stores an
// event as it arrives (one insert, deduplicated by the engine's event id); the
// applier claims stored events in batches with a lease token, applies each one in
// the same transaction that marks it applied (so it takes effect exactly once), and
// retries a failure with backoff for hours before it gives up and says why.
const (
	inboxBatch = 500
	// inboxLease is how long a claimed batch is reserved for its applier; an
	// applier that dies leaves its events to be claimed again after it.
	inboxLease = time.Minute
	// MaxAttempts is how many times an event is tried before it is dead.
	MaxAttempts = 16
)

// backoff is the wait after the n-th failed attempt: 1s doubling to 15 min;
// MaxAttempts attempts span about two hours.
func backoff(n int) time.Duration {
	return min(time.Second<<min(n-1, 10), 15*time.Minute)
}

// HandleEvent implements engine.Sink: it stores what an engine observed in the
// inbox. Once it returns nil the event will be applied, whatever happens to this
// process; an error means it was not stored and the engine should report it again.
func (h *Inbox) HandleEvent(ctx context.Context, ev engine.Event) error {
	return h.HandleEvents(ctx, []engine.Event{ev})
}

// HandleEvents implements engine.BatchSink: HandleEvent for many events, in one
// transaction of inserts of at most storeChunk events each. An event reported
// before is stored once. An event that can never be applied (engine.Event.Validate)
// is not stored but logged: it would only fail for hours, and hold up the later
// events of its order key meanwhile.
func (h *Inbox) HandleEvents(ctx context.Context, evs []engine.Event) error {
	if len(evs) == 0 {
		return nil
	}
	evs = answerCalls(ctx, h.Calls, evs)
	creates := make([]*ent.InboxEventCreate, 0, len(evs))
	refused := 0
	for _, ev := range evs {
		if ev.WorkspaceID == "" {
			return fmt.Errorf("inbox: %s event %q names no workspace", ev.Type, ev.ID)
		}
		if err := storable(ev); err != nil {
			if refused++; refused == 1 {
				slog.Warn("inbox: invalid event refused", "workspace", ev.WorkspaceID, "engine", ev.EngineID,
					"event", ev.ID, "err", err)
			}
			continue
		}
		if ev.At.IsZero() {
			ev.At = time.Now()
		}
		dedupe := dedupeKey(ev)
		payload, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("inbox: encode %s event: %w", ev.Type, err)
		}
		creates = append(creates, h.Client.InboxEvent.Create().SetWorkspaceID(ev.WorkspaceID).SetDedupeKey(dedupe).
			SetType(string(ev.Type)).SetSubject(ev.OrderKey()).SetPayload(payload).SetAt(ev.At))
	}
	if refused > 1 {
		slog.Warn("inbox: invalid events refused", "count", refused)
	}
	if len(creates) == 0 {
		return nil
	}
	if err := h.storeEvents(viewer.SystemContext(ctx), creates); err != nil {
		return fmt.Errorf("inbox: store %d events: %w", len(creates), err)
	}
	h.wake()
	return nil
}

// dedupeKey is what makes an event the same one reported twice: its id as the
// engine that reported it gives it. Event ids are the engine's own (a gateway's
// are the network's message ids), so two numbers of one workspace may report the
// same id for different events; an event without an id is always new, one
// without an engine (the server's own) is keyed by its id alone.
func dedupeKey(ev engine.Event) string {
	switch {
	case ev.ID == "":
		return switchboard.NewID("ev")
	case ev.EngineID == "":
		return ev.ID
	}
	return ev.EngineID + "|" + ev.ID
}

// storeChunk bounds the events one insert stores: about ten parameters each,
// far below the databases' limits on a statement's parameters (SQLite 32,766,
// PostgreSQL 65,535), which a larger batch would hit.
const storeChunk = 500

// storeEvents inserts the events, the rows of one chunk at a time, all or none.
// The events may come from several workspaces; each row names its own.
func (h *Inbox) storeEvents(ctx context.Context, creates []*ent.InboxEventCreate) error {
	insert := func(c *ent.Client, part []*ent.InboxEventCreate) error {
		return c.InboxEvent.CreateBulk(part...).
			OnConflict(sql.ConflictColumns(inboxevent.FieldWorkspaceID, inboxevent.FieldDedupeKey)).DoNothing().
			Exec(ctx)
	}
	if len(creates) <= storeChunk {
		return insert(h.Client, creates)
	}
	return storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		for start := 0; start < len(creates); start += storeChunk {
			if err := insert(tx.Client(), creates[start:min(start+storeChunk, len(creates))]); err != nil {
				return err
			}
		}
		return nil
	})
}

// storable reports why an event can never be applied, or nil. Session events are
// the server's own (the hub's, the reconciler's); any other event is checked as
// engine.Event.Validate checks it.
func storable(ev engine.Event) error {
	if ev.Type == engine.EventConnected || ev.Type == engine.EventGone {
		return nil
	}
	return ev.Validate()
}

// wake tells the applier that an event is waiting.
func (h *Inbox) wake() {
	select {
	case h.wakeup() <- struct{}{}:
	default:
	}
}

// wakeup is the channel that wakes the applier, made on first use.
func (h *Inbox) wakeup() chan struct{} {
	h.once.Do(func() { h.woken = make(chan struct{}, 1) })
	return h.woken
}

// WaitApplied waits until every event of the workspace that the inbox stored
// before at is applied (or given up), or ctx ends. Resolvers call it after
// asking an engine for something it reports through the sink, to read their
// own writes.
func (h *Inbox) WaitApplied(ctx context.Context, at time.Time) error {
	for {
		pending, err := h.Client.InboxEvent.Query().Where(inboxPendingBefore(at)).Exist(ctx)
		if err != nil || !pending {
			return err
		}
		h.wake()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// inboxPendingBefore selects the events stored before at that are on their way
// to being applied. An event that failed already waits on its backoff (for up to
// hours); a reader waiting for it would only time out, so it is left out.
func inboxPendingBefore(at time.Time) predicate.InboxEvent {
	return inboxevent.And(inboxevent.CreatedAtLTE(at), inboxevent.AppliedAtIsNil(), inboxevent.DeadAtIsNil(),
		inboxevent.Attempts(0))
}
