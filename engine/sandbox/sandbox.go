// Package sandbox is a simulated messaging network that runs inside the process. It
// behaves like the real one: the network confirms at once, acks arrive over time,
// and the recipient's number decides what happens (see Engine). Like the real
// network it outlives Switchboard's processes: what it carried and what it will
// report are kept in the database, so a restart neither delivers a message twice
// nor loses an ack.
package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/sandboxevent"
	"github.com/switchboardhq/switchboard/ent/sandboxsend"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/viewer"
)

// Network is the sandbox network: the engines of its workspaces, its memory of
// the wire ids it carried and the events it will report, kept in the database.
type Network struct {
	client *ent.Client
	delay  time.Duration
	sink   engine.Sink

	wakeOnce  sync.Once
	wake      chan struct{} // a send in this process scheduled events
	busyUntil atomic.Int64  // unix nanos of the last event this process scheduled

	mu     sync.Mutex
	worlds map[string]*world // by workspace, built on first use
	synced map[string]bool   // workspaces whose history was reported
}

// scheduled notes that this process scheduled events due until last.
func (n *Network) scheduled(last time.Time) {
	for {
		cur := n.busyUntil.Load()
		if last.UnixNano() <= cur || n.busyUntil.CompareAndSwap(cur, last.UnixNano()) {
			break
		}
	}
	n.wakeOnce.Do(func() { n.wake = make(chan struct{}, 1) })
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// NewNetwork returns a sandbox network whose acks are spaced by delay and
// reported to sink.
func NewNetwork(client *ent.Client, delay time.Duration, sink engine.Sink) *Network {
	return &Network{client: client, delay: delay, sink: sink, worlds: map[string]*world{}, synced: map[string]bool{}}
}

// Engine returns a new engine session of the network for a workspace.
func (n *Network) Engine(workspaceID string) *Engine {
	return &Engine{net: n, id: "sandbox-" + switchboard.RandomToken(5), workspaceID: workspaceID}
}

// pumpBatch bounds the events one pass reports.
const pumpBatch = 500

// KeepWireIDs is how long the network remembers a wire id it carried.
const KeepWireIDs = 7 * 24 * time.Hour

// Run reports the network's due events until ctx is done, and forgets old wire
// ids hourly. It polls every min while events come due and backs off to max when
// none do; a send in this process starts it again from min.
func (n *Network) Run(ctx context.Context, min, max time.Duration) {
	n.wakeOnce.Do(func() { n.wake = make(chan struct{}, 1) })
	lastForget := time.Now()
	poll.Loop(ctx, min, max, n.wake, func(ctx context.Context) bool {
		if time.Since(lastForget) > time.Hour {
			lastForget = time.Now()
			if _, err := n.Forget(ctx, time.Now().Add(-KeepWireIDs)); err != nil {
				slog.Warn("sandbox: forgetting old wire ids failed", "err", err)
			}
		}
		found := false
		for ctx.Err() == nil {
			reported, err := n.ReportDue(context.WithoutCancel(ctx), time.Now())
			if err != nil && ctx.Err() == nil {
				slog.Warn("sandbox: reporting events failed; retrying", "err", err)
			}
			found = found || reported > 0
			if reported < pumpBatch || err != nil {
				break
			}
		}
		// Keep polling often until what this process scheduled has come due.
		return found || time.Now().UnixNano() <= n.busyUntil.Load()
	})
}

// ReportDue reports up to one batch of events due by now to the sink, oldest
// first, and forgets each one the sink stored. An event whose report fails stays
// and is reported again; the sink stores an event once per id, so one reported
// twice (by a crash in between, or by two processes) is stored once.
func (n *Network) ReportDue(ctx context.Context, now time.Time) (int, error) {
	sys := viewer.SystemContext(ctx)
	due, err := n.client.SandboxEvent.Query().Where(sandboxevent.DueAtLTE(now)).
		Order(ent.Asc(sandboxevent.FieldDueAt)).Limit(pumpBatch).All(sys)
	if err != nil {
		return 0, err
	}
	var done []string
	var firstErr error
	for _, row := range due {
		var ev engine.Event
		if err := json.Unmarshal(row.Payload, &ev); err != nil {
			slog.Error("sandbox: dropping an undecodable event", "event", row.ID, "err", err)
			done = append(done, row.ID)
			continue
		}
		ev.ID, ev.WorkspaceID, ev.At = row.ID, row.WorkspaceID, row.DueAt
		if err := n.sink.HandleEvent(ctx, ev); err != nil {
			firstErr = err
			break // keep the order: the rest waits for this one
		}
		done = append(done, row.ID)
	}
	if len(done) > 0 {
		if _, err := n.client.SandboxEvent.Delete().Where(sandboxevent.IDIn(done...)).Exec(sys); err != nil {
			return len(done), err
		}
	}
	return len(done), firstErr
}

// Forget drops the network's memory of wire ids carried before before, which
// bounds its size; a resend of a message older than that is not expected.
func (n *Network) Forget(ctx context.Context, before time.Time) (int, error) {
	return n.client.SandboxSend.Delete().Where(sandboxsend.CreatedAtLT(before)).Exec(viewer.SystemContext(ctx))
}

// Engine is one sandbox engine session of one workspace. The last digits of the
// recipient decide the fate of a message:
//
//	...0000  rejected: the number is not on the network (the send fails)
//	...1111  received after 1x the ack delay, never read
//	...2222  received, read after 2x; the contact reacts 👍 (and votes for the first
//	         option of a poll), replies quoting it after 2.5x, edits the reply after 3x
//	...4444  received, read after 2x, replies after 2.5x and deletes the reply after 3x
//	other    received after 1x, read after 2x; voice messages are played after 3x
//
// Simulate injects any other event (group changes, for instance).
type Engine struct {
	net         *Network
	id          string
	workspaceID string

	mu     sync.Mutex
	closed bool
}

// ID implements engine.Engine.
func (e *Engine) ID() string { return e.id }

// Kind implements engine.Engine: the sandbox stands in for a server-side gateway.
func (e *Engine) Kind() string { return engine.KindGateway }

// Close ends the session. What the network will still report stays in the
// database and is reported all the same.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return nil
}

