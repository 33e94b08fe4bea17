package remote_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// blockingSink stores session events at once and holds every other batch until
// release is closed, like a database that is slow.
type blockingSink struct {
	recorder
	release chan struct{}
	waiting atomic.Int32
}

func (s *blockingSink) HandleEvent(ctx context.Context, ev engine.Event) error {
	return s.HandleEvents(ctx, []engine.Event{ev})
}

func (s *blockingSink) HandleEvents(ctx context.Context, evs []engine.Event) error {
	if len(evs) > 0 && evs[0].Type != engine.EventConnected && evs[0].Type != engine.EventGone {
		s.waiting.Add(1)
		<-s.release
		s.waiting.Add(-1)
	}
	return s.recorder.HandleEvents(ctx, evs)
}

// flowSetup is a replica with a short presence TTL, a hub configure may tune,
// and a remote engine's token.
type flow struct {
	hub                     *remote.Hub
	url, token, workspaceID string
}

func flowSetup(t *testing.T, ttl time.Duration, sink engine.BatchSink, configure func(*remote.Hub)) flow {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	acme := client.Workspace.Create().SetName("acme").SaveX(sys)
	token, hash, prefix := auth.NewEngineToken()
	client.Engine.Create().SetWorkspaceID(acme.ID).SetKind(entengine.KindRemote).
		SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	reg := engine.NewRegistry(engine.NewPresence(rdb, ttl), sink, nil)
	hub := remote.NewHub(rdb, client, reg, sink)
	if configure != nil {
		configure(hub)
	}
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
	return flow{hub: hub, url: srv.URL, token: token, workspaceID: acme.ID}
}

// runClient runs a reference client with eng until the test ends and returns
// the sink the engine reports to.
func runClient(t *testing.T, url, token string, eng engine.Engine) (*remote.Client, engine.BatchSink) {
	t.Helper()
	c := &remote.Client{URL: url, Token: token, Kind: engine.KindRegular, Capabilities: engine.CapabilitiesOf(eng), NoReconnect: true}
	sinks := make(chan engine.BatchSink, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		_ = c.Run(ctx, func(_ context.Context, _ remote.Welcome, s engine.BatchSink) (engine.Engine, error) {
			sinks <- s
			return eng, nil
		})
	}()
	select {
	case s := <-sinks:
		return c, s
	case <-time.After(10 * time.Second):
		t.Fatal("no welcome within 10s")
		return nil, nil
	}
}

func ackEvents(n int) []engine.Event {
	evs := make([]engine.Event, n)
	for i := range evs {
		evs[i] = engine.Event{ID: fmt.Sprintf("e%d", i), Type: engine.EventAck, Ack: engine.AckDevice, At: time.Now(),
			Key: engine.Key{FromMe: true, Remote: "15550001111@c.us", ID: fmt.Sprintf("3EB0%d", i)}}
	}
	return evs
}

