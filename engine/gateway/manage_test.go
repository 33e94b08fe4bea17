package gateway

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	} {
		why, until, ok := c.state.Restriction(now)
		if diff := cmp.Diff(c.want, got{why, until, ok}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
