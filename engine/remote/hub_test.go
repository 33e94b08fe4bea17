package remote_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

var sys = viewer.SystemContext(context.Background())

// recorder is the server's sink: the events the hubs stored, in arrival order.
type recorder struct {
	mu  sync.Mutex
	evs []engine.Event
}

func (r *recorder) HandleEvent(ctx context.Context, ev engine.Event) error {
	return r.HandleEvents(ctx, []engine.Event{ev})
}

func (r *recorder) HandleEvents(_ context.Context, evs []engine.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, evs...)
	return nil
}

// reported is what the sink holds of the engine's own events (not the
// registry's connected/disconnected ones), as "<workspace> <engine> <id>".
func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.evs {
		if ev.Type == engine.EventAck {
			out = append(out, ev.WorkspaceID+" "+ev.EngineID+" "+ev.ID)
		}
	}
	return out
}

// phone is the engine the remote process runs: it records what it is asked to
// send and answers a media fetch with ErrNotFound.
type phone struct {
	mu   sync.Mutex
	sent []string
	sink engine.BatchSink
}

func (p *phone) ID() string   { return "phone" }
func (p *phone) Kind() string { return engine.KindRegular }
func (p *phone) Close() error { return nil }
func (p *phone) Send(_ context.Context, m engine.Outgoing) (engine.Key, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, m.To+" "+m.Text)
	return engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}, nil
}
func (p *phone) FetchMedia(context.Context, engine.Key) (engine.Media, error) {
	return engine.Media{}, engine.ErrNotFound
}

func (p *phone) sends() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sent...)
}

// replica is one server process: its hub, registry and endpoint.
type replica struct {
	hub *remote.Hub
	reg *engine.Registry
	url string
	// frames are the frames exchanged through url, checked against the
	// protocol's schema when the test ends.
	frames *frameLog
}

func newReplica(t *testing.T, rdb redis.UniversalClient, client *ent.Client, sink engine.BatchSink) replica {
	t.Helper()
	reg := engine.NewRegistry(engine.NewPresence(rdb, 3*time.Second), sink, nil)
	hub := remote.NewHub(rdb, client, reg, sink)
	reg.SetRemote(hub)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(hub.Handler(func(w http.ResponseWriter, _ *http.Request, err error) {
		http.Error(w, err.Error(), http.StatusUnauthorized)
	}, nil))
	t.Cleanup(srv.Close)
	// The engine reaches the hub through a proxy that records every frame the
	// hub and the reference client exchange; each must validate against the
	// protocol's schema.
	log := &frameLog{}
	proxy := httptest.NewServer(recordingProxy(srv.URL, log))
	t.Cleanup(func() {
		proxy.Close()
		validateFrames(t, log)
	})
	return replica{hub: hub, reg: reg, url: proxy.URL, frames: log}
}

