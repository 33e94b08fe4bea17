package host

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/viewer"
)

// The first replica takes every engine; two joining replicas get their share
// (the first hands its surplus off), and a replica that stops leaves its
// engines to the others; no engine is ever open on two replicas.
func TestPlacementSpreadsAndRebalances(t *testing.T) {
	c := newCluster(t, 30)
	c.host("A", nil)
	until(t, 5*time.Second, "A runs every engine", func() bool { return c.allRunning(30) })
	c.host("B", nil)
	_, stopC := c.host("C", nil)
	until(t, 10*time.Second, "each replica runs at most ceil(30/3)+1", func() bool {
		n := c.s.perReplica()
		return c.allRunning(11) && n["B"] > 0 && n["C"] > 0
	})
	stopC()
	until(t, 5*time.Second, "C's engines run on A and B", func() bool {
		return c.allRunning(16) && c.s.perReplica()["C"] == 0
	})
	if o := c.s.overlaps(); len(o) > 0 {
		t.Errorf("engines open on two replicas: %v", o)
	}
}

// A replica cut off from Redis closes its engines before their leases can
// expire, and the other replica takes them over once they have: at no recorded
// instant do both run one engine.
func TestFencingUnderLeaseLoss(t *testing.T) {
	c := newCluster(t, 6)
	var cut atomic.Bool
	c.host("A", &cut)
	c.host("B", nil)
	until(t, 10*time.Second, "both replicas run engines", func() bool {
		n := c.s.perReplica()
		return c.allRunning(4) && n["A"] > 0 && n["B"] > 0
	})
	cut.Store(true)
	took := until(t, 5*testTTL, "B runs every engine", func() bool {
		return c.allRunning(6) && c.s.perReplica()["B"] == 6
	})
	t.Logf("B took A's engines over %s after A lost Redis (lease TTL %s)", took, testTTL)
	if o := c.s.overlaps(); len(o) > 0 {
		t.Errorf("engines open on two replicas: %v", o)
	}
}

// An engine created on one replica is known to the others through pub/sub
// (their resync is minutes away): when its replica stops, another takes it;
// deleted, it is stopped and forgotten everywhere.
func TestNewEngineLearntWithoutResync(t *testing.T) {
	c := newCluster(t, 0)
	a, stopA := c.host("A", nil)
	b, _ := c.host("B", nil)
	cc, _ := c.host("C", nil)
	until(t, 5*time.Second, "the replicas registered", func() bool {
		n, _ := c.mr.ZMembers(replicasKey)
		return len(n) == 3 && c.mr.PubSubNumSub(enginesChannel)[enginesChannel] == 3
	})
	sys := viewer.SystemContext(t.Context())
	ws := c.client.Workspace.Create().SetName("new").SaveX(sys)
	row := c.client.Engine.Create().SetWorkspaceID(ws.ID).SetKind("gateway").SetName("new").SaveX(sys)
	c.ids = append(c.ids, row.ID)
	if err := a.Start(t.Context(), row); err != nil {
		t.Fatal(err)
	}
	if got := c.s.where()[row.ID]; len(got) != 1 || got[0] != "A" {
		t.Fatalf("the new engine runs on %v, want A", got)
	}
	stopA()
	until(t, 3*testTTL, "B or C runs the new engine", func() bool {
		got := c.s.where()[row.ID]
		return len(got) == 1 && got[0] != "A"
	})

	// Deleted (the API deletes the row and ends the session on every replica):
	// the replica that runs it stops it, forgets it and tells the other one.
	c.client.Engine.DeleteOneID(row.ID).ExecX(sys)
	if err := b.Hub.End(t.Context(), ws.ID, row.ID, engine.EndDeleted); err != nil {
		t.Fatal(err)
	}
	until(t, 3*testTTL, "the deleted engine stopped and forgotten", func() bool {
		return len(c.s.where()[row.ID]) == 0 && len(b.knownIDs()) == 0 && len(cc.knownIDs()) == 0
	})
}
