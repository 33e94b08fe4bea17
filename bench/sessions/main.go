//go:build sessionbench

// Command sessions runs gateway sessions at scale: -sessions gateway engines
// (300) on -replicas hosts (3, each with its own hub and Redis connection, in
// this one process) sharing one database and one Redis, every engine on a
// simulated network (gateway.OpenBenchEngine, built with -tags sessionbench).
// Each session receives -chats direct chats of -per messages (every fifth an
// image). It reports:
//
//   - the resident set (VmRSS, after a GC) per session beyond the idle figure
//     (the process with its database, Redis and hosts, before any session), and
//     the Go heap in use per session;
//
//   - placement: how many sessions each replica runs once all run, and how long
//     placing them took;
//
//   - fail-over: one replica cut off from Redis (as a dead one: it fences its
//     sessions and its leases expire), the time until all its sessions run on
//     the others; then that replica back on Redis, the time until the others
//     handed it its share; and whether any session was ever open on two replicas.
//
//     make bench-sessions   # go run -tags sessionbench ./bench/sessions
//
// Measured on the 2-core development machine (SQLite, miniredis, lease TTL
// 30 s): idle RSS 52 MB; 300 sessions placed in 0.2 s as 101/98/101; 0.52 MB
// RSS per session beyond idle after 500 messages each (heap 0.35 MB); one
// replica cut off with 99-101 sessions, all running elsewhere after 32.7-34.1 s;
// back on Redis, handed its share again in 35 s; none ever open twice. bench/sessions/README.md has the heavier run.
//
// The database is SQLite in a temporary directory unless -db names one; Redis is
// in process (miniredis, its clock following the wall clock) unless -redis does.
// The simulated network has no whatsmeow client behind it: whatsmeow's own
// memory per connected device (its socket, noise state and caches) comes on top.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/host"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

func main() {
	sessions := flag.Int("sessions", 300, "gateway sessions")
	replicas := flag.Int("replicas", 3, "replicas (hosts in this process)")
	chats := flag.Int("chats", 100, "chats each session receives messages in")
	per := flag.Int("per", 5, "messages per chat")
	ttl := flag.Duration("ttl", host.DefaultLeaseTTL, "gateway lease TTL")
	dbURL := flag.String("db", "", "database URL (default: SQLite in a temporary directory)")
	redisURL := flag.String("redis", "", "Redis URL (default: miniredis in this process)")
	flag.Parse()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	slog.SetDefault(quiet)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	client := openDB(ctx, *dbURL)
	defer client.Close()
	addr := openRedis(ctx, *redisURL)
	ids := makeEngines(ctx, client, *sessions)
	var rec recorder
	var reps []*replica
	for i := range *replicas {
		reps = append(reps, newReplica(ctx, fmt.Sprint("r", i+1), addr, client, &rec, *ttl, quiet))
	}
	idleRSS, idleHeap := measure()
	fmt.Printf("idle: RSS %d MB, heap in use %d MB (database, Redis, %d hosts, no session)\n", idleRSS>>20, idleHeap>>20, *replicas)

	began := time.Now()
	for _, r := range reps {
		go r.host.Run(r.ctx)
	}
	wait(10*time.Minute, func() bool { return rec.running() == len(ids) })
	fmt.Printf("placed: %d sessions running in %s; per replica %s (fair share %d, slack 1)\n",
		len(ids), time.Since(began).Round(time.Millisecond), rec.balance(), (len(ids)+len(reps)-1)/len(reps))
	wait(10*time.Minute, func() bool { return rec.balanced(len(ids), len(reps)) })
	fmt.Printf("balanced: %s after %s\n", rec.balance(), time.Since(began).Round(time.Millisecond))

	began = time.Now()
	rec.receive(*chats, *per)
	fmt.Printf("received: %d messages per session (%d chats x %d) in %s\n", *chats**per, *chats, *per, time.Since(began).Round(time.Millisecond))
	rss, heap := measure()
	n := int64(len(ids))
	fmt.Printf("memory: RSS %d MB, %.2f MB per session beyond idle (target <= 5); heap in use %d MB, %.2f MB per session\n",
		rss>>20, float64(rss-idleRSS)/float64(n)/(1<<20), heap>>20, float64(heap-idleHeap)/float64(n)/(1<<20))

	dead := reps[0]
	lost := rec.on(dead.name)
	dead.cut.Store(true)
	began = time.Now()
	wait(10*time.Minute, func() bool { return rec.on(dead.name) == 0 && rec.running() == len(ids) })
	fmt.Printf("fail-over: %s cut off from Redis with %d sessions; all running elsewhere after %s (lease TTL %s); per replica %s\n",
		dead.name, lost, time.Since(began).Round(time.Millisecond), *ttl, rec.balance())
	dead.cut.Store(false)
	began = time.Now()
	wait(10*time.Minute, func() bool { return rec.balanced(len(ids), len(reps)) })
	fmt.Printf("rejoin: %s back on Redis; balanced again after %s: %s\n", dead.name, time.Since(began).Round(time.Millisecond), rec.balance())
	if d := rec.doubles(); len(d) > 0 {
		log.Fatalf("sessions open on two replicas at once: %v", d)
	}
	fmt.Println("no session was ever open on two replicas at once")
}

func openDB(ctx context.Context, url string) *ent.Client {
	if url == "" {
		dir, err := os.MkdirTemp("", "sb-sessions-bench-")
		check(err)
		url = "sqlite://" + filepath.Join(dir, "sb.db")
	}
	client, err := storage.Open(url)
	check(err)
	check(storage.Migrate(ctx, client, url))
	return client
}

