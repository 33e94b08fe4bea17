package dispatch

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// countingEngines picks one engine, counting how often it is asked.
type countingEngines struct {
	eng   engine.Engine
	picks atomic.Int32
}

func (c *countingEngines) Pick(context.Context, string) (engine.Engine, error) {
	c.picks.Add(1)
	return c.eng, nil
}

func (c *countingEngines) Find(context.Context, string, string) (engine.Engine, error) {
	return nil, engine.ErrDisconnected
}

func (c *countingEngines) Provided(context.Context, string) (engine.Engine, error) {
	return nil, engine.ErrNoEngine
}

// acceptingEngine takes every message.
type acceptingEngine struct{}

func (acceptingEngine) ID() string   { return "eng_accepting" }
func (acceptingEngine) Kind() string { return engine.KindRegular }
func (acceptingEngine) Close() error { return nil }
func (acceptingEngine) Send(_ context.Context, m engine.Outgoing) (engine.Key, error) {
	return engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}, nil
}

// A batch asks Engines.Pick once a workspace, not once a message: the
// registry's answer (whether the workspace owns a real engine) is a query.
func TestBatchPicksOnceAWorkspace(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	engines := &countingEngines{eng: acceptingEngine{}}
	d := &Dispatcher{Client: client, Engines: engines}
	var reqs []*request
	for i := range 6 {
		ws := fmt.Sprintf("ws_pick_%d", i%2)
		m := client.Message.Create().SetTo(fmt.Sprintf("1555000%04d@c.us", i)).SetType("text").SetText("hi").
			SetOrigin("scheduled").SetStatus(string(messaging.StatusPending)).
			SaveX(viewer.WorkspaceContext(context.Background(), ws))
		reqs = append(reqs, &request{workspaceID: ws, messageID: m.ID, done: make(chan result, 1)})
	}
	d.dispatchBatch(context.Background(), reqs)
	for _, r := range reqs {
		if res := <-r.done; res.err != nil {
			t.Fatalf("dispatch of %s: %v", r.messageID, res.err)
		}
	}
	sent, err := client.Message.Query().All(viewer.SystemContext(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sent {
		if messaging.StatusOf(m) != messaging.StatusConfirmed {
			t.Errorf("message %s is %s, want confirmed", m.ID, m.Status)
		}
	}
	if n := engines.picks.Load(); n != 2 {
		t.Errorf("Pick asked %d times for 6 messages of 2 workspaces, want 2", n)
	}
}
