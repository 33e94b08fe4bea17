package remote_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// An engine method's error crosses the wire (EncodeError, JSON, Err) as the
// same kind of error, so a remote engine's failures are handled like an
// in-process one's.
func TestErrorsCrossTheWireAsTheirKind(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"not found", fmt.Errorf("no such message: %w", engine.ErrNotFound), func(e error) bool { return errors.Is(e, engine.ErrNotFound) }},
		{"rejected", fmt.Errorf("%w: bad chat", engine.ErrRejected), func(e error) bool { return errors.Is(e, engine.ErrRejected) }},
		{"disconnected", engine.ErrDisconnected, func(e error) bool { return errors.Is(e, engine.ErrDisconnected) }},
		{"timeout", engine.ErrTimeout, func(e error) bool { return errors.Is(e, engine.ErrTimeout) }},
		{"group rule", &engine.GroupRuleError{Rule: engine.RuleNotAdmin, Participant: "1@c.us", Message: "not an admin"}, func(e error) bool {
			var r *engine.GroupRuleError
			return errors.As(e, &r) && r.Rule == engine.RuleNotAdmin && r.Participant == "1@c.us"
		}},
		{"media unavailable", &engine.MediaUnavailableError{Reason: engine.MediaFetching, Message: "downloading"}, func(e error) bool {
			var m *engine.MediaUnavailableError
			return errors.As(e, &m) && m.Reason == engine.MediaFetching
		}},
		{"an application error keeps its code", switchboard.Errorf(switchboard.ECONFLICT, "busy"), func(e error) bool {
			return switchboard.ErrorCode(e) == switchboard.ECONFLICT
		}},
		{"anything else is the engine's error", errors.New("the phone said something odd"), func(e error) bool {
			return e != nil && !errors.Is(e, engine.ErrNotFound) && switchboard.ErrorCode(e) == switchboard.EINTERNAL
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(remote.EncodeError(tt.err))
			if err != nil {
				t.Fatal(err)
			}
			var w remote.WireError
			if err := json.Unmarshal(raw, &w); err != nil {
				t.Fatal(err)
			}
			if got := w.Err(); !tt.check(got) {
				t.Errorf("%v crossed as %v (wire %s)", tt.err, got, raw)
			}
		})
	}
	if remote.EncodeError(nil) != nil || (*remote.WireError)(nil).Err() != nil {
		t.Error("no error crossed as one")
	}
}

// Only logged out, unauthorized and deleted end an engine for good; the other
// closes are reconnected.
func TestTerminalCloseCodes(t *testing.T) {
	got := map[int]bool{}
	for _, code := range []int{remote.CloseLoggedOut, remote.CloseUnauthorized, remote.CloseDeleted, remote.CloseHeartbeat, remote.CloseReplaced, 1000, 1001, 1011} {
		got[code] = remote.Terminal(code)
	}
	want := map[int]bool{4000: true, 4001: true, 4002: true, 4003: false, 4004: false, 1000: false, 1001: false, 1011: false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("terminal codes (-want +got):\n%s", diff)
	}
}