// eventually polls cond (recorded state) until it holds or the test times out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A remote engine connects to one replica with its token and serves its
// workspace from every replica: found by Lookup and Get on the other one, sent
// through across Redis, its events stored under the workspace and engine of its
// token (whatever the process claims), an error crossing as its kind; another
// workspace never finds it; ending it on the other replica closes its socket for
// good; a wrong token never connects.
func TestRemoteEngineAcrossReplicas(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	acme := client.Workspace.Create().SetName("acme").SaveX(sys)
	other := client.Workspace.Create().SetName("other").SaveX(sys)
	token, hash, prefix := auth.NewEngineToken()
	row := client.Engine.Create().SetWorkspaceID(acme.ID).SetKind(entengine.KindRemote).
		SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)

	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	sink := &recorder{}
	a, b := newReplica(t, rdb, client, sink), newReplica(t, rdb, client, sink)

	p := &phone{}
	c := &remote.Client{URL: a.url, Token: token, Kind: engine.KindRegular, Capabilities: engine.CapabilitiesOf(p), NoReconnect: true}
	welcomed := make(chan remote.Welcome, 1)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- c.Run(ctx, func(_ context.Context, w remote.Welcome, s engine.BatchSink) (engine.Engine, error) {
			p.sink = s
			welcomed <- w
			return p, nil
		})
	}()
	var w remote.Welcome
	select {
	case w = <-welcomed:
	case err := <-done:
		t.Fatalf("the engine did not connect: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no welcome within 10s")
	}
	if w.EngineID != row.ID || w.WorkspaceID != acme.ID {
		t.Errorf("welcome = %+v, want engine %s of %s", w, row.ID, acme.ID)
	}

	// Found on the replica that does not hold its socket, and sent through.
	var far engine.Engine
	eventually(t, "replica B finds the engine", func() bool {
		e, err := b.hub.Lookup(context.Background(), acme.ID)
		far = e
		return err == nil && e.ID() == row.ID
	})
	if _, err := b.hub.Lookup(context.Background(), other.ID); !errors.Is(err, engine.ErrNoEngine) {
		t.Errorf("another workspace's Lookup = %v, want ErrNoEngine", err)
	}
	if _, err := b.hub.Get(context.Background(), other.ID, row.ID); !errors.Is(err, engine.ErrDisconnected) {
		t.Errorf("another workspace's Get = %v, want ErrDisconnected", err)
	}
	key, err := far.Send(context.Background(), engine.Outgoing{To: "15550001111@c.us", Text: "across", WireID: "3EB0W1"})
	if err != nil || key.ID != "3EB0W1" {
		t.Fatalf("send through B = %+v, %v", key, err)
	}
	near, err := a.hub.Get(context.Background(), acme.ID, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := near.Send(context.Background(), engine.Outgoing{To: "15550002222@c.us", Text: "here", WireID: "3EB0W2"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"15550001111@c.us across", "15550002222@c.us here"}, p.sends()); diff != "" {
		t.Errorf("the phone's sends (-want +got):\n%s", diff)
	}
	if f, ok := far.(engine.MediaFetcher); !ok {
		t.Error("the proxy does not fetch media")
	} else if _, err := f.FetchMedia(context.Background(), key); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("an engine's ErrNotFound across replicas = %v", err)
	}

	// Events are stored under the token's workspace and engine, whatever the
	// process writes in them.
	ev := func(id, ws string) engine.Event {
		return engine.Event{ID: id, Type: engine.EventAck, WorkspaceID: ws, EngineID: "eng_forged",
			Key: engine.Key{FromMe: true, Remote: "15550001111@c.us", ID: "3EB0W1"}, Ack: engine.AckDevice, At: time.Now()}
	}
	if err := p.sink.HandleEvents(context.Background(), []engine.Event{ev("e1", acme.ID), ev("e2", other.ID)}); err != nil {
		t.Fatal(err)
	}
	want := []string{acme.ID + " " + row.ID + " e1", acme.ID + " " + row.ID + " e2"}
	eventually(t, "both events stored", func() bool { return len(sink.reported()) == 2 })
	if diff := cmp.Diff(want, sink.reported()); diff != "" {
		t.Errorf("stored events (-want +got):\n%s", diff)
	}

	// Ended from the replica without its socket: the process is told for good.
	if err := b.hub.End(context.Background(), acme.ID, row.ID, engine.EndDeleted); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ce *remote.CloseError
		if !errors.As(err, &ce) || !remote.Terminal(ce.Code) {
			t.Errorf("Run after End = %v, want a terminal close", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine still runs 10s after End")
	}
	eventually(t, "the engine is gone from B", func() bool {
		_, err := b.hub.Lookup(context.Background(), acme.ID)
		return errors.Is(err, engine.ErrNoEngine)
	})

	// A wrong token is refused before any hello.
	bad := &remote.Client{URL: a.url, Token: auth.EngineTokenPrefix + "wrong", NoReconnect: true}
	err = bad.Run(context.Background(), func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) {
		t.Error("a wrong token was welcomed")
		return p, nil
	})
	if err == nil {
		t.Error("a wrong token connected")
	}
}
