package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
)

// Session events record when an engine connected or disconnected on its row,
// and its state, except where the row says more than the event knows: a
// gateway's host writes its finer state itself, so a connection (applied a
// moment later) leaves it alone, and a lost session turns DISCONNECTED neither a
// logged-out engine nor a gateway replaced, banned, unpaired or pairing.
func TestSessionEventsKeepTheFinerState(t *testing.T) {
	for _, tc := range []struct {
		kind       entengine.Kind
		state      string
		event      engine.EventType
		wantState  string
		wantMarked bool // connectedAt / disconnectedAt set
	}{
		{entengine.KindRemote, "DISCONNECTED", engine.EventConnected, "CONNECTED", true},
		{entengine.KindRemote, "CONNECTED", engine.EventGone, "DISCONNECTED", true},
		{entengine.KindRemote, "LOGGED_OUT", engine.EventGone, "LOGGED_OUT", true},
		// a state the remote engine reported (maybe before its connection's event applied) stays
		{entengine.KindRemote, "PAIRING", engine.EventConnected, "PAIRING", true},
		{entengine.KindRemote, "BANNED", engine.EventConnected, "BANNED", true},
		{entengine.KindGateway, "CONFLICT", engine.EventConnected, "CONFLICT", true},
		{entengine.KindGateway, "OPENING", engine.EventConnected, "OPENING", true},
		{entengine.KindGateway, "CONNECTED", engine.EventGone, "DISCONNECTED", true},
		{entengine.KindGateway, "CONFLICT", engine.EventGone, "CONFLICT", true},
		{entengine.KindGateway, "BANNED", engine.EventGone, "BANNED", true},
		{entengine.KindGateway, "UNPAIRED", engine.EventGone, "UNPAIRED", true},
		{entengine.KindGateway, "PAIRING", engine.EventGone, "PAIRING", true},
	} {
		t.Run(string(tc.kind)+" "+tc.state+" "+string(tc.event), func(t *testing.T) {
			in := open(t)
			ws := in.Client.Workspace.Create().SetName("acme").SaveX(sys)
			row := in.Client.Engine.Create().SetWorkspaceID(ws.ID).SetKind(tc.kind).SetState(tc.state).SaveX(sys)
			ev := engine.Event{ID: "s1", Type: tc.event, WorkspaceID: ws.ID, EngineID: row.ID, At: time.Now()}
			if err := in.HandleEvent(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			if _, err := in.ApplyOnce(context.Background(), time.Now()); err != nil {
				t.Fatal(err)
			}
			got := in.Client.Engine.GetX(sys, row.ID)
			marked := got.ConnectedAt != nil
			if tc.event == engine.EventGone {
				marked = got.DisconnectedAt != nil
			}
			if diff := cmp.Diff([]any{tc.wantState, tc.wantMarked}, []any{got.State, marked}); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
		})
	}
}
