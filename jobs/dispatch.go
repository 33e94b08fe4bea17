package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/music"
)

// Handlers runs Switchboard's tasks.
type Handlers struct {
	Client  *ent.Client
	Engines *engine.Registry
	Queue   *Queue
	// Dispatcher sends messages: the dispatch task's body.
	Dispatcher *dispatch.Dispatcher
	// Campaigns runs campaign steps (TypeCampaignStep tasks).
	Campaigns *campaigns.Stepper
	// Delivery makes the attempts of webhook deliveries (TypeDeliver tasks).
	Delivery *delivery.Service
	// Dialect is the database's, as ent names it ("postgres" or "sqlite3").
	Dialect string
	// MediaRetention is how long uploaded media are kept; zero keeps them.
	MediaRetention time.Duration
	// Music generates songs; nil leaves music tasks failing.
	Music *music.Generator
	// Inbox stores what the reconciler observes of engines (a lapsed session).
	Inbox engine.Sink
	// Media is the media store: it keeps the attachments of received messages
	// (TypeMediaFetch tasks), and the prune deletes expired media from it (rows
	// and bytes).
	Media *media.Store
}

// Register adds every handler to mux.
func (h *Handlers) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(TypeDispatch, h.Dispatch)
	mux.HandleFunc(TypeDue, h.Due)
	mux.HandleFunc(TypeDeliver, h.Deliver)
	mux.HandleFunc(TypeReconcile, h.Reconcile)
	mux.HandleFunc(TypePrune, h.HandlePrune)
	mux.HandleFunc(TypeMusic, h.GenerateMusic)
	mux.HandleFunc(TypeCampaignStep, h.CampaignStep)
	mux.HandleFunc(TypeMediaFetch, h.FetchMedia)
}

// RetryDelay is the asynq RetryDelayFunc of message tasks: 2s, 4s, 8s ... capped at
// one minute, so a message waiting for an engine goes out soon after one connects.
func RetryDelay(n int, _ error, _ *asynq.Task) time.Duration {
	d := 2 * time.Second << min(n, 5)
	return min(d, time.Minute)
}

// Dispatch sends one queued message through an engine of its workspace (see
// dispatch.Dispatcher.Dispatch).
func (h *Handlers) Dispatch(ctx context.Context, t *asynq.Task) error {
	var p dispatchPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	return h.Dispatcher.Dispatch(ctx, p.WorkspaceID, p.MessageID)
}

// dueAt is when a task for something due at at should run: at when it lies after
// now, else at once (the zero time).
func dueAt(at *time.Time, now time.Time) time.Time {
	if at != nil && at.After(now) {
		return *at
	}
	return time.Time{}
}

// rowLocks says the database takes FOR UPDATE SKIP LOCKED (PostgreSQL), which
// lets fan-out loops in several processes share work.
func (h *Handlers) rowLocks() bool { return h.Dialect == dialect.Postgres }
