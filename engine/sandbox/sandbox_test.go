package sandbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// sink records what the network reports, in order.
type sink struct {
	mu  sync.Mutex
	evs []engine.Event
}

func (s *sink) HandleEvent(_ context.Context, ev engine.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, ev)
	return nil
}

// reported is what a test compares of an event.
type reported struct {
	Type     engine.EventType
	Ack      int
	Reaction string
	Votes    []string
	Text     string
}

func summarize(evs []engine.Event) []reported {
	var out []reported
	for _, ev := range evs {
		r := reported{Type: ev.Type, Ack: int(ev.Ack), Reaction: ev.Reaction, Votes: ev.Votes}
		if ev.Type != engine.EventAck && ev.Type != engine.EventReaction && ev.Type != engine.EventPollVote && ev.Message != nil {
			r.Text = ev.Message.Text
		}
		out = append(out, r)
	}
	return out
}

// The recipient's last digits decide what the network reports about a message,
// in the documented order (README, DESIGN): rejected, received only, read, a
// replying and a deleting contact; voice notes are played.
func TestRecipientDigitsDecideTheScript(t *testing.T) {
	device := reported{Type: engine.EventAck, Ack: int(engine.AckDevice)}
	read := reported{Type: engine.EventAck, Ack: int(engine.AckRead)}
	reply := reported{Type: engine.EventMessage, Text: "Thanks, got it!"}
	for _, tt := range []struct {
		name     string
		out      engine.Outgoing
		rejected bool
		want     []reported
	}{
		{"any number: received, then read", engine.Outgoing{To: "15550005555@c.us", Type: "text", Text: "hi"}, false,
			[]reported{device, read}},
		{"...1111: received, never read", engine.Outgoing{To: "15550001111@c.us", Type: "text", Text: "hi"}, false,
			[]reported{device}},
		{"...0000: not on the network", engine.Outgoing{To: "15550000000@c.us", Type: "text", Text: "hi"}, true, nil},
		{"voice: played after read", engine.Outgoing{To: "15550005555@c.us", Type: "media", MediaKind: "voice"}, false,
			[]reported{device, read, {Type: engine.EventAck, Ack: int(engine.AckPlayed)}}},
		{"...2222: reacts, votes, replies and edits the reply",
			engine.Outgoing{To: "15550002222@c.us", Type: "poll", PollQuestion: "Lunch?", PollOptions: []string{"Yes", "No"}}, false,
			[]reported{device, read, {Type: engine.EventReaction, Reaction: "👍"}, {Type: engine.EventPollVote, Votes: []string{"Yes"}},
				reply, {Type: engine.EventEdited, Text: "Thanks, got it! 🙌"}}},
		{"...4444: replies, then deletes the reply", engine.Outgoing{To: "15550004444@c.us", Type: "text", Text: "hi"}, false,
			[]reported{device, read, reply, {Type: engine.EventRevoked, Text: "Thanks, got it!"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := storagetest.SQLite(t)
			s := &sink{}
			net := sandbox.NewNetwork(client, time.Millisecond, s)
			eng := net.Engine("ws_script")
			tt.out.WireID = "3EB0SCRIPT0001"
			key, err := eng.Send(context.Background(), tt.out)
			if tt.rejected != errors.Is(err, engine.ErrRejected) {
				t.Fatalf("Send = %v, %v; rejected %v", key, err, tt.rejected)
			}
			if !tt.rejected && (key.Remote != tt.out.To || key.ID != tt.out.WireID || !key.FromMe) {
				t.Errorf("key = %+v", key)
			}
			if _, err := net.ReportDue(context.Background(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(s.evs)); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
		})
	}
}

// The network remembers the wire ids it carried: a resend is answered with the
// same key and delivered no second time.
func TestResendIsDeliveredOnce(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	s := &sink{}
	net := sandbox.NewNetwork(client, time.Millisecond, s)
	eng := net.Engine("ws_resend")
	m := engine.Outgoing{To: "15550001111@c.us", WireID: "3EB0RESEND0001", Type: "text", Text: "once"}
	first, err := eng.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	again, err := eng.Send(context.Background(), m)
	if err != nil || again != first {
		t.Fatalf("resend = %+v, %v; want %+v", again, err, first)
	}
	if _, err := net.ReportDue(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := len(s.evs); got != 1 {
		t.Errorf("reported %d events, want the one ack of one delivery", got)
	}
}
