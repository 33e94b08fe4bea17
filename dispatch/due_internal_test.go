package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// someEngines gives an engine to the workspaces it names, and none to others.
type someEngines map[string]engine.Engine

func (s someEngines) Pick(_ context.Context, ws string) (engine.Engine, error) {
	if eng, ok := s[ws]; ok {
		return eng, nil
	}
	return nil, engine.ErrNoEngine
}

func (someEngines) Find(context.Context, string, string) (engine.Engine, error) {
	return nil, engine.ErrDisconnected
}

func (someEngines) Provided(context.Context, string) (engine.Engine, error) {
	return nil, engine.ErrNoEngine
}

// A sweep of a window sends the pending messages due in it, each once it is
// due, and leaves alone what is cancelled or due outside the window; a message
// whose workspace has no engine is left for a task of its own.
func TestDispatchDueSendsTheWindowAsItComesDue(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	d := &Dispatcher{Client: client, Engines: someEngines{"ws_a": acceptingEngine{}}}
	now := time.Now().UTC() // as the API stores sendAt
	from, to := now.Add(-time.Second), now.Add(400*time.Millisecond)
	ids := map[string]string{}
	add := func(name, ws string, at time.Time, status messaging.Status) {
		m := client.Message.Create().SetTo("15550001234@c.us").SetType("text").SetText(name).
			SetOrigin("scheduled").SetStatus(string(status)).SetSendAt(at).
			SaveX(viewer.WorkspaceContext(context.Background(), ws))
		ids[m.ID] = name
	}
	add("due", "ws_a", from, messaging.StatusPending)
	add("due soon", "ws_a", now.Add(200*time.Millisecond), messaging.StatusPending)
	add("cancelled", "ws_a", now, messaging.StatusCancelled)
	add("before the window", "ws_a", from.Add(-time.Millisecond), messaging.StatusPending)
	add("after the window", "ws_a", to, messaging.StatusPending)
	add("no engine", "ws_b", now, messaging.StatusPending)

	later, err := d.DispatchDue(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, l := range later {
		left = append(left, ids[l.MessageID]+" "+l.WorkspaceID+" now "+map[bool]string{true: "yes", false: "no"}[l.At.IsZero()])
	}
	if diff := cmp.Diff([]string{"no engine ws_b now yes"}, left); diff != "" {
		t.Errorf("left for a task of their own (-want +got):\n%s", diff)
	}
	rows := client.Message.Query().AllX(viewer.SystemContext(context.Background()))
	got := map[string]string{}
	for _, m := range rows {
		got[ids[m.ID]] = m.Status
		if m.ConfirmedAt != nil && m.ConfirmedAt.Before(*m.SendAt) {
			t.Errorf("%q confirmed at %s, before its sendAt %s", ids[m.ID], m.ConfirmedAt, m.SendAt)
		}
	}
	want := map[string]string{
		"due":               string(messaging.StatusConfirmed),
		"due soon":          string(messaging.StatusConfirmed),
		"cancelled":         string(messaging.StatusCancelled),
		"before the window": string(messaging.StatusPending),
		"after the window":  string(messaging.StatusPending),
		"no engine":         string(messaging.StatusPending),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