// Send implements engine.Engine. The network remembers every wire id it carried:
// a resend is answered with the same key and delivered no second time.
func (e *Engine) Send(ctx context.Context, m engine.Outgoing) (engine.Key, error) {
	if err := ctx.Err(); err != nil {
		return engine.Key{}, err
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return engine.Key{}, fmt.Errorf("sandbox engine %s is closed", e.id)
	}
	digits := recipientDigits(m.To)
	if strings.HasSuffix(digits, "0000") {
		return engine.Key{}, fmt.Errorf("%w: %s is not on the network", engine.ErrRejected, m.To)
	}
	key := engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	now := time.Now()
	tx, err := e.net.client.Tx(ctx)
	if err != nil {
		return engine.Key{}, err
	}
	defer func() { _ = tx.Rollback() }()
	sendID := e.workspaceID + ":" + m.WireID
	n, err := tx.SandboxSend.Update().Where(sandboxsend.ID(sendID)).AddResends(1).Save(ctx)
	if err != nil {
		return engine.Key{}, err
	} else if n > 0 {
		return key, tx.Commit() // carried before: not delivered again
	}
	if err := tx.SandboxSend.Create().SetID(sendID).SetWireID(m.WireID).SetRemote(m.To).SetCreatedAt(now).Exec(ctx); err != nil {
		if ent.IsConstraintError(err) {
			return key, nil // a concurrent resend carried it
		}
		return engine.Key{}, err
	}
	script := e.script(m, key, digits)
	creates := make([]*ent.SandboxEventCreate, len(script))
	for i, s := range script {
		payload, err := json.Marshal(s.ev)
		if err != nil {
			return engine.Key{}, err
		}
		creates[i] = tx.SandboxEvent.Create().SetDueAt(now.Add(time.Duration(s.factor * float64(e.net.delay)))).SetPayload(payload)
	}
	if err := tx.SandboxEvent.CreateBulk(creates...).Exec(ctx); err != nil {
		return engine.Key{}, err
	}
	if err := tx.Commit(); err != nil {
		return engine.Key{}, err
	}
	e.net.scheduled(now.Add(time.Duration(script[len(script)-1].factor * float64(e.net.delay))))
	return key, nil
}

// step is an event the network reports factor times the ack delay after a send.
type step struct {
	factor float64
	ev     engine.Event
}

// script is what the network will report about a message it carried.
func (e *Engine) script(m engine.Outgoing, key engine.Key, digits string) []step {
	out := []step{{1, e.event(engine.Event{Type: engine.EventAck, Key: key, Ack: engine.AckDevice})}}
	if strings.HasSuffix(digits, "1111") {
		return out
	}
	out = append(out, step{2, e.event(engine.Event{Type: engine.EventAck, Key: key, Ack: engine.AckRead})})
	if m.MediaKind == "voice" {
		out = append(out, step{3, e.event(engine.Event{Type: engine.EventAck, Key: key, Ack: engine.AckPlayed})})
	}
	talkative, deleter := strings.HasSuffix(digits, "2222"), strings.HasSuffix(digits, "4444")
	if !talkative && !deleter {
		return out
	}
	contact := engine.Incoming{From: m.To, SenderName: "Sandbox " + digits[max(0, len(digits)-4):]}
	if talkative {
		out = append(out, step{2.1, e.event(engine.Event{Type: engine.EventReaction, Key: key, Reaction: "👍", Message: &contact})})
		if m.Type == "poll" && len(m.PollOptions) > 0 {
			out = append(out, step{2.2, e.event(engine.Event{Type: engine.EventPollVote, Key: key, Votes: m.PollOptions[:1], Message: &contact})})
		}
	}
	replyKey := engine.Key{FromMe: false, Remote: m.To, ID: "3EB1" + strings.ToUpper(switchboard.RandomToken(9))}
	reply := contact
	reply.Key, reply.Type, reply.Text, reply.QuotedKey = replyKey, "text", "Thanks, got it!", key.Serialized()
	out = append(out, step{2.5, e.event(engine.Event{Type: engine.EventMessage, Key: replyKey, Message: &reply})})
	if talkative {
		edited := reply
		edited.Text = "Thanks, got it! 🙌"
		out = append(out, step{3, e.event(engine.Event{Type: engine.EventEdited, Key: replyKey, Message: &edited})})
	} else {
		out = append(out, step{3, e.event(engine.Event{Type: engine.EventRevoked, Key: replyKey, Message: &reply})})
	}
	return out
}

func (e *Engine) event(ev engine.Event) engine.Event {
	ev.WorkspaceID, ev.EngineID = e.workspaceID, e.id
	return ev
}

// Simulate reports ev as if the network had produced it now.
func (e *Engine) Simulate(ctx context.Context, ev engine.Event) error {
	ev = e.event(ev)
	ev.ID, ev.At = switchboard.NewID("sbe"), time.Now()
	return e.net.sink.HandleEvent(ctx, ev)
}

func recipientDigits(jid string) string {
	user, _, _ := strings.Cut(jid, "@")
	return strings.TrimPrefix(user, "+")
}
