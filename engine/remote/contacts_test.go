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

// contactPhone is a remote engine that serves the contact operations.
type contactPhone struct {
	actor
}

func (p *contactPhone) CheckNumbers(_ context.Context, phones []string) ([]engine.NumberStatus, error) {
	out := make([]engine.NumberStatus, len(phones))
	for i, ph := range phones {
		out[i] = engine.NumberStatus{Phone: ph, OnNetwork: i == 0, ChatID: ph + "@c.us", IsBusiness: i == 0, BusinessName: "Acme"}
	}
	return out, p.note(fmt.Sprint("CheckNumbers ", phones))
}

func (p *contactPhone) Block(_ context.Context, id string) error   { return p.note("Block " + id) }
func (p *contactPhone) Unblock(_ context.Context, id string) error { return p.note("Unblock " + id) }
func (p *contactPhone) Blocklist(context.Context) ([]string, error) {
	return []string{"15550001111@c.us"}, p.note("Blocklist")
}

// The contact operations are the commands of check_numbers and block_list: a
// remote engine that announces them is reached with their arguments, and its
// answers cross back whole.
func TestContactOperationsCrossTheWire(t *testing.T) {
	p := &contactPhone{}
	caps := engine.CapabilitiesOf(p)
	if !cmp.Equal(caps[len(caps)-2:], []string{"check_numbers", "block_list"}) {
		t.Errorf("capabilities %v", caps)
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
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return p, nil })
	}()
	var far engine.Engine
	eventually(t, "the engine connects", func() bool {
		got, err := r.hub.Get(context.Background(), ws.ID, row.ID)
		far = got
		return err == nil
	})
	got, err := far.(engine.NumberChecker).CheckNumbers(ctx, []string{"15550001111", "15550002222"})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.NumberStatus{{Phone: "15550001111", OnNetwork: true, ChatID: "15550001111@c.us", IsBusiness: true, BusinessName: "Acme"},
		{Phone: "15550002222", ChatID: "15550002222@c.us", BusinessName: "Acme"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	b := far.(engine.Blocker)
	if err := b.Block(ctx, "15550001111@c.us"); err != nil {
		t.Fatal(err)
	}
	if err := b.Unblock(ctx, "15550002222@c.us"); err != nil {
		t.Fatal(err)
	}
	if list, err := b.Blocklist(ctx); err != nil || !cmp.Equal(list, []string{"15550001111@c.us"}) {
		t.Errorf("block list %v %v", list, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	wantCalls := []string{"CheckNumbers [15550001111 15550002222]", "Block 15550001111@c.us", "Unblock 15550002222@c.us", "Blocklist"}
	if diff := cmp.Diff(wantCalls, p.calls); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}
