// Package dispatch is the one way a message reaches an engine: claim it (pending
// to sending, under a claim token, with its wire key), hand it to the engine, and
// record what the engine said. The asynq dispatch task (Dispatch) and a direct send
// (Claim in the transaction that stores the message, then Send) both go through it.
package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/linkpreview"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
)

// ExpireAfter is how long a due message waits for an engine before it expires.
const ExpireAfter = 24 * time.Hour

// Engines finds the engines that send a workspace's messages (*engine.Registry).
type Engines interface {
	// Pick returns an engine of the workspace, or engine.ErrNoEngine.
	Pick(ctx context.Context, workspaceID string) (engine.Engine, error)
	// Find returns the engine engineID of the workspace while it is connected,
	// or engine.ErrDisconnected.
	Find(ctx context.Context, workspaceID, engineID string) (engine.Engine, error)
	// Provided returns the workspace's sandbox engine, or engine.ErrNoEngine.
	Provided(ctx context.Context, workspaceID string) (engine.Engine, error)
}

// Queue queues the dispatch task of a message (*jobs.Queue).
type Queue interface {
	// Dispatch queues the sending of a message at at (now when zero); queued
	// reports whether a task was added.
	Dispatch(ctx context.Context, workspaceID, messageID string, at time.Time) (queued bool, err error)
}

// Dispatcher claims, sends and records messages.
type Dispatcher struct {
	Client  *ent.Client
	Engines Engines
	// Queue queues the retry of a direct send the engine failed for now; nil
	// leaves it to the reconciler.
	Queue Queue
	// Previews fetches the preview of a text's first link; nil sends none.
	Previews *linkpreview.Fetcher

	batcher atomic.Pointer[poll.Batcher[*request]] // set while Run runs
	dueOnce sync.Once
	due     chan struct{} // the places of due batches (duePlaces)
}

// Dispatch sends the message messageID of workspaceID through an engine of the
// workspace (see Route): the body of a dispatch task. While Run runs, the message joins the
// batch of every dispatch running at the same moment (see dispatchBatch);
// otherwise it is a batch of its own. A message that is gone, no longer pending
// or claimed by another run is left alone (nil); one due later than a second from
// now is left to the task of its new time (nil). The error is for the task to
// return: engine.ErrNoEngine or the engine's while the message waits for a retry.
func (d *Dispatcher) Dispatch(ctx context.Context, workspaceID, messageID string) error {
	for {
		res := d.submit(ctx, workspaceID, messageID)
		if res.early == nil {
			return res.err
		}
		if wait, err := poll.WaitOutRemainder(ctx, res.early); err != nil {
			return err
		} else if wait > 0 {
			return nil // rescheduled: the task for the new time is queued
		}
	}
}

// submit hands a dispatch to the running batcher, or runs it as a batch of its
// own when none runs, and waits for its outcome.
func (d *Dispatcher) submit(ctx context.Context, workspaceID, messageID string) result {
	r := &request{workspaceID: workspaceID, messageID: messageID, done: make(chan result, 1)}
	b := d.batcher.Load()
	if b == nil {
		d.dispatchBatch(ctx, []*request{r})
		return <-r.done
	}
	if err := b.Send(ctx, r); err != nil {
		return result{err: err}
	}
	select {
	case res := <-r.done:
		return res
	case <-ctx.Done():
		// The batch goes on without this task; the claim keeps it from being sent
		// twice, and a message left pending is dispatched by the retry.
		return result{err: ctx.Err()}
	}
}

// Claim moves m, pending, to sending inside tx under a new claim token and with
// its wire key, as a dispatch claims it: the claim of a direct send, taken in the
// transaction that stores the message. It returns the claimed message, to hand to
// Send, or ErrNotClaimed when m was no longer pending.
func Claim(ctx context.Context, tx *ent.Tx, m *ent.Message) (*ent.Message, error) {
	won, err := messaging.Claim(ctx, tx, []*ent.Message{m}, wireKey)
	if err != nil {
		return nil, err
	} else if len(won) == 0 {
		return nil, ErrNotClaimed
	}
	return won[0], nil
}

// ErrNotClaimed says a message to claim was no longer pending.
var ErrNotClaimed = errors.New("dispatch: message not pending")

// wireKey is the network key a message is claimed with: its wire id, derived from
// its id, so that a resend carries the same one.
func wireKey(m *ent.Message) engine.Key {
	return engine.Key{FromMe: true, Remote: m.To, ID: engine.WireID(m.ID)}
}

// Send hands a claimed (sending) message to eng and records the outcome:
// confirmed, failed when the network rejected it, or handed back to pending when
// the engine failed for now; then its dispatch task is queued for a retry and the
// engine's error returned.
func (d *Dispatcher) Send(ctx context.Context, eng engine.Engine, m *ent.Message) error {
	batch := []claimed{{m: m, eng: eng}}
	err := d.recordSent(ctx, batch, d.sendAll(ctx, batch))[0]
	if err != nil && d.Queue != nil {
		if _, qerr := d.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, time.Time{}); qerr != nil {
			slog.Warn("enqueue dispatch failed; the reconciler will retry", "message", m.ID, "err", qerr)
		}
	}
	return err
}

// Release hands a claimed (sending) message back to pending if its claim is still
// the one m was read with; a claim taken since is left alone. The reconciler
// releases the claims of runs that died this way.
func (d *Dispatcher) Release(ctx context.Context, m *ent.Message) error {
	return storage.WithTx(ctx, d.Client, func(tx *ent.Tx) error {
		_, _, err := messaging.Move(ctx, tx, m, messaging.StatusPending, time.Now())
		return err
	})
}

// Outgoing converts a stored message into what an engine sends.
func Outgoing(m *ent.Message) engine.Outgoing {
	out := engine.Outgoing{
		WireID: engine.WireID(m.ID), To: m.To, Type: m.Type, Text: m.Text,
		MediaURL: m.MediaURL, MediaKind: m.MediaKind, MediaFilename: m.MediaFilename,
		PollQuestion: m.PollQuestion, PollOptions: m.PollOptions, ReplyTo: m.ReplyTo,
		Mentions: m.Mentions, LinkPreview: m.LinkPreview, Secret: m.Secret, Forwarded: m.ForwardedFrom != "",
		Location: messaging.LocationOf(m), Contacts: messaging.ContactsOf(m),
	}
	if m.PollAllowMultiple != nil {
		out.PollAllowMultiple = *m.PollAllowMultiple
	}
	return out
}
