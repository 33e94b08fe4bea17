package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/linkpreview"
	"github.com/switchboardhq/switchboard/poll"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// ExpireAfter is how long a due message waits for an engine before it expires.
const ExpireAfter = 24 * time.Hour

// Handlers runs Switchboard's tasks.
type Handlers struct {
	Client   *ent.Client
	Engines  *engine.Registry
	Queue    *Queue
	Previews *linkpreview.Fetcher
	// Sender makes webhook attempts.
	Sender *wh.Sender
	// RetrySchedule is the delay before each retry of a webhook delivery; a
	// delivery gets len(RetrySchedule)+1 attempts.
	RetrySchedule []time.Duration
	// Dialect is the database's, as ent names it ("postgres" or "sqlite3").
	Dialect string
	// MediaRetention is how long uploaded media are kept; zero keeps them.
	MediaRetention time.Duration
	// Music generates songs; nil leaves music tasks failing.
	Music *Music
	// Inbox stores what the reconciler observes of engines (a lapsed session).
	Inbox engine.Sink

	dispatcher atomic.Pointer[poll.Batcher[*dispatchRequest]] // set while RunDispatcher runs
	recorder   atomic.Pointer[poll.Batcher[*success]]         // set while RunRecorder runs
	loader     atomic.Pointer[poll.Batcher[*loadRequest]]     // set while RunLoader runs
}

// Register adds every handler to mux.
func (h *Handlers) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(TypeDispatch, h.Dispatch)
	mux.HandleFunc(TypeDeliver, h.Deliver)
	mux.HandleFunc(TypeReconcile, h.Reconcile)
	mux.HandleFunc(TypePrune, h.HandlePrune)
	mux.HandleFunc(TypeMusic, h.GenerateMusic)
	mux.HandleFunc(TypeCampaignStep, h.CampaignStep)
}

// RetryDelay is the asynq RetryDelayFunc of message tasks: 2s, 4s, 8s ... capped at
// one minute, so a message waiting for an engine goes out soon after one connects.
func RetryDelay(n int, _ error, _ *asynq.Task) time.Duration {
	d := 2 * time.Second << min(n, 5)
	return min(d, time.Minute)
}

// Dispatch sends one queued message through an engine of its workspace. While
// RunDispatcher runs, the message joins the batch of every dispatch task running
// at the same moment (see dispatchBatch); otherwise it is a batch of its own.
func (h *Handlers) Dispatch(ctx context.Context, t *asynq.Task) error {
	var p dispatchPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	for {
		res := h.submit(ctx, p)
		if res.early == nil {
			return res.err
		}
		if wait, err := waitOutRemainder(ctx, res.early); err != nil {
			return err
		} else if wait > 0 {
			return nil // rescheduled: the task for the new time is queued
		}
	}
}

// submit hands a dispatch to the running dispatcher, or runs it as a batch of its
// own when none runs, and waits for its outcome.
func (h *Handlers) submit(ctx context.Context, p dispatchPayload) dispatchResult {
	r := &dispatchRequest{p: p, done: make(chan dispatchResult, 1)}
	d := h.dispatcher.Load()
	if d == nil {
		h.dispatchBatch(ctx, []*dispatchRequest{r})
		return <-r.done
	}
	if err := d.Send(ctx, r); err != nil {
		return dispatchResult{err: err}
	}
	select {
	case res := <-r.done:
		return res
	case <-ctx.Done():
		// The batch goes on without this task; the claim keeps it from being sent
		// twice, and a message left pending is dispatched by the retry.
		return dispatchResult{err: ctx.Err()}
	}
}

// waitOutRemainder handles a task that runs before its time at. asynq schedules in
// whole seconds, so a task may start up to a second early: a remainder of at most a
// second is slept away and 0 returned; a longer one is returned for the caller to
// reschedule. A nil at is due.
func waitOutRemainder(ctx context.Context, at *time.Time) (time.Duration, error) {
	if at == nil {
		return 0, nil
	}
	wait := time.Until(*at)
	if wait <= 0 {
		return 0, nil
	} else if wait > time.Second {
		return wait, nil
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(wait):
		return 0, nil
	}
}

// dueAt is when a task for something due at at should run: at when it lies after
// now, else at once (the zero time).
func dueAt(at *time.Time, now time.Time) time.Time {
	if at != nil && at.After(now) {
		return *at
	}
	return time.Time{}
}

// Send hands a claimed (sending) message to the engine and records the outcome:
// confirmed, failed when the network rejected it, or handed back to pending (and
// the error returned) when the engine failed for now.
func (h *Handlers) Send(ctx context.Context, eng engine.Engine, m *ent.Message) error {
	batch := []claimed{{m: m, eng: eng}}
	return h.recordSent(ctx, batch, h.sendAll(ctx, batch))[0]
}

// Outgoing converts a stored message into what an engine sends.
func Outgoing(m *ent.Message) engine.Outgoing {
	out := engine.Outgoing{
		WireID: engine.WireID(m.ID), To: m.To, Type: m.Type, Text: m.Text,
		MediaURL: m.MediaURL, MediaKind: m.MediaKind, MediaFilename: m.MediaFilename,
		PollQuestion: m.PollQuestion, PollOptions: m.PollOptions, ReplyTo: m.ReplyTo,
		Mentions: m.Mentions, LinkPreview: m.LinkPreview, Secret: m.Secret,
	}
	if m.PollAllowMultiple != nil {
		out.PollAllowMultiple = *m.PollAllowMultiple
	}
	return out
}

// rowLocks says the database takes FOR UPDATE SKIP LOCKED (PostgreSQL), which
// lets fan-out loops in several processes share work.
func (h *Handlers) rowLocks() bool { return h.Dialect == dialect.Postgres }
