//go:build faults

// Package faults is Switchboard's fault-injection suite: it runs real server and
// worker processes on PostgreSQL and Redis, sends messages through them with a
// webhook receiver subscribed to every event, and meanwhile kills processes with
// SIGKILL and SIGTERM, cuts the database off, flushes Redis, answers webhooks
// oddly and buries the worker under a backlog. Then it checks that nothing was
// lost, nothing is stuck, nothing was sent twice and every event was delivered.
//
// Run it with `make faults` (TEST_DATABASE_URL and TEST_REDIS_URL must be set).
package faults

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	"github.com/switchboardhq/switchboard/webhook"
)

// redisDB is the suite's database index on TEST_REDIS_URL.
const redisDB = 9

func TestFaults(t *testing.T) {
	h := newHarness(t)

	// Replicas that start together on an empty database all come up.
	t.Log("concurrent first starts: 3 API replicas and a worker")
	api := h.proc("api", "api")
	extra1, extra2 := h.proc("api-2", "api"), h.proc("api-3", "api")
	worker := h.proc("worker", "worker")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, p := range []*proc{api, extra1, extra2, worker} {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- p.tryStart() }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	extra1.stop(syscall.SIGTERM)
	extra2.stop(syscall.SIGTERM)
	all := h.proc("server", "all")
	all.start()
	h.key = h.createKey()
	h.createWebhook(all)

	// Phase 1: 1,000 sends under faults.
	load := h.startLoad(1000, []*proc{api, all}, 8)
	step := func(at int, what string, f func()) {
		load.waitAccepted(at)
		t.Logf("after %d accepted: %s", load.accepted.Load(), what)
		start := time.Now()
		f()
		t.Logf("  done in %s", time.Since(start).Round(10*time.Millisecond))
	}
	step(80, "kill -9 the worker", func() { worker.kill(); worker.start() })
	step(160, "kill -9 the server", func() { all.kill(); all.start() })
	step(240, "kill -9 the worker", func() { worker.kill(); worker.start() })
	step(320, "kill -9 the server", func() { all.kill(); all.start() })
	step(400, "kill -9 the API", func() { api.kill(); api.start() })
	step(480, "SIGTERM the server under load", func() { all.stop(syscall.SIGTERM); all.start() })
	step(540, "SIGTERM the worker under load", func() { worker.stop(syscall.SIGTERM); worker.start() })
	step(600, "the database is cut off for 10 s", func() { h.db.cut(10 * time.Second) })
	var rescheduled map[string]time.Time
	step(800, "Redis is flushed, then deferred messages are moved earlier", func() {
		h.flushRedis()
		rescheduled = h.rescheduleDeferred(all, 20)
	})
	load.wait()

	// Phase 2: a backlog larger than a reconciler batch is lost from Redis while
	// the worker is down; the worker's first pass on start finds all of it.
	t.Log("backlog: 600 messages queued with the worker down, then Redis flushed")
	worker.stop(syscall.SIGTERM)
	backlog := h.startLoad(600, []*proc{api, all}, 8)
	backlog.wait()
	h.flushRedis()
	worker.start()

	h.verify(append(load.sent(), backlog.sent()...), load.errors500.Load()+backlog.errors500.Load(), rescheduled)
}

// harness holds what the suite runs.
type harness struct {
	t        *testing.T
	bin      string
	dir      string
	dbURL    string // direct
	proxyURL string // through the cuttable proxy
	redisURL string
	db       *proxy
	rdb      *redis.Client
	sql      *sql.DB
	receiver *receiver
	key      string
	nextPort atomic.Int32
}