// openRedis returns the address of the Redis to use: url's, or an in-process
// one whose clock follows the wall clock (so that leases expire).
func openRedis(ctx context.Context, url string) string {
	if url != "" {
		o, err := redis.ParseURL(url)
		check(err)
		return o.Addr
	}
	mr := miniredis.NewMiniRedis()
	check(mr.Start())
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				mr.FastForward(50 * time.Millisecond)
			}
		}
	}()
	return mr.Addr()
}

// makeEngines stores n paired gateway engines in one workspace.
func makeEngines(ctx context.Context, client *ent.Client, n int) []string {
	sys := viewer.SystemContext(ctx)
	ws := client.Workspace.Create().SetName("bench").SaveX(sys)
	var ids []string
	for i := range n {
		row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind("gateway").SetName(fmt.Sprint("number ", i)).
			SetDeviceJid(fmt.Sprintf("1555%07d:1@s.whatsapp.net", i)).SaveX(sys)
		ids = append(ids, row.ID)
	}
	return ids
}

// replica is one host with its own hub and Redis connection, which can be cut.
type replica struct {
	name string
	host *host.Host
	ctx  context.Context
	cut  *atomic.Bool
}

func newReplica(ctx context.Context, name, addr string, client *ent.Client, rec *recorder, ttl time.Duration, logger *slog.Logger) *replica {
	cut := &atomic.Bool{}
	rdb := redis.NewClient(&redis.Options{Addr: addr, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if cut.Load() {
			return nil, errCut
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return cuttable{c, cut}, err
	}})
	sink := discard{}
	reg := engine.NewRegistry(engine.NewPresence(rdb, ttl), sink, nil)
	hub := remote.NewHub(rdb, client, reg, sink)
	reg.SetRemote(hub)
	check(hub.Start(ctx))
	h := &host.Host{Client: client, Redis: rdb, Hub: hub, LeaseTTL: ttl, Logger: logger,
		Base: gateway.Config{Sink: sink, Logger: logger}, Open: rec.opener(name)}
	return &replica{name: name, host: h, ctx: ctx, cut: cut}
}

// recorder keeps the sessions open on each replica.
type recorder struct {
	mu     sync.Mutex
	open   map[string]map[string]*session // engine id -> replica -> session
	double []string
}

type session struct {
	*gateway.Engine
	rec     *recorder
	replica string
	closed  atomic.Bool
}

// Close closes the engine and notes it closed.
func (s *session) Close() error {
	if !s.closed.Swap(true) {
		s.rec.mu.Lock()
		if s.rec.open[s.ID()][s.replica] == s {
			delete(s.rec.open[s.ID()], s.replica)
		}
		s.rec.mu.Unlock()
	}
	return s.Engine.Close()
}

func (r *recorder) opener(replica string) host.Opener {
	return func(_ context.Context, cfg gateway.Config) (host.Gateway, error) {
		e, _ := gateway.OpenBenchEngine(cfg)
		s := &session{Engine: e, rec: r, replica: replica}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.open == nil {
			r.open = map[string]map[string]*session{}
		}
		if r.open[cfg.EngineID] == nil {
			r.open[cfg.EngineID] = map[string]*session{}
		}
		for other := range r.open[cfg.EngineID] {
			r.double = append(r.double, cfg.EngineID+" on "+replica+" and "+other)
		}
		r.open[cfg.EngineID][replica] = s
		return s, nil
	}
}

func (r *recorder) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, on := range r.open {
		if len(on) > 0 {
			n++
		}
	}
	return n
}

func (r *recorder) perReplica() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, on := range r.open {
		for rep := range on {
			out[rep]++
		}
	}
	return out
}

func (r *recorder) on(replica string) int { return r.perReplica()[replica] }

// balanced is true when every replica runs at most its fair share plus 1.
func (r *recorder) balanced(sessions, replicas int) bool {
	limit := (sessions+replicas-1)/replicas + 1
	for _, n := range r.perReplica() {
		if n > limit {
			return false
		}
	}
	return r.running() == sessions
}

func (r *recorder) balance() string {
	per := r.perReplica()
	var names []string
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+"="+strconv.Itoa(per[n]))
	}
	return strings.Join(parts, " ")
}

func (r *recorder) doubles() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.double...)
}

// receive has every open session receive its messages, two at a time.
func (r *recorder) receive(chats, per int) {
	r.mu.Lock()
	var all []*session
	for _, on := range r.open {
		for _, s := range on {
			all = append(all, s)
		}
	}
	r.mu.Unlock()
	work := make(chan *session)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				s.BenchReceive(chats, per)
			}
		}()
	}
	for _, s := range all {
		work <- s
	}
	close(work)
	wg.Wait()
}

// measure returns the resident set and the Go heap in use, after a GC.
func measure() (rss, heap int64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	raw, err := os.ReadFile("/proc/self/status")
	check(err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			rss = kb << 10
		}
	}
	return rss, int64(ms.HeapInuse)
}

func wait(limit time.Duration, cond func() bool) {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			log.Fatal("not within ", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var errCut = errors.New("cut off from Redis")

// cuttable is a Redis connection that fails every call once cut.
type cuttable struct {
	net.Conn
	cut *atomic.Bool
}

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

// discard takes the sessions' events and drops them: the bench measures the
// sessions, not the inbox.
type discard struct{}

func (discard) HandleEvent(context.Context, engine.Event) error    { return nil }
func (discard) HandleEvents(context.Context, []engine.Event) error { return nil }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
