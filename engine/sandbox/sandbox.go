// Package sandbox is a simulated messaging network that runs inside the process. It
// behaves like the real one: the network confirms at once, acks arrive over time,
// and the recipient's number decides what happens (see Engine).
package sandbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Engine is the sandbox engine of one workspace. The last digits of the recipient
// decide the fate of a message:
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
	id          string
	workspaceID string
	delay       time.Duration
	sink        engine.Sink

	mu     sync.Mutex
	sent   map[string]engine.Key // by wire id, so a resend is not delivered twice
	timers map[int]*time.Timer   // pending acks, by sequence number
	seq    int
	closed bool
}

// New returns a sandbox engine for a workspace whose acks are spaced by delay and
// reported to sink.
func New(workspaceID string, delay time.Duration, sink engine.Sink) *Engine {
	return &Engine{
		id:          "sandbox-" + switchboard.RandomToken(5),
		workspaceID: workspaceID,
		delay:       delay,
		sink:        sink,
		sent:        map[string]engine.Key{},
		timers:      map[int]*time.Timer{},
	}
}

// ID implements engine.Engine.
func (e *Engine) ID() string { return e.id }

// Kind implements engine.Engine: the sandbox stands in for a server-side gateway.
func (e *Engine) Kind() string { return engine.KindGateway }

// Close stops every pending ack.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, t := range e.timers {
		t.Stop()
	}
	clear(e.timers)
	return nil
}

// Send implements engine.Engine.
func (e *Engine) Send(ctx context.Context, m engine.Outgoing) (engine.Key, error) {
	if err := ctx.Err(); err != nil {
		return engine.Key{}, err
	}
	digits := recipientDigits(m.To)
	if strings.HasSuffix(digits, "0000") {
		return engine.Key{}, fmt.Errorf("%w: %s is not on the network", engine.ErrRejected, m.To)
	}
	key := engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return engine.Key{}, fmt.Errorf("sandbox engine %s is closed", e.id)
	}
	if prev, ok := e.sent[m.WireID]; ok {
		return prev, nil
	}
	e.sent[m.WireID] = key

	e.after(1, engine.Event{Type: engine.EventAck, Key: key, Ack: engine.AckDevice})
	if strings.HasSuffix(digits, "1111") {
		return key, nil
	}
	e.after(2, engine.Event{Type: engine.EventAck, Key: key, Ack: engine.AckRead})
	if m.MediaKind == "voice" {
		e.after(3, engine.Event{Type: engine.EventAck, Key: key, Ack: engine.AckPlayed})
	}
	talkative, deleter := strings.HasSuffix(digits, "2222"), strings.HasSuffix(digits, "4444")
	if !talkative && !deleter {
		return key, nil
	}
	contact := engine.Incoming{From: m.To, SenderName: "Sandbox " + digits[max(0, len(digits)-4):]}
	if talkative {
		e.after(2.1, engine.Event{Type: engine.EventReaction, Key: key, Reaction: "👍", Message: &contact})
		if m.Type == "poll" && len(m.PollOptions) > 0 {
			e.after(2.2, engine.Event{Type: engine.EventPollVote, Key: key, Votes: m.PollOptions[:1], Message: &contact})
		}
	}
	replyKey := engine.Key{FromMe: false, Remote: m.To, ID: "3EB1" + strings.ToUpper(switchboard.RandomToken(9))}
	reply := contact
	reply.Key, reply.Type, reply.Text, reply.QuotedKey = replyKey, "text", "Thanks, got it!", key.Serialized()
	e.after(2.5, engine.Event{Type: engine.EventMessage, Key: replyKey, Message: &reply})
	if talkative {
		edited := reply
		edited.Text = "Thanks, got it! 🙌"
		e.after(3, engine.Event{Type: engine.EventEdited, Key: replyKey, Message: &edited})
	} else {
		e.after(3, engine.Event{Type: engine.EventRevoked, Key: replyKey, Message: &reply})
	}
	return key, nil
}

// Simulate reports ev as if the network had produced it now.
func (e *Engine) Simulate(ctx context.Context, ev engine.Event) error {
	ev.WorkspaceID, ev.EngineID, ev.At = e.workspaceID, e.id, time.Now()
	return e.sink.HandleEvent(ctx, ev)
}

// after reports ev after factor times the ack delay. e.mu must be held.
func (e *Engine) after(factor float64, ev engine.Event) {
	ev.WorkspaceID, ev.EngineID = e.workspaceID, e.id
	e.seq++
	seq := e.seq
	e.timers[seq] = time.AfterFunc(time.Duration(factor*float64(e.delay)), func() {
		e.mu.Lock()
		closed := e.closed
		delete(e.timers, seq)
		e.mu.Unlock()
		if closed {
			return
		}
		ev.At = time.Now()
		_ = e.sink.HandleEvent(context.Background(), ev)
	})
}

func recipientDigits(jid string) string {
	user, _, _ := strings.Cut(jid, "@")
	return strings.TrimPrefix(user, "+")
}