func newHarness(t *testing.T) *harness {
	base, rbase := os.Getenv("TEST_DATABASE_URL"), os.Getenv("TEST_REDIS_URL")
	if base == "" || rbase == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("the fault suite needs TEST_DATABASE_URL and TEST_REDIS_URL")
		}
		t.Skip("TEST_DATABASE_URL and TEST_REDIS_URL are not set")
	}
	h := &harness{t: t, dir: t.TempDir()}
	if d := os.Getenv("FAULTS_LOGS"); d != "" { // keep the processes' logs there
		h.dir = d
	}
	h.bin = filepath.Join(h.dir, "switchboard")
	build := exec.Command("go", "build", "-o", h.bin, "./cmd/switchboard")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("sb_faults_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); admin.Close() })
	u, _ := url.Parse(base)
	u.Path = "/" + name
	h.dbURL = u.String()
	if h.sql, err = sql.Open("pgx", h.dbURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.sql.Close() })
	h.db = newProxy(t, u.Host)
	pu := *u
	pu.Host = h.db.addr
	h.proxyURL = pu.String()

	opt, err := redis.ParseURL(rbase)
	if err != nil {
		t.Fatal(err)
	}
	opt.DB = redisDB
	h.rdb = redis.NewClient(opt)
	t.Cleanup(func() { h.rdb.Close() })
	h.flushRedis()
	ru, _ := url.Parse(rbase)
	ru.Path = fmt.Sprintf("/%d", redisDB)
	h.redisURL = ru.String()

	h.receiver = newReceiver(t)
	// Below Linux's ephemeral range (32768–60999): a port in it can be
	// taken at any moment by one of the suite's own outgoing connections.
	h.nextPort.Store(int32(20000 + os.Getpid()%1000*10))
	return h
}

func (h *harness) flushRedis() {
	if err := h.rdb.FlushDB(context.Background()).Err(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) createKey() string {
	out, err := exec.Command(h.bin, "keys", "create", "--database-url", h.dbURL, "--workspace", "default", "--scopes", "*").Output()
	if err != nil {
		h.t.Fatalf("keys create: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func (h *harness) createWebhook(p *proc) {
	body, _ := json.Marshal(map[string]any{"url": h.receiver.URL, "events": webhook.Catalog, "description": "faults"})
	status, raw := h.call(p, "POST", "/v1/webhooks", body)
	if status != 201 {
		h.t.Fatalf("create webhook: %d %s", status, raw)
	}
}

func (h *harness) call(p *proc, method, path string, body []byte, headers ...string) (int, []byte) {
	req, _ := http.NewRequest(method, p.base()+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+h.key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// proc is one Switchboard process.
type proc struct {
	h    *harness
	name string
	role string
	addr string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

func (h *harness) proc(name, role string) *proc {
	p := &proc{h: h, name: name, role: role, addr: h.freeAddr(), log: filepath.Join(h.dir, name+".log")}
	h.t.Cleanup(func() { p.kill() })
	return p
}

// freeAddr is the next loopback address of the suite's range that nothing
// listens on. A process keeps its address across restarts.
func (h *harness) freeAddr() string {
	for {
		addr := fmt.Sprintf("127.0.0.1:%d", h.nextPort.Add(1))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
}

func (p *proc) base() string { return "http://" + p.addr }

// start runs the process and waits until it serves (or, for a worker, runs).
func (p *proc) start() {
	if err := p.tryStart(); err != nil {
		p.h.t.Fatal(err)
	}
}

func (p *proc) tryStart() error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	mark, _ := logf.Seek(0, io.SeekEnd)
	p.cmd = exec.Command(p.h.bin, "serve", "--role", p.role, "--addr", p.addr)
	p.cmd.Env = append(os.Environ(),
		"DATABASE_URL="+p.h.proxyURL, "REDIS_URL="+p.h.redisURL,
		"SWITCHBOARD_SANDBOX_ACK_DELAY=300ms", "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true",
		"SWITCHBOARD_WEBHOOK_RETRY_SCHEDULE=1s,2s,4s,8s,15s,30s,60s", "SWITCHBOARD_DISPATCH_TIMEOUT=4s",
		"SWITCHBOARD_LOG_LEVEL=info", "SWITCHBOARD_RATE_LIMIT=off")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); logf.Close(); close(done) }(p.cmd, p.done)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			out, _ := os.ReadFile(p.log)
			return fmt.Errorf("%s exited on start:\n%s", p.name, out[mark:])
		default:
		}
		if p.role == "worker" {
			out, _ := os.ReadFile(p.log)
			if bytes.Contains(out[mark:], []byte("switchboard worker running")) {
				return nil
			}
		} else if resp, err := http.Get(p.base() + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not start within 60s", p.name)
}

// kill ends the process with SIGKILL.
func (p *proc) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	p.cmd = nil
}

// stop sends sig and waits for the process to end.
func (p *proc) stop(sig os.Signal) {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.h.t.Errorf("%s did not stop within 60s of %v", p.name, sig)
		p.kill()
	}
	p.cmd = nil
}
