package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	waHistorySync "go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

func (f *fakeClient) counts() (connects, disconnects int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connects, f.disconnects
}

// A message the sink refuses is left unacknowledged; the engine reconnects at
// once, the network redelivers it, and it ends stored. Refusals that go on are
// answered by reconnections no closer than RedeliverMin, then twice that.
func TestARefusedMessageIsRedeliveredAfterAReconnect(t *testing.T) {
	const spacing = 150 * time.Millisecond
	h := newHarness(t, true, func(c *Config) { c.RedeliverMin, c.RedeliverMax = spacing, time.Second })
	msg := func(id string) *events.Message {
		return &events.Message{Info: msgInfo(contact, contact, id, false), Message: &waE2E.Message{Conversation: proto.String("x")}}
	}
	stored := func(id string) func() bool {
		return func() bool {
			h.sink.mu.Lock()
			defer h.sink.mu.Unlock()
			for _, ev := range h.sink.evs {
				if ev.Key.ID == id {
					return true
				}
			}
			return false
		}
	}
	var at []time.Time
	start := time.Now()
	for i, id := range []string{"IN1", "IN2", "IN3"} {
		h.sink.mu.Lock()
		h.sink.fail = 5 // every try of the handler: the database is down for a while
		h.sink.mu.Unlock()
		if h.f.deliver(msg(id)) {
			t.Fatalf("%s: the handler acknowledged a message the sink refused", id)
		}
		waitFor(t, id+" redelivered and stored", stored(id))
		at = append(at, time.Now())
		if n := h.e.Redeliveries(); n != i+1 {
			t.Errorf("%s: %d reconnections", id, n)
		}
		if _, d := h.f.counts(); d != i+1 {
			t.Errorf("%s: %d disconnects", id, d)
		}
	}
	if !h.e.State().Connected {
		t.Errorf("state after the redeliveries %+v", h.e.State())
	}
	t.Logf("stored after a redelivery: first %v after the refusal, then %v and %v apart (spacing %v)",
		at[0].Sub(start), at[1].Sub(at[0]), at[2].Sub(at[1]), spacing)
	// The first came at once; the second no sooner than the spacing after it,
	// the third no sooner than twice the spacing after the second.
	if gap := at[1].Sub(at[0]); gap < spacing-10*time.Millisecond {
		t.Errorf("second reconnection %v after the first", gap)
	}
	if gap := at[2].Sub(at[1]); gap < 2*spacing-10*time.Millisecond {
		t.Errorf("third reconnection %v after the second", gap)
	}
}

// History event ids name the pairing: a chunk delivered again keeps its ids
// (the sink stores it once), while the history of a new pairing of the same
// account (re-linked within 7 days) gets new ones and is not dropped.
func TestHistoryIdsArePerPairing(t *testing.T) {
	h := newHarness(t, true)
	chunk := &events.HistorySync{Data: &waHistorySync.HistorySync{
		SyncType: waHistorySync.HistorySync_RECENT.Enum(), ChunkOrder: proto.Uint32(2),
		Conversations: []*waHistorySync.Conversation{{ID: proto.String(contact.String()),
			Messages: []*waHistorySync.HistorySyncMsg{webMsg(contact, "H1", false, 1_800_000_000, "x")}}},
	}}
	ids := func() []string {
		if !h.f.emit(chunk) {
			t.Fatal("handler failed")
		}
		var out []string
		for _, ev := range h.sink.take() {
			out = append(out, ev.ID)
		}
		return out
	}
	first := ids()
	if len(first) != 1 || !strings.HasPrefix(first[0], "wa_hs_"+h.f.Pairing()+"_3_2_") {
		t.Fatalf("history ids %v (pairing %s)", first, h.f.Pairing())
	}
	if again := ids(); !cmp.Equal(again, first) {
		t.Errorf("redelivered chunk ids %v, first %v", again, first)
	}
	// Linked again: a new device, with new keys (here even the same number).
	h.f.mu.Lock()
	h.f.pairing = pairingName(h.f.own.Device, []byte("the new device's identity key"))
	h.f.mu.Unlock()
	relinked := ids()
	if len(relinked) != 1 || relinked[0] == first[0] {
		t.Errorf("ids after re-linking %v, before %v", relinked, first)
	}
}

