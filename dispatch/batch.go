package dispatch

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/linkpreview"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// A due message costs a handful of statements when it travels alone: read it,
// claim it, hand it to the engine, record the outcome. When thousands come due at
// once (a campaign, a popular sendAt) the dispatch tasks that run at the same
// moment are gathered into one batch instead: one query reads them, one
// transaction claims them, each engine gets its share in parallel (in one call when
// it takes batches), and one transaction records the outcomes. Every guarantee of
// a single dispatch holds per message: the claim is a compare-and-set with a token,
// the wire id is derived from the message id, and a message whose task is lost is
// queued again by the reconciler.

// MaxBatch bounds how many messages one batch carries.
const MaxBatch = 256

// sendParallel bounds the sends in flight to one engine that takes messages one
// at a time.
const sendParallel = 16

// request is one dispatch waiting for the outcome of its batch.
type request struct {
	workspaceID, messageID string
	done                   chan result // buffered: the batch never waits for the task
}

// result is what became of a dispatch: err for the task to return, or early, the
// time the message is due when its task ran before it.
type result struct {
	err   error
	early *time.Time
}

// claimed is a message claimed (sending) for an engine.
type claimed struct {
	m   *ent.Message
	eng engine.Engine
}

// Run gathers the dispatches that run at the same time into batches of up to
// MaxBatch, with workers batches in flight, until ctx is done. Dispatches that run
// while it does not are sent one by one.
func (d *Dispatcher) Run(ctx context.Context, workers int) {
	poll.RunBatcher(ctx, &d.batcher, workers, MaxBatch, 0, d.dispatchBatch)
}

// dispatchBatch dispatches the messages of reqs and answers each request.
func (d *Dispatcher) dispatchBatch(ctx context.Context, reqs []*request) {
	sys := viewer.SystemContext(ctx)
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = r.messageID
	}
	rows, err := d.Client.Message.Query().Where(message.IDIn(ids...)).All(sys)
	if err != nil {
		for _, r := range reqs {
			r.done <- result{err: err}
		}
		return
	}
	d.dispatchRows(ctx, reqs, rows)
}

// dispatchRows dispatches the messages of reqs, read as rows, and answers each
// request.
func (d *Dispatcher) dispatchRows(ctx context.Context, reqs []*request, rows []*ent.Message) {
	sys := viewer.SystemContext(ctx)
	byID := make(map[string]*ent.Message, len(rows))
	for _, m := range rows {
		byID[m.ID] = m
	}
	rt, err := d.newRouter(ctx, rows)
	if err != nil {
		for _, r := range reqs {
			r.done <- result{err: err}
		}
		return
	}
	now := time.Now()
	var batch []claimed
	waiting := make(map[string]*request, len(reqs))
	for _, r := range reqs {
		m := byID[r.messageID]
		switch {
		case waiting[r.messageID] != nil:
			r.done <- result{} // the same message twice: one run is enough
			continue
		case m == nil || m.WorkspaceID != r.workspaceID || messaging.StatusOf(m) != messaging.StatusPending:
			r.done <- result{} // gone, sent, cancelled, or being sent by another run
			continue
		case m.SendAt != nil && m.SendAt.After(now):
			r.done <- result{early: m.SendAt}
			continue
		}
		eng, err := rt.route(ctx, m)
		if errors.Is(err, engine.ErrNoEngine) {
			r.done <- result{err: d.noEngine(ctx, m, now)}
			continue
		} else if err != nil {
			r.done <- result{err: err}
			continue
		}
		batch = append(batch, claimed{m: m, eng: eng})
		waiting[m.ID] = r
	}
	// Claims and outcomes are redone when a crash loses them (see storage.RelaxedCommit).
	batch, err = d.claim(storage.RelaxedCommit(sys), batch)
	if err != nil {
		for _, r := range waiting {
			r.done <- result{err: err}
		}
		return
	}
	errs := d.recordSent(ctx, batch, d.sendAll(ctx, batch))
	for i, c := range batch {
		waiting[c.m.ID].done <- result{err: errs[i]}
		delete(waiting, c.m.ID)
	}
	for _, r := range waiting {
		r.done <- result{} // claimed by another run first
	}
}

