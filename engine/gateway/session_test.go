package gateway

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/util/jsontime"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

func TestPairingWithQRAndPhoneCode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var (
		statesMu sync.Mutex
		states   []Status
	)
	h := newHarness(t, false, func(c *Config) {
		c.OnState = func(s State) {
			statesMu.Lock()
			defer statesMu.Unlock()
			states = append(states, s.Status)
		}
	})
	h.f.qrCodes = []string{"2@first", "2@second"}
	if s := h.e.State(); s.Status != StatusUnpaired || s.Connected {
		t.Fatalf("fresh state %+v", s)
	}
	// Codes that run out unscanned end the pairing connection.
	h.f.connected = true
	h.e.qrExpired(h.e.client(), 0)
	if h.f.IsConnected() || h.e.State().Status != StatusUnpaired {
		t.Errorf("after expired codes: connected %v, state %+v", h.f.IsConnected(), h.e.State())
	}
	code, png, err := h.e.QR(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if code != "2@first" || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("qr %q, png %d bytes", code, len(png))
	}
	if h.e.State().Status != StatusPairing {
		t.Errorf("status %s", h.e.State().Status)
	}
	// Codes expire: once all ran out, QR reconnects for fresh ones.
	h.e.mu.Lock()
	h.e.qrAt = time.Now().Add(-qrFirst - 5*time.Second)
	h.e.mu.Unlock()
	if code, _, _ = h.e.QR(ctx); code != "2@second" {
		t.Errorf("second code %q", code)
	}
	h.e.mu.Lock()
	h.e.qrAt = time.Now().Add(-qrFirst - 2*qrNext)
	h.e.mu.Unlock()
	h.f.qrCodes = []string{"2@fresh"}
	if code, _, _ = h.e.QR(ctx); code != "2@fresh" {
		t.Errorf("fresh code %q", code)
	}
	pc, err := h.e.PairPhone(ctx, "+1 555 000 1111")
	if err != nil || pc != "ABCD-EFGH" || h.f.pairPhone != "+1 555 000 1111" {
		t.Errorf("pair phone %q %v", pc, err)
	}

	// The phone scanned: paired, then connected.
	dev := types.NewADJID("15550001111", 0, 9)
	h.f.mu.Lock()
	h.f.own = dev
	h.f.mu.Unlock()
	h.f.emit(&events.PairSuccess{ID: dev})
	if s := h.e.State(); s.Status != StatusConnecting || s.DeviceJID != dev.String() || s.Me != "15550001111@c.us" {
		t.Errorf("after pairing %+v", s)
	}
	if _, _, err := h.e.QR(ctx); !errors.Is(err, ErrAlreadyPaired) {
		t.Errorf("QR when paired: %v", err)
	}
	h.f.emit(&events.Connected{})
	if s := h.e.State(); s.Status != StatusConnected || !s.Connected {
		t.Errorf("connected %+v", s)
	}
	// The phone removes the device: logged out, and a fresh device waits for pairing.
	h.f.emit(&events.LoggedOut{Reason: events.ConnectFailureLoggedOut})
	s := h.e.State()
	if s.Status != StatusLoggedOut || s.DeviceJID != "" || s.Connected {
		t.Errorf("logged out %+v", s)
	}
	if h.e.client() == client(h.f) {
		t.Error("the logged-out client is still in use")
	}
	if _, err := h.e.Send(ctx, engine.Outgoing{WireID: "3EB0", To: "15552223333@c.us", Type: "text"}); !errors.Is(err, ErrNotPaired) {
		t.Errorf("send after logout: %v", err)
	}
	statesMu.Lock()
	defer statesMu.Unlock()
	if len(states) == 0 || states[len(states)-1] != StatusLoggedOut {
		t.Errorf("OnState saw %v", states)
	}
}

