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
	"errors"
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
	// Phone is the account's own number (E.164, +digits) in every workspace of
	// the network (switchboard engine sandbox --phone), so that two simulated
	// numbers can serve one workspace; empty: a number derived from the
	// workspace. Set it before use.
	Phone string

	client *ent.Client
	delay  time.Duration
	sink   engine.Sink

	wakeOnce  sync.Once
	wake      chan struct{} // wakes Run: a send in this process, a listener's notification
	busyUntil atomic.Int64  // unix nanos of the last event this process scheduled

	groupsOnce sync.Once
	groupsWake chan struct{} // wakes RunGroups

	mu     sync.Mutex
	worlds map[string]*world   // by workspace, built on first use
	synced map[string]bool     // workspaces whose history was reported
	typing map[string][]Typing // by workspace, the latest maxTyping
	// profiles are the accounts' own profiles, by engine id (profile.go).
	profiles map[string]*profileState
	// blocked is each engine's block list (by workspace|engine), in the order blocked.
	blocked map[string][]string
	// timers are chats' disappearing-message timers (by
	// workspace|engine|chat; disappearing.go).
	timers map[string]uint32
	// follows are the newsletters' follow and mute states (by
	// workspace|engine|newsletter; newsletters.go).
	follows map[string]followState
	// statuses are the ids of the statuses each engine posted and did not
	// revoke (by workspace|engine; status.go).
	statuses map[string][]string
}

// scheduled notes that this process scheduled events due until last.
func (n *Network) scheduled(last time.Time) {
	for {
		cur := n.busyUntil.Load()
		if last.UnixNano() <= cur || n.busyUntil.CompareAndSwap(cur, last.UnixNano()) {
			break
		}
	}
	select {
	case n.wakeup() <- struct{}{}:
	default:
	}
}

// NewNetwork returns a sandbox network whose acks are spaced by delay and
// reported to sink.
func NewNetwork(client *ent.Client, delay time.Duration, sink engine.Sink) *Network {
	return &Network{client: client, delay: delay, sink: sink, worlds: map[string]*world{}, synced: map[string]bool{},
		typing: map[string][]Typing{}}
}

// Engine returns a new engine session of the network for a workspace.
func (n *Network) Engine(workspaceID string) *Engine {
	return &Engine{net: n, id: "sandbox-" + switchboard.RandomToken(5), workspaceID: workspaceID}
}

// EngineFor returns an engine session of the network for a workspace whose id is
// engineID (an engine row's).
func (n *Network) EngineFor(workspaceID, engineID string) *Engine {
	return &Engine{net: n, id: engineID, workspaceID: workspaceID}
}

// pumpBatch bounds the events one pass reports.
const pumpBatch = 500

// KeepWireIDs is how long the network remembers a wire id it carried.
const KeepWireIDs = 7 * 24 * time.Hour

// Run reports the network's due events until ctx is done, and forgets old wire
// ids hourly. With p.Sweep set (a wake.Listener passes every replica's inserts
// to WakeChannel), it waits after each pass until the next scheduled event is
// due, at most p.Sweep. Without it, it waits p.Min between passes while events
// come due or this process has scheduled some, and a doubling poll up to p.Max
// when none do. A send in this process starts it again from p.Min. Run fills
// in p.Wake and p.Due.
func (n *Network) Run(ctx context.Context, p poll.Pace) {
	p.Wake, p.Due = n.wakeup(), n.nextEvent
	lastForget := time.Now()
	poll.Run(ctx, p, func(ctx context.Context) poll.Outcome {
		if time.Since(lastForget) > time.Hour {
			lastForget = time.Now()
			if _, err := n.Forget(ctx, time.Now().Add(-KeepWireIDs)); err != nil {
				slog.Warn("sandbox: forgetting old wire ids failed", "err", err)
			}
		}
		found, failed := false, false
		for ctx.Err() == nil {
			reported, err := n.ReportDue(context.WithoutCancel(ctx), time.Now())
			if err != nil && ctx.Err() == nil {
				slog.Warn("sandbox: reporting events failed; retrying", "err", err)
				failed = true
			}
			found = found || reported > 0
			if reported < pumpBatch || err != nil {
				break
			}
		}
		// A pass leaves nothing due behind it. With p.Sweep set, the wait until
		// the next event is due comes from p.Due; without it, keep polling often
		// until what this process scheduled has come due.
		switch {
		case p.Sweep <= 0 && (found || time.Now().UnixNano() <= n.busyUntil.Load()):
			return poll.Found
		case failed:
			return poll.Failed
		}
		return poll.Idle
	})
}

// WakeChannel is the channel that wakes Run, for a wake.Listener to signal.
func (n *Network) WakeChannel() chan<- struct{} { return n.wakeup() }

// wakeup is the channel that wakes Run, made on first use.
func (n *Network) wakeup() chan struct{} {
	n.wakeOnce.Do(func() { n.wake = make(chan struct{}, 1) })
	return n.wake
}

