package remote_test

import (
	"bytes"
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

// profiler is a remote engine that serves profile and calls and records them.
type profiler struct {
	actor
	picture []byte
}

func (p *profiler) Profile(context.Context) (engine.Profile, error) {
	return engine.Profile{ID: "15550001111@c.us", PushName: "Far", About: "away", PictureID: "p1"}, nil
}

func (p *profiler) ProfilePicture(context.Context) (engine.Media, error) {
	return engine.Media{Data: p.picture, MimeType: "image/jpeg"}, nil
}

func (p *profiler) SetProfile(_ context.Context, u engine.ProfileUpdate) error {
	return p.note(fmt.Sprintf("SetProfile %s %d", *u.PushName, len(u.Picture.Data)))
}

func (p *profiler) RejectCall(_ context.Context, from, id string) error {
	return p.note("RejectCall " + from + " " + id)
}

// The profile and calls capabilities cross the wire: the profile and its
// picture's bytes come back, a change and a rejection reach the engine.
func TestProfileAndCallsCrossTheWire(t *testing.T) {
	p := &profiler{picture: []byte{0xFF, 0xD8, 0xFF, 1, 2, 3}}
	caps := engine.CapabilitiesOf(p)
	for _, c := range []string{"profile", "calls"} {
		if !contains(caps, c) {
			t.Fatalf("capabilities %v lack %s", caps, c)
		}
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
	pr := far.(engine.Profiler)
	got, err := pr.Profile(ctx)
	if err != nil || got.PushName != "Far" || got.PictureID != "p1" {
		t.Fatalf("Profile = %+v, %v", got, err)
	}
	pic, err := pr.ProfilePicture(ctx)
	if err != nil || !bytes.Equal(pic.Data, p.picture) {
		t.Errorf("ProfilePicture = %v, %v", pic.Data, err)
	}
	name := "New"
	if err := pr.SetProfile(ctx, engine.ProfileUpdate{PushName: &name, Picture: &engine.Media{Data: []byte{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := far.(engine.CallRejecter).RejectCall(ctx, "15552223333@c.us", "C1"); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if diff := cmp.Diff([]string{"SetProfile New 2", "RejectCall 15552223333@c.us C1"}, p.calls); diff != "" {
		t.Errorf("commands the engine served (-want +got):\n%s", diff)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