func TestLogout(t *testing.T) {
	h := newHarness(t, true)
	if err := h.e.Logout(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !h.f.loggedOut || h.e.State().Status != StatusLoggedOut {
		t.Errorf("logout: fake %v state %+v", h.f.loggedOut, h.e.State())
	}
	if err := h.e.Logout(context.Background()); !errors.Is(err, ErrNotPaired) {
		t.Errorf("second logout: %v", err)
	}
}

func TestConnectionStatesAndReconnect(t *testing.T) {
	f := newFake(true)
	f.connectErrs = []error{errors.New("dial tcp: no route"), errors.New("dial tcp: no route")}
	s := &sink{}
	e := newEngine(Config{WorkspaceID: "ws1", Sink: s, DeviceJID: f.own.String(), SessionEvents: true,
		ReconnectMin: time.Millisecond, ReconnectMax: 4 * time.Millisecond}, f, nil)
	defer e.Close()
	start := time.Now()
	e.startConnecting() // what Open does: returns at once
	if time.Since(start) > 100*time.Millisecond {
		t.Error("starting to connect blocked")
	}
	// The state turns connected before the session event is reported, both
	// on the connecting goroutine: wait for the event.
	var evs []engine.Event
	waitFor(t, "the connected event", func() bool { evs = append(evs, s.take()...); return len(evs) > 0 })
	if !e.State().Connected {
		t.Errorf("reported connected in state %+v", e.State())
	}
	f.mu.Lock()
	if f.connects != 3 {
		t.Errorf("connect attempts %d", f.connects)
	}
	f.mu.Unlock()
	if len(evs) != 1 || evs[0].Type != engine.EventConnected || evs[0].EngineID != e.ID() {
		t.Errorf("session events %+v", evs)
	}
	f.emit(&events.Disconnected{})
	if st := e.State(); st.Status != StatusDisconnected || st.Connected {
		t.Errorf("disconnected %+v", st)
	}
	if evs := s.take(); len(evs) != 1 || evs[0].Type != engine.EventGone {
		t.Errorf("gone events %+v", evs)
	}
	f.emit(&events.StreamReplaced{})
	if st := e.State(); st.Status != StatusReplaced {
		t.Errorf("replaced %+v", st)
	}
	_ = e.Close()
	if st := e.State(); st.Status != StatusClosed {
		t.Errorf("closed %+v", st)
	}
}

func TestBanSignalsBecomeState(t *testing.T) {
	h := newHarness(t, true)
	ctx := context.Background()
	h.f.emit(&events.TemporaryBan{Code: events.TempBanSentToTooManyPeople, Expire: time.Hour})
	s := h.e.State()
	if s.Status != StatusBanned || s.BannedUntil == nil || time.Until(*s.BannedUntil) < 59*time.Minute || !strings.Contains(s.BanReason, "too many") {
		t.Fatalf("banned state %+v", s)
	}
	if until, err := s.Blocked(time.Now()); !errors.Is(err, ErrBanned) || !until.Equal(*s.BannedUntil) {
		t.Errorf("blocked %v %v", until, err)
	}
	if _, err := h.e.Send(ctx, engine.Outgoing{WireID: "3EB0", To: "15552223333@c.us", Type: "text", Text: "x"}); !errors.Is(err, ErrBanned) {
		t.Errorf("send while banned: %v", err)
	}
	if _, err := s.Blocked(s.BannedUntil.Add(time.Second)); err != nil {
		t.Error("still blocked after the ban")
	}

	// The engine waits the ban out, then connects again.
	h3 := newHarness(t, true)
	h3.f.connected = false
	h3.f.emit(&events.TemporaryBan{Code: events.TempBanBlockedByUsers, Expire: 300 * time.Millisecond})
	h3.f.mu.Lock()
	early := h3.f.connects
	h3.f.mu.Unlock()
	if early != 0 {
		t.Errorf("connected %d times during the ban", early)
	}
	waitFor(t, "reconnect after the ban", func() bool { return h3.e.State().Connected })
	if s := h3.e.State(); s.Status != StatusConnected || s.BannedUntil != nil {
		t.Errorf("after the ban %+v", s)
	}

	h2 := newHarness(t, true)
	ends := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	h2.f.emit(&events.NotifyAccountReachoutTimelock{IsActive: true, EnforcementType: "REACHOUT_TIMELOCK", TimeEnforcementEnds: jsontime.UnixString{Time: ends}})
	s = h2.e.State()
	if s.ReachoutTimelockedUntil == nil || !s.ReachoutTimelockedUntil.Equal(ends) || s.ReachoutEnforcement != "REACHOUT_TIMELOCK" {
		t.Fatalf("timelock state %+v", s)
	}
	if _, err := s.Blocked(time.Now()); !errors.Is(err, ErrTimelocked) {
		t.Errorf("timelock blocked %v", err)
	}
	h2.f.emit(&events.NotifyAccountReachoutTimelock{IsActive: false})
	if s = h2.e.State(); s.ReachoutTimelockedUntil != nil {
		t.Errorf("timelock not lifted %+v", s)
	}
}