// nextEvent is when the earliest scheduled event after now is due; the zero
// time when there is none.
func (n *Network) nextEvent(ctx context.Context, since time.Time) (time.Time, error) {
	rows, err := n.client.SandboxEvent.Query().Where(sandboxevent.DueAtGT(since)).
		Order(ent.Asc(sandboxevent.FieldDueAt)).Limit(1).Select(sandboxevent.FieldDueAt).All(viewer.SystemContext(ctx))
	if err != nil || len(rows) == 0 {
		return time.Time{}, err
	}
	return rows[0].DueAt, nil
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
	var evs []engine.Event
	for _, row := range due {
		var ev engine.Event
		if err := json.Unmarshal(row.Payload, &ev); err != nil {
			slog.Error("sandbox: dropping an undecodable event", "event", row.ID, "err", err)
			done = append(done, row.ID)
			continue
		}
		ev.ID, ev.WorkspaceID, ev.At = row.ID, row.WorkspaceID, row.DueAt
		evs = append(evs, ev)
	}
	var firstErr error
	if b, ok := n.sink.(engine.BatchSink); ok {
		if firstErr = b.HandleEvents(ctx, evs); firstErr == nil {
			for _, ev := range evs {
				done = append(done, ev.ID)
			}
		}
	} else {
		for _, ev := range evs {
			if err := n.sink.HandleEvent(ctx, ev); err != nil {
				firstErr = err
				break // keep the order: the rest waits for this one
			}
			done = append(done, ev.ID)
		}
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
//	...77    first known by LID only (LIDOf): received, read after 2x, reveals its
//	         number after 2.4x and replies by LID after 2.5x (lid.go)
//	...6600  received, read after 2x; the contact sends the message back after
//	         2.5x, quoting it (Echo): a location, contact cards, media, text
//	...6601 to ...6609  received, read after 2x; the contact answers after 2.5x
//	         with a message of one kind each (Kinds: image with caption, voice
//	         note, document, sticker, location, contact card, video note, two
//	         contact cards, a kind Switchboard does not know)
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
	sent := e.SendBatch(ctx, []engine.Outgoing{m})[0]
	return sent.Key, sent.Err
}

// SendBatch implements engine.BatchSender: the network carries the messages in one
// transaction, with Send's rules for each. A group the network knows refuses the
// messages of an account that is not a participant, and of one that is not an
// admin while only admins may send (announce); a group it does not know is
// carried like any chat.
func (e *Engine) SendBatch(ctx context.Context, ms []engine.Outgoing) []engine.Sent {
	out := make([]engine.Sent, len(ms))
	fail := func(err error) []engine.Sent {
		for i := range out {
			if out[i].Err == nil {
				out[i] = engine.Sent{Err: err}
			}
		}
		return out
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return fail(fmt.Errorf("sandbox engine %s is closed", e.id))
	}
	var carry []engine.Outgoing
	refused := map[string]error{} // by group, what the group's rules say to the account's messages
	for i, m := range ms {
		if strings.HasSuffix(recipientDigits(m.To), "0000") {
			out[i].Err = fmt.Errorf("%w: %s is not on the network", engine.ErrRejected, m.To)
			continue
		}
		if strings.HasSuffix(m.To, "@g.us") {
			err, seen := refused[m.To]
			if !seen {
				if err = e.mayPost(ctx, m.To); err != nil && !errors.Is(err, engine.ErrRejected) {
					return fail(err)
				}
				refused[m.To] = err
			}
			if err != nil {
				out[i].Err = err
				continue
			}
		}
		out[i].Key = engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}
		carry = append(carry, m)
	}
	if len(carry) == 0 {
		return out
	}
	err := e.carry(ctx, carry)
	if ent.IsConstraintError(err) {
		// A concurrent resend carried some of them first: this time they are known.
		err = e.carry(ctx, carry)
	}
	if err != nil {
		return fail(err)
	}
	return out
}

// carry records the messages as carried and schedules what the network will
// report about each, in one transaction; a wire id carried before is counted as a
// resend and delivered no second time.
func (e *Engine) carry(ctx context.Context, ms []engine.Outgoing) error {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	now := time.Now()
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = e.workspaceID + ":" + m.WireID
	}
	tx, err := e.net.client.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// The ids begin with the workspace's id: looked up by the primary key alone,
	// without the tenant filter on workspace_id, which PostgreSQL with no statistics
	// answered through the workspace index, reading every send of the workspace.
	sys := viewer.SystemContext(ctx)
	known, err := tx.SandboxSend.Query().Where(sandboxsend.IDIn(ids...)).IDs(sys)
	if err != nil {
		return err
	}
	if len(known) > 0 {
		if err := tx.SandboxSend.Update().Where(sandboxsend.IDIn(known...)).AddResends(1).Exec(sys); err != nil {
			return err
		}
	}
	carried := make(map[string]bool, len(known))
	for _, id := range known {
		carried[id] = true
	}
	var sends []*ent.SandboxSendCreate
	var events []*ent.SandboxEventCreate
	var last time.Time
	for i, m := range ms {
		if carried[ids[i]] {
			continue // carried before: not delivered again
		}
		sends = append(sends, tx.SandboxSend.Create().SetID(ids[i]).SetWireID(m.WireID).SetRemote(m.To).SetCreatedAt(now))
		key := engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}
		for _, s := range e.script(m, key, recipientDigits(numberOf(m.To))) {
			payload, err := json.Marshal(s.ev)
			if err != nil {
				return err
			}
			due := now.Add(time.Duration(s.factor * float64(e.net.delay)))
			if due.After(last) {
				last = due
			}
			events = append(events, tx.SandboxEvent.Create().SetDueAt(due).SetPayload(payload))
		}
	}
	if len(sends) == 0 {
		return tx.Commit()
	}
	if err := tx.SandboxSend.CreateBulk(sends...).Exec(ctx); err != nil {
		return err
	}
	if err := tx.SandboxEvent.CreateBulk(events...).Exec(ctx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	e.net.scheduled(last)
	return nil
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
		return append(append(out, e.revealSteps(m, key)...), e.kindSteps(m, key)...)
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
