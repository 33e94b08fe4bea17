package host

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine/gateway"
)

// Every gateway status maps to the state and stream the API shows.
func TestRowState(t *testing.T) {
	type shown struct{ State, Stream string }
	for _, c := range []struct {
		status    string
		connected bool
		want      shown
	}{
		{gateway.StatusUnpaired, false, shown{"UNPAIRED", "closed"}},
		{gateway.StatusPairing, false, shown{"PAIRING", "connecting"}},
		{gateway.StatusConnecting, false, shown{"OPENING", "connecting"}},
		{gateway.StatusConnected, true, shown{"CONNECTED", "open"}},
		{gateway.StatusDisconnected, false, shown{"DISCONNECTED", "closed"}},
		{gateway.StatusLoggedOut, false, shown{"LOGGED_OUT", "closed"}},
		{gateway.StatusBanned, false, shown{"BANNED", "closed"}},
		{gateway.StatusReplaced, false, shown{"CONFLICT", "closed"}},
		{gateway.StatusClosed, false, shown{"DISCONNECTED", "closed"}},
	} {
		s := gateway.State{Status: c.status, Connected: c.connected}
		if diff := cmp.Diff(c.want, shown{RowState(s), stream(s)}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.status, diff)
		}
	}
}