// noEngine is the outcome of a due message whose workspace has no engine: it
// expires once it waited ExpireAfter, and is retried until then.
func (d *Dispatcher) noEngine(ctx context.Context, m *ent.Message, now time.Time) error {
	due := m.CreatedAt
	if m.SendAt != nil {
		due = *m.SendAt
	}
	if now.Sub(due) <= ExpireAfter {
		return engine.ErrNoEngine // retried with backoff until an engine connects
	}
	_, err := messaging.Advance(viewer.WorkspaceContext(ctx, m.WorkspaceID), d.Client, m, messaging.StatusExpired, now,
		messaging.WithReason("no engine connected within 24h"))
	return err
}

// claim moves the batch's messages from pending to sending in one transaction and
// returns those it claimed (another run may have taken some first).
func (d *Dispatcher) claim(ctx context.Context, batch []claimed) ([]claimed, error) {
	ms := make([]*ent.Message, len(batch))
	eng := make(map[string]engine.Engine, len(batch))
	for i, c := range batch {
		ms[i], eng[c.m.ID] = c.m, c.eng
	}
	var won []*ent.Message
	err := storage.WithTx(ctx, d.Client, func(tx *ent.Tx) (err error) {
		won, err = messaging.Claim(ctx, tx, ms, wireKey)
		return err
	})
	out := make([]claimed, len(won))
	for i, m := range won {
		out[i] = claimed{m: m, eng: eng[m.ID]}
	}
	return out, err
}

// sendAll hands every claimed message to its engine, the engines in parallel, and
// returns the outcomes in the batch's order. An engine that takes batches gets its
// share in one call; any other gets up to sendParallel sends at a time. A message
// that shows "typing…" first (Typing) is sent alone once its typing is over,
// beside the others.
func (d *Dispatcher) sendAll(ctx context.Context, batch []claimed) []engine.Sent {
	out := make([]engine.Sent, len(batch))
	byEngine := map[string][]int{} // by engine id
	for i, c := range batch {
		byEngine[c.eng.ID()] = append(byEngine[c.eng.ID()], i)
	}
	var wg sync.WaitGroup
	for _, idx := range byEngine {
		eng := batch[idx[0]].eng
		var plain []int
		for _, i := range idx {
			t, ok := eng.(engine.Typist)
			if typing := Typing(batch[i].m); ok && typing > 0 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := t.ShowTyping(ctx, batch[i].m.To, typing); err != nil {
						slog.Debug("typing not shown; sending all the same", "message", batch[i].m.ID, "err", err)
					}
					d.sendTo(ctx, eng, batch, []int{i}, out)
				}()
				continue
			}
			plain = append(plain, i)
		}
		if len(plain) > 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.sendTo(ctx, eng, batch, plain, out)
			}()
		}
	}
	wg.Wait()
	return out
}

// Typing is how long "typing…" shows before m goes: a text message's typing,
// set by a scheduled send's withTyping or its campaign's typingSeconds.
func Typing(m *ent.Message) time.Duration {
	if m.Type != "text" || m.TypingMs <= 0 {
		return 0
	}
	return time.Duration(m.TypingMs) * time.Millisecond
}

// sendTo hands the messages idx of batch to eng and puts their outcomes in out:
// in one call when eng takes batches, else up to sendParallel sends at a time.
func (d *Dispatcher) sendTo(ctx context.Context, eng engine.Engine, batch []claimed, idx []int, out []engine.Sent) {
	ms := make([]engine.Outgoing, len(idx))
	d.parallel(len(idx), func(k int) { ms[k] = d.outgoing(ctx, batch[idx[k]].m) })
	if b, ok := eng.(engine.BatchSender); ok {
		for k, sent := range b.SendBatch(ctx, ms) {
			out[idx[k]] = sent
		}
		return
	}
	d.parallel(len(idx), func(k int) {
		key, err := eng.Send(ctx, ms[k])
		out[idx[k]] = engine.Sent{Key: key, Err: err}
	})
}

// parallel runs do(0..n-1), up to sendParallel at a time.
func (d *Dispatcher) parallel(n int, do func(int)) {
	if n == 1 {
		do(0)
		return
	}
	sem := make(chan struct{}, sendParallel)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			do(k)
		}()
	}
	wg.Wait()
}

