package remote_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// timerKeeper is a remote engine that serves disappearing and records it.
type timerKeeper struct{ actor }

func (k *timerKeeper) DisappearingTimer(_ context.Context, chatID string) (uint32, error) {
	return 604800, k.note("DisappearingTimer " + chatID)
}

func (k *timerKeeper) SetDisappearingTimer(_ context.Context, chatID string, seconds uint32) error {
	return k.note(fmt.Sprintf("SetDisappearingTimer %s %d", chatID, seconds))
}

// The disappearing capability is announced and crosses the wire: a read
// answers the engine's timer, a set reaches it with the chat and the seconds.
func TestDisappearingCrossesTheWire(t *testing.T) {
	k := &timerKeeper{}
	caps := engine.CapabilitiesOf(k)
	if !contains(caps, engine.CapDisappearing) {
		t.Fatalf("capabilities %v lack %s", caps, engine.CapDisappearing)
	}
	client, _ := storagetest.SQLite(t)
	ws := client.Workspace.Create().SetName("acme").SaveX(sys)
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	r := newReplica(t, rdb, client, &recorder{})
	token, hash, prefix := auth.NewEngineToken()
	row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind(entengine.KindRemote).SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
	c := &remote.Client{URL: r.url, Token: token, Kind: engine.KindGateway, Capabilities: caps, NoReconnect: true}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return k, nil })
	}()
	var far engine.Engine
	eventually(t, "the engine connects", func() bool {
		got, err := r.hub.Get(context.Background(), ws.ID, row.ID)
		far = got
		return err == nil
	})
	dt := far.(engine.DisappearingTimer)
	if got, err := dt.DisappearingTimer(ctx, "15552223333@c.us"); err != nil || got != 604800 {
		t.Fatalf("DisappearingTimer = %d, %v", got, err)
	}
	if err := dt.SetDisappearingTimer(ctx, "120363000000000001@g.us", 86400); err != nil {
		t.Fatal(err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	want := []string{"DisappearingTimer 15552223333@c.us", "SetDisappearingTimer 120363000000000001@g.us 86400"}
	if diff := cmp.Diff(want, k.calls); diff != "" {
		t.Errorf("commands the engine served (-want +got):\n%s", diff)
	}
}
