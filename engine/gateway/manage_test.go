package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
)

// A ban or a reach-out time lock in force is a restriction until it ends.
func TestStateRestriction(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Minute)
	type got struct {
		Why   string
		Until time.Time
		OK    bool
	}
	for _, c := range []struct {
		name  string
		state State
		want  got
	}{
		{"none", State{}, got{}},
		{"ban", State{BannedUntil: &later, BanReason: "too many messages"},
			got{"WhatsApp banned the account for now: too many messages, until 2026-11-22T11:00:00Z", later, true}},
		{"ban without reason", State{BannedUntil: &later}, got{"WhatsApp banned the account for now, until 2026-11-22T11:00:00Z", later, true}},
		{"ban over", State{BannedUntil: &earlier, BanReason: "x"}, got{}},
		{"time lock", State{ReachoutTimelockedUntil: &later},
			got{"WhatsApp forbids the account to message new contacts for now (reach-out time lock), until 2026-11-22T11:00:00Z", later, true}},
		{"time lock over", State{ReachoutTimelockedUntil: &earlier}, got{}},
		{"logged out", State{Status: StatusLoggedOut}, got{LoggedOutRestriction, time.Time{}, true}},
		{"unpaired", State{Status: StatusUnpaired}, got{}},
	} {
		why, until, ok := c.state.Restriction(now)
		if diff := cmp.Diff(c.want, got{why, until, ok}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// Pairing never hangs the API: a network that cannot be reached fails the QR
// call at the first failed attempt, and a network that sends no code fails it
// at QRTimeout.
func TestQRFailsFast(t *testing.T) {
	h := newHarness(t, false, func(c *Config) { c.ReconnectMin = time.Hour })
	h.f.connectErrs = []error{errors.New("dial tcp: lookup web.whatsapp.com: no such host")}
	start := time.Now()
	if _, _, err := h.e.QR(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Errorf("QR without network = %v", err)
	} else if msg := switchboard.ErrorMessage(err); !strings.Contains(msg, "no such host") || switchboard.ErrorCode(err) != switchboard.ENOENGINE {
		t.Errorf("QR without network says %q (%s), want the cause", msg, switchboard.ErrorCode(err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("QR without network took %s", d)
	}
	if got := h.e.State().LastError; !strings.Contains(got, "no such host") {
		t.Errorf("last error %q", got)
	}

	silent := newHarness(t, false, func(c *Config) { c.QRTimeout = 200 * time.Millisecond })
	if _, _, err := silent.e.QR(context.Background()); !errors.Is(err, ErrPairingTimeout) {
		t.Errorf("QR without codes = %v", err)
	}
}
