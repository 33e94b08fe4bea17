package remote_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// actor is a remote engine that serves the message actions and records them.
type actor struct {
	phone
	mu    sync.Mutex
	calls []string
}

func (a *actor) note(s string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, s)
	return nil
}

func (a *actor) Edit(_ context.Context, k engine.Key, text, kind string) error {
	return a.note(fmt.Sprintf("Edit %s %q %q", k.Serialized(), text, kind))
}

func (a *actor) Revoke(_ context.Context, k engine.Key) error {
	if !k.FromMe {
		return fmt.Errorf("%w: not the sender", engine.ErrRejected)
	}
	return a.note("Revoke " + k.Serialized())
}

func (a *actor) SetChatPresence(_ context.Context, chat string, s engine.ChatPresence) error {
	return a.note("SetChatPresence " + chat + " " + string(s))
}

// The message actions are commands of their own capabilities (edit, revoke,
// presence): a remote engine that announces them is reached with their
// arguments and its rejection crosses as one; one that does not is
// engine_unavailable without being asked.
func TestMessageActionsCrossTheWire(t *testing.T) {
	a := &actor{}
	if diff := cmp.Diff([]string{"send", "media", "presence", "edit", "revoke"}, engine.CapabilitiesOf(a)); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	client, _ := storagetest.SQLite(t)
	ws := client.Workspace.Create().SetName("acme").SaveX(sys)
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	r := newReplica(t, rdb, client, &recorder{})
	connect := func(e engine.Engine) engine.Engine {
		t.Helper()
		token, hash, prefix := auth.NewEngineToken()
		row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind(entengine.KindRemote).SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
		c := &remote.Client{URL: r.url, Token: token, Kind: engine.KindGateway, Capabilities: engine.CapabilitiesOf(e), NoReconnect: true}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() {
			_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return e, nil })
		}()
		var far engine.Engine
		eventually(t, "the engine connects", func() bool {
			got, err := r.hub.Get(context.Background(), ws.ID, row.ID)
			far = got
			return err == nil
		})
		return far
	}
	far := connect(a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mine := engine.Key{FromMe: true, Remote: "15550001111@c.us", ID: "3EB0A"}
	if err := far.(engine.Editor).Edit(ctx, mine, "fixed", "image"); err != nil {
		t.Fatal(err)
	}
	if err := far.(engine.Revoker).Revoke(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := far.(engine.ChatPresencer).SetChatPresence(ctx, "15550001111@c.us", engine.PresenceRecording); err != nil {
		t.Fatal(err)
	}
	if err := far.(engine.Revoker).Revoke(ctx, engine.Key{Remote: "15550001111@c.us", ID: "THEIRS"}); !errors.Is(err, engine.ErrRejected) {
		t.Errorf("a rejected revoke = %v, want ErrRejected", err)
	}
	want := []string{`Edit true_15550001111@c.us_3EB0A "fixed" "image"`, "Revoke true_15550001111@c.us_3EB0A", "SetChatPresence 15550001111@c.us recording"}
	a.mu.Lock()
	got := append([]string(nil), a.calls...)
	a.mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands the engine served (-want +got):\n%s", diff)
	}

	plain := connect(&phone{})
	if err := plain.(engine.Editor).Edit(ctx, mine, "x", ""); switchboard.ErrorCode(err) != switchboard.ENOENGINE {
		t.Errorf("edit through an engine without the capability = %v, want engine_unavailable", err)
	}
}