// outgoing is what the engine sends for m, with the preview of its first link
// fetched (and kept) when it has none yet.
func (d *Dispatcher) outgoing(ctx context.Context, m *ent.Message) engine.Outgoing {
	out := Outgoing(m)
	if m.Type != "text" || m.LinkPreview != nil || d.Previews == nil {
		return out
	}
	u := linkpreview.FirstURL(m.Text)
	if u == "" {
		return out
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	out.LinkPreview = d.Previews.Fetch(pctx, u)
	cancel()
	wctx := viewer.WorkspaceContext(ctx, m.WorkspaceID)
	if err := d.Client.Message.UpdateOneID(m.ID).SetLinkPreview(out.LinkPreview).Exec(wctx); err != nil {
		slog.Warn("link preview not saved", "message", m.ID, "err", err)
	}
	return out
}

// recordSent applies what the engine said of each claimed message, in one
// transaction: confirmed, failed when the network rejected it, or handed back to
// pending when the engine failed for now (the resend carries the same wire id);
// a message the network took or refused records the engine it went through. It
// returns, per message, the error its task returns: the engine's when it failed
// for now. When the transaction fails, the messages are recorded one by one.
// What the engine said is recorded even when ctx ends now (a shutdown): a message
// must not stay claimed for nothing.
func (d *Dispatcher) recordSent(ctx context.Context, batch []claimed, sent []engine.Sent) []error {
	ctx = storage.RelaxedCommit(viewer.SystemContext(context.WithoutCancel(ctx)))
	errs := make([]error, len(batch))
	for i, s := range sent {
		outcome := "sent"
		if errors.Is(s.Err, engine.ErrRejected) {
			outcome = "rejected"
		} else if s.Err != nil {
			outcome, errs[i] = "retrying", s.Err
		}
		metrics.Dispatches.WithLabelValues(outcome).Inc()
	}
	err := storage.WithTx(ctx, d.Client, func(tx *ent.Tx) error {
		// The usual outcome, the network took the message under the key it was
		// claimed with, is recorded for all of them in one statement (an engine
		// each), with the engine it went through; the others one by one.
		var confirmed []*ent.Message
		var others []int
		for i, c := range batch {
			if sent[i].Err == nil && sent[i].Key.Serialized() == c.m.WaSerialized {
				c.m.EngineID = c.eng.ID()
				confirmed = append(confirmed, c.m)
			} else {
				others = append(others, i)
			}
		}
		for _, i := range others {
			if err := recordEngines(ctx, tx, batch[i:i+1], sent[i:i+1]); err != nil {
				return err
			}
			if err := recordOne(ctx, tx, batch[i].m, sent[i]); err != nil {
				return err
			}
		}
		return messaging.Confirm(ctx, tx, confirmed, time.Now())
	})
	if err == nil {
		return errs
	}
	for i, c := range batch {
		one := func(tx *ent.Tx) error {
			if err := recordEngines(ctx, tx, batch[i:i+1], sent[i:i+1]); err != nil {
				return err
			}
			return recordOne(ctx, tx, c.m, sent[i])
		}
		if err := storage.WithTx(ctx, d.Client, one); err != nil {
			slog.Error("dispatch: outcome not recorded; the reconciler releases the claim", "message", c.m.ID, "err", err)
			errs[i] = cmp.Or(errs[i], err)
		}
	}
	return errs
}

// recordOne applies the engine's outcome for one claimed message inside tx.
func recordOne(ctx context.Context, tx *ent.Tx, m *ent.Message, s engine.Sent) error {
	now := time.Now()
	var err error
	switch {
	case errors.Is(s.Err, engine.ErrRejected):
		_, _, err = messaging.MoveLatest(ctx, tx, m, messaging.StatusFailed, now, messaging.WithReason(s.Err.Error()))
	case s.Err != nil:
		// Handed back only if this run still holds the claim.
		_, _, err = messaging.Move(ctx, tx, m, messaging.StatusPending, now)
	default:
		_, _, err = messaging.MoveLatest(ctx, tx, m, messaging.StatusConfirmed, now, messaging.WithKey(s.Key))
	}
	return err
}
