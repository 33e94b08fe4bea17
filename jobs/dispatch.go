package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/linkpreview"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/viewer"
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
	// RowLocks says the database takes FOR UPDATE SKIP LOCKED (PostgreSQL), which
	// lets fan-out loops in several processes share work.
	RowLocks bool
	// MediaRetention is how long uploaded media are kept; zero keeps them.
	MediaRetention time.Duration
	// Music generates songs; nil leaves music tasks failing.
	Music *Music

	inboxOnce sync.Once
	inboxWake chan struct{} // a stored event waits for the applier
}

// Register adds every handler to mux.
func (h *Handlers) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(TypeDispatch, h.Dispatch)
	mux.HandleFunc(TypeDeliver, h.Deliver)
	mux.HandleFunc(TypeReconcile, h.Reconcile)
	mux.HandleFunc(TypeMusic, h.GenerateMusic)
}

// RetryDelay is the asynq RetryDelayFunc of message tasks: 2s, 4s, 8s ... capped at
// one minute, so a message waiting for an engine goes out soon after one connects.
func RetryDelay(n int, _ error, _ *asynq.Task) time.Duration {
	d := 2 * time.Second << min(n, 5)
	return min(d, time.Minute)
}

// Dispatch sends one queued message through an engine of its workspace. It claims
// the message (pending -> sending) before sending, so two runs never both send it,
// and the engine deduplicates a resend of the same wire id after a crash.
func (h *Handlers) Dispatch(ctx context.Context, t *asynq.Task) error {
	var p dispatchPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	ctx = viewer.WorkspaceContext(ctx, p.WorkspaceID)
	m, err := h.Client.Message.Get(ctx, p.MessageID)
	if ent.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if m.Status != messaging.StatusPending {
		return nil // sent, cancelled or being sent by another run
	}
	if wait, err := waitOutRemainder(ctx, m.SendAt); err != nil {
		return err
	} else if wait > 0 {
		return nil // rescheduled: the task for the new time is queued
	}
	now := time.Now()
	eng, err := h.Engines.Pick(ctx, p.WorkspaceID)
	if errors.Is(err, engine.ErrNoEngine) {
		due := m.CreatedAt
		if m.SendAt != nil {
			due = *m.SendAt
		}
		if now.Sub(due) > ExpireAfter {
			return h.move(ctx, m, messaging.StatusExpired, messaging.WithReason("no engine connected within 24h"))
		}
		return err // retried with backoff until an engine connects
	} else if err != nil {
		return err
	}
	key := engine.Key{FromMe: true, Remote: m.To, ID: engine.WireID(m.ID)}
	if err := messaging.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		var ok bool
		m, ok, err = messaging.Move(ctx, tx, m, messaging.StatusSending, now, messaging.WithKey(key))
		if !ok && err == nil {
			err = errClaimLost
		}
		return err
	}); errors.Is(err, errClaimLost) {
		return nil
	} else if err != nil {
		return err
	}
	return h.Send(ctx, eng, m)
}

var errClaimLost = errors.New("jobs: message claimed by another run")

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

// Send hands a claimed (sending) message to the engine and records the outcome.
func (h *Handlers) Send(ctx context.Context, eng engine.Engine, m *ent.Message) error {
	out := Outgoing(m)
	if m.Type == "text" && m.LinkPreview == nil && h.Previews != nil {
		if u := linkpreview.FirstURL(m.Text); u != "" {
			pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			out.LinkPreview = h.Previews.Fetch(pctx, u)
			cancel()
			if err := h.Client.Message.UpdateOneID(m.ID).SetLinkPreview(out.LinkPreview).Exec(ctx); err != nil {
				slog.Warn("link preview not saved", "message", m.ID, "err", err)
			}
		}
	}
	key, err := eng.Send(ctx, out)
	// What the engine said is recorded even when the task's context ends now (a
	// shutdown): the message must not stay claimed for nothing.
	ctx = context.WithoutCancel(ctx)
	switch {
	case errors.Is(err, engine.ErrRejected):
		return h.move(ctx, m, messaging.StatusFailed, messaging.WithReason(err.Error()))
	case err != nil:
		// Transient: hand it back to the queue, if this run still holds the claim;
		// the retry resends the same wire id.
		if merr := h.release(ctx, m); merr != nil {
			slog.Error("dispatch: message left in sending until the reconciler releases it", "message", m.ID, "err", merr)
		}
		return err
	}
	return h.move(ctx, m, messaging.StatusConfirmed, messaging.WithKey(key))
}

// release hands a claimed (sending) message back to pending if its claim is still
// the one m was read with; a claim taken since is left alone.
func (h *Handlers) release(ctx context.Context, m *ent.Message) error {
	return messaging.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		_, _, err := messaging.Move(ctx, tx, m, messaging.StatusPending, time.Now())
		return err
	})
}

// move applies one lifecycle transition (see messaging.Advance).
func (h *Handlers) move(ctx context.Context, m *ent.Message, to string, changes ...messaging.Change) error {
	_, err := messaging.Advance(ctx, h.Client, m, to, time.Now(), changes...)
	return err
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
