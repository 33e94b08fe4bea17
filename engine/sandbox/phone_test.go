package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// A network's Phone (switchboard engine sandbox --phone) is the account's own
// number: Me reports it, and the changes of a group the account creates name
// it; two networks with different phones serving one workspace are two numbers.
// Without one, the number is derived from the workspace, the same in both.
func TestNetworkPhone(t *testing.T) {
	const ws = "ws_phone"
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	type seen struct{ Me, Creator, ChangeMe string }
	look := func(phone string) seen {
		client, _ := storagetest.SQLite(t)
		s := &sink{}
		net := sandbox.NewNetwork(client, time.Millisecond, s)
		net.Phone = phone
		eng := net.Engine(ws)
		me, err := eng.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := eng.CreateGroup(ctx, "Numbers", []string{"15550003333@c.us"}); err != nil {
			t.Fatal(err)
		}
		got := seen{Me: me}
		for _, ev := range s.evs {
			if ev.Type == engine.EventGroup && ev.Group != nil && ev.Group.Action == engine.GroupCreated {
				got.Creator, got.ChangeMe = ev.Group.By, ev.Group.Me
			}
		}
		return got
	}
	a, b := look("+15550001111"), look("+15550002222")
	want := []seen{{"15550001111@c.us", "15550001111@c.us", "15550001111@c.us"}, {"15550002222@c.us", "15550002222@c.us", "15550002222@c.us"}}
	if diff := cmp.Diff(want, []seen{a, b}); diff != "" {
		t.Errorf("two numbers (-want +got):\n%s", diff)
	}
	if d1, d2 := look(""), look(""); d1.Me == "" || d1 != d2 || d1.Me == a.Me {
		t.Errorf("without a phone: %+v and %+v, want one number derived from the workspace", d1, d2)
	}
}
