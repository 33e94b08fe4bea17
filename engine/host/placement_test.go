package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// testTTL is the lease TTL of these tests: renewals every 100 ms, the fence at
// 400 ms after the last renewal began.
const testTTL = 600 * time.Millisecond

// sessions records which replica has which engine open, and every instant two
// replicas had one engine open at once.
type sessions struct {
	mu      sync.Mutex
	open    map[string]map[string]bool // engine id -> replica -> open
	doubled []string
}

func (s *sessions) opener(replica string) Opener {
	return func(_ context.Context, cfg gateway.Config) (Gateway, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open == nil {
			s.open = map[string]map[string]bool{}
		}
		if s.open[cfg.EngineID] == nil {
			s.open[cfg.EngineID] = map[string]bool{}
		}
		for other := range s.open[cfg.EngineID] {
			s.doubled = append(s.doubled, fmt.Sprintf("%s opened on %s while open on %s", cfg.EngineID, replica, other))
		}
		s.open[cfg.EngineID][replica] = true
		return &session{s: s, id: cfg.EngineID, replica: replica, device: cfg.DeviceJID}, nil
	}
}

// where maps each open engine to its replicas.
func (s *sessions) where() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for id, on := range s.open {
		for r := range on {
			out[id] = append(out[id], r)
		}
	}
	return out
}

// perReplica counts the engines open on each replica.
func (s *sessions) perReplica() map[string]int {
	out := map[string]int{}
	for _, on := range s.where() {
		for _, r := range on {
			out[r]++
		}
	}
	return out
}

func (s *sessions) overlaps() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.doubled...)
}

// session is a connected gateway engine that records when it closes.
type session struct {
	s                   *sessions
	id, replica, device string
	closed              atomic.Bool
}

func (g *session) ID() string   { return g.id }
func (g *session) Kind() string { return engine.KindGateway }
func (g *session) Send(context.Context, engine.Outgoing) (engine.Key, error) {
	return engine.Key{}, errors.New("not in this test")
}
func (g *session) State() gateway.State {
	return gateway.State{Status: gateway.StatusConnected, Connected: !g.closed.Load(), DeviceJID: g.device}
}
func (g *session) Close() error {
	if g.closed.Swap(true) {
		return nil
	}
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	delete(g.s.open[g.id], g.replica)
	if len(g.s.open[g.id]) == 0 {
		delete(g.s.open, g.id)
	}
	return nil
}

// cuttable is a Redis connection that fails every call once cut.
type cuttable struct {
	net.Conn
	cut *atomic.Bool
}

var errCut = errors.New("cut off from redis")

func (c cuttable) Read(b []byte) (int, error) {
	if c.cut.Load() {
		return 0, errCut
	}
	return c.Conn.Read(b)
}

func (c cuttable) Write(b []byte) (int, error) {
	if c.cut.Load() {
		return 0, errCut
	}
	return c.Conn.Write(b)
}

// cluster is a database and a Redis (its clock following the wall clock)
// shared by the hosts of a test.
type cluster struct {
	t      *testing.T
	client *ent.Client
	mr     *miniredis.Miniredis
	s      sessions
	ids    []string
}

func newCluster(t *testing.T, engines int) *cluster {
	client := storagetest.Client(t, storagetest.DatabaseURL(t))
	mr := miniredis.RunT(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { // leases expire in real time
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				mr.FastForward(10 * time.Millisecond)
			}
		}
	}()
	c := &cluster{t: t, client: client, mr: mr}
	sys := viewer.SystemContext(ctx)
	ws := client.Workspace.Create().SetName("acme").SaveX(sys)
	for i := range engines {
		row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind("gateway").SetName(fmt.Sprint("gw", i)).
			SetDeviceJid(fmt.Sprintf("1555000%04d:1@s.whatsapp.net", i)).SaveX(sys)
		c.ids = append(c.ids, row.ID)
	}
	return c
}

// host starts a host named replica until the returned stop is called; cut,
// when set, cuts its Redis connections.
func (c *cluster) host(replica string, cut *atomic.Bool) (*Host, context.CancelFunc) {
	opts := &redis.Options{Addr: c.mr.Addr()}
	if cut != nil {
		opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if cut.Load() {
				return nil, errCut
			}
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			return cuttable{conn, cut}, err
		}
	}
	rdb := redis.NewClient(opts)
	c.t.Cleanup(func() { rdb.Close() })
	sink := nopSink{}
	reg := engine.NewRegistry(engine.NewPresence(rdb, testTTL), sink, nil)
	hub := remote.NewHub(rdb, c.client, reg, sink)
	reg.SetRemote(hub)
	ctx, cancel := context.WithCancel(context.Background())
	if err := hub.Start(ctx); err != nil {
		c.t.Fatal(err)
	}
	h := &Host{Client: c.client, Redis: rdb, Hub: hub, Open: c.s.opener(replica), LeaseTTL: testTTL, Handoff: 3,
		Logger: slog.New(slog.DiscardHandler)}
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	stop := func() { cancel(); <-done }
	c.t.Cleanup(stop)
	return h, stop
}

type nopSink struct{}

func (nopSink) HandleEvent(context.Context, engine.Event) error    { return nil }
func (nopSink) HandleEvents(context.Context, []engine.Event) error { return nil }

// until polls cond (recorded state) until it holds, failing after limit.
func until(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	began := time.Now()
	for !cond() {
		if time.Since(began) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(began)
}

// allRunning is true when every engine is open on exactly one replica and no
// replica runs more than max.
func (c *cluster) allRunning(max int) bool {
	w := c.s.where()
	if len(w) != len(c.ids) {
		return false
	}
	for _, n := range c.s.perReplica() {
		if n > max {
			return false
		}
	}
	return true
}
