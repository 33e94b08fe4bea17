package gateway

import (
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types/events"
)

// What the host records of a temporary ban, as the engine reports it through
// OnState: the ban is a restriction from the event on, the engine waits it out
// without connecting, and the session that connects after it reports no
// restriction (the host then ends it and resumes the campaigns it paused).
func TestTemporaryBanIsARestrictionUntilReconnected(t *testing.T) {
	var mu sync.Mutex
	var states []State
	h := newHarness(t, true, func(c *Config) {
		c.OnState = func(s State) {
			mu.Lock()
			states = append(states, s)
			mu.Unlock()
		}
	})
	h.f.mu.Lock()
	h.f.connected = false
	h.f.mu.Unlock()
	h.f.emit(&events.TemporaryBan{Code: events.TempBanSentToTooManyPeople, Expire: 300 * time.Millisecond})
	mu.Lock()
	banned := states[len(states)-1]
	mu.Unlock()
	if why, until, ok := banned.Restriction(time.Now()); !ok || banned.Connected || until.IsZero() || why == "" {
		t.Fatalf("state reported on the ban %+v: restriction %q until %v (%v)", banned, why, until, ok)
	}
	waitFor(t, "the reconnect after the ban", func() bool {
		mu.Lock()
		defer mu.Unlock()
		last := states[len(states)-1]
		return last.Connected
	})
	mu.Lock()
	last := states[len(states)-1]
	mu.Unlock()
	if _, _, ok := last.Restriction(time.Now()); ok || last.Status != StatusConnected || last.BannedUntil != nil {
		t.Errorf("state reported on the reconnect %+v", last)
	}
	if _, restricted := h.e.Restriction(); restricted {
		t.Error("the engine still reports the ban")
	}
}