// A replaced session is retried after each wait of ReplacedRetry, and after the
// last stays replaced (no fight with the other client) until Restart, which
// starts the retries afresh; so does a replacement after a stable session.
func TestAReplacedSessionIsRetriedAFewTimes(t *testing.T) {
	h := newHarness(t, true, func(c *Config) {
		c.ReplacedRetry, c.ReplacedStable = []time.Duration{5 * time.Millisecond, 20 * time.Millisecond}, time.Hour
	})
	connected := func() bool { return h.e.State().Connected }
	for i := range 2 {
		h.f.emit(&events.StreamReplaced{})
		if s := h.e.State(); s.Status != StatusReplaced || s.Connected || !strings.Contains(s.LastError, "retry") {
			t.Fatalf("replaced %d: %+v", i, s)
		}
		waitFor(t, "the retry", connected)
	}
	c0, _ := h.f.counts()
	h.f.emit(&events.StreamReplaced{})
	s := h.e.State()
	if s.Status != StatusReplaced || !strings.Contains(s.LastError, "no retry left") {
		t.Fatalf("after the retries %+v", s)
	}
	h.e.rec.mu.Lock()
	scheduled := h.e.rec.timer != nil && h.e.rec.timer.Stop()
	h.e.rec.mu.Unlock()
	if scheduled {
		t.Error("a retry was scheduled after the last")
	}
	if c, _ := h.f.counts(); c != c0 {
		t.Errorf("connected %d times after the last retry", c-c0)
	}

	if err := h.e.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := h.e.State(); !s.Connected || s.Status != StatusConnected || s.LastError != "" {
		t.Fatalf("after restart %+v", s)
	}
	h.f.emit(&events.StreamReplaced{}) // a new streak after a restart
	waitFor(t, "a retry after the restart", connected)

	h.f.emit(&events.StreamReplaced{}) // second of the streak
	waitFor(t, "the streak's second retry", connected)
	h.e.mu.Lock()
	h.e.state.Since = time.Now().Add(-2 * time.Hour) // connected for long
	h.e.mu.Unlock()
	h.f.emit(&events.StreamReplaced{})
	if s := h.e.State(); !strings.Contains(s.LastError, "retry 1 of 2") {
		t.Errorf("a replacement after a stable session: %+v", s)
	}
	waitFor(t, "the retry after a stable session", connected)
}

// Restart disconnects and connects again on the same device; it refuses an
// engine with no device or one closed.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	h.f.emit(&events.StreamReplaced{})
	c0, d0 := h.f.counts()
	if err := h.e.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	c1, d1 := h.f.counts()
	if c1 != c0+1 || d1 != d0+1 {
		t.Errorf("restart connected %d and disconnected %d times", c1-c0, d1-d0)
	}
	if s := h.e.State(); s.Status != StatusConnected || !s.Connected || s.DeviceJID != h.f.own.String() {
		t.Errorf("after restart %+v", s)
	}
	// A stuck connection: the network is unreachable for a while; Restart
	// returns after RestartWait, the engine going on in the background.
	h2 := newHarness(t, true, func(c *Config) { c.RestartWait = 20 * time.Millisecond })
	h2.f.mu.Lock()
	h2.f.connectErrs = []error{errors.New("dial tcp: i/o timeout"), errors.New("dial tcp: i/o timeout")}
	h2.f.mu.Unlock()
	if err := h2.e.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "connected after the failures", func() bool { return h2.e.State().Connected })

	unpaired := newHarness(t, false)
	if err := unpaired.e.Restart(ctx); !errors.Is(err, ErrNotPaired) {
		t.Errorf("restart unpaired: %v", err)
	}
	_ = h.e.Close()
	if err := h.e.Restart(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("restart closed: %v", err)
	}
	var _ engine.Restarter = h.e
}