// Issue 32 row 4: events are stored off the read loop. While the sink holds a
// batch for three presence TTLs, heartbeats are still read: the engine stays
// connected and found, and the batch is acked once the sink lets it through.
func TestHeartbeatsWhileABatchIsStored(t *testing.T) {
	const ttl = 600 * time.Millisecond
	sink := &blockingSink{release: make(chan struct{})}
	f := flowSetup(t, ttl, sink, nil)
	c, into := runClient(t, f.url, f.token, &phone{})
	stored := make(chan error, 1)
	go func() { stored <- into.HandleEvents(context.Background(), ackEvents(3)) }()
	eventually(t, "the sink holds the batch", func() bool { return sink.waiting.Load() == 1 })
	held := time.Now()
	for time.Since(held) < 3*ttl {
		if !c.Connected() {
			t.Fatalf("the engine was closed %v into a slow store (ttl %v)", time.Since(held), ttl)
		}
		if _, err := f.hub.Lookup(context.Background(), f.workspaceID); err != nil {
			t.Fatalf("the engine left presence %v into a slow store: %v", time.Since(held), err)
		}
		time.Sleep(ttl / 10)
	}
	close(sink.release)
	select {
	case err := <-stored:
		if err != nil {
			t.Fatalf("the batch after the slow store: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ack 10s after the store ended")
	}
	if n := len(sink.reported()); n != 3 {
		t.Errorf("%d events stored, want 3", n)
	}
}

// The queue of frames waiting to be stored is bounded: a frame past it is
// acked with the retryable rate_limited error at once (nothing of it stored),
// the connection stays, and the queued ones are stored in order.
func TestEventsQueueFullIsRetryable(t *testing.T) {
	sink := &blockingSink{release: make(chan struct{})}
	f := flowSetup(t, 3*time.Second, sink, func(h *remote.Hub) { h.EventsQueue = 1 })
	ws := rawEngine(t, f.url, f.token)
	writeRaw(t, ws, `{"type":"hello","kind":"regular","capabilities":["send"]}`)
	if w, code := readRaw(t, ws); w["type"] != "welcome" {
		t.Fatalf("no welcome: %v %d", w, code)
	}
	frame := func(id string) string {
		return `{"type":"events","id":"` + id + `","events":[{"id":"` + id + `","type":"ack","ack":3,"key":{"fromMe":true,"remote":"15550001111@c.us","id":"` + id + `"}}]}`
	}
	writeRaw(t, ws, frame("b1"))
	eventually(t, "the first frame is being stored", func() bool { return sink.waiting.Load() == 1 })
	writeRaw(t, ws, frame("b2")) // queued
	writeRaw(t, ws, frame("b3")) // refused
	ack, code := readRaw(t, ws)
	if ack["id"] != "b3" || code != 0 {
		t.Fatalf("first answer = %v (close %d), want b3's refusal", ack, code)
	}
	if e, _ := ack["error"].(map[string]any); e["code"] != switchboard.ERATELIMIT {
		t.Errorf("b3's ack = %v, want error rate_limited", ack)
	}
	writeRaw(t, ws, `{"type":"heartbeat"}`)
	close(sink.release)
	for _, id := range []string{"b1", "b2"} {
		if ack, code := readRaw(t, ws); ack["id"] != id || ack["error"] != nil {
			t.Errorf("ack = %v (close %d), want %s stored", ack, code, id)
		}
	}
}

// slowPhone is a phone whose sends wait until release is closed.
type slowPhone struct {
	phone
	release chan struct{}
	started atomic.Int32
}

func (p *slowPhone) Send(ctx context.Context, m engine.Outgoing) (engine.Key, error) {
	p.started.Add(1)
	select {
	case <-p.release:
	case <-ctx.Done():
		return engine.Key{}, ctx.Err()
	}
	return p.phone.Send(ctx, m)
}

// Commands in flight to one engine are capped: one past the cap waits briefly,
// then fails engine_unavailable; the others complete.
func TestCommandsInFlightCapped(t *testing.T) {
	f := flowSetup(t, 3*time.Second, &recorder{}, func(h *remote.Hub) { h.MaxInFlight = 2 })
	p := &slowPhone{release: make(chan struct{})}
	runClient(t, f.url, f.token, p)
	var eng engine.Engine
	eventually(t, "the engine is found", func() bool {
		e, err := f.hub.Lookup(context.Background(), f.workspaceID)
		eng = e
		return err == nil
	})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = eng.Send(context.Background(), engine.Outgoing{To: "15550001111@c.us", Text: "hi", WireID: fmt.Sprintf("3EB%d", i)})
		}()
	}
	eventually(t, "two sends in flight", func() bool { return p.started.Load() == 2 })
	began := time.Now()
	_, err := eng.Send(context.Background(), engine.Outgoing{To: "15550001111@c.us", Text: "third", WireID: "3EB9"})
	if switchboard.ErrorCode(err) != switchboard.ENOENGINE {
		t.Errorf("a third send = %v (code %s), want engine_unavailable", err, switchboard.ErrorCode(err))
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the third send failed after %v, want about a second", d)
	}
	close(p.release)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("the sends in flight: %v", err)
	}
	if n := len(p.sends()); n != 2 {
		t.Errorf("%d sends reached the phone, want 2", n)
	}
}

// The reference client's reconnect delays double up to a ceiling and are
// drawn between half the ceiling and the ceiling by its Rand.
func TestReconnectBackoffJitter(t *testing.T) {
	draws := []float64{0, 0.25, 0.5, 0.999}
	for n, ceiling := range map[int]time.Duration{0: 500 * time.Millisecond, 1: time.Second, 3: 4 * time.Second, 6: 30 * time.Second, 40: 30 * time.Second} {
		seen := map[time.Duration]bool{}
		for _, r := range draws {
			c := &remote.Client{Rand: func() float64 { return r }}
			d := c.Backoff(n)
			if d < ceiling/2 || d >= ceiling {
				t.Errorf("attempt %d, draw %v: delay %v outside [%v, %v)", n, r, d, ceiling/2, ceiling)
			}
			seen[d] = true
		}
		if len(seen) != len(draws) {
			t.Errorf("attempt %d: %d distinct delays of %d draws: no jitter", n, len(seen), len(draws))
		}
	}
	c := &remote.Client{}
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[c.Backoff(4)] = true
	}
	if len(seen) < 10 {
		t.Errorf("the default rand gave %d distinct delays of 20", len(seen))
	}
}
