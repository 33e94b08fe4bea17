package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Switchboard under test: a built binary run as a child process on a fresh
// database, and what is read of it.

// server is the Switchboard under test.
type server struct {
	cmd   *exec.Cmd
	base  string
	key   string
	debug string // its profiles' address
}

// profile starts a CPU profile of the server for d when -profiles is set; the
// returned func waits for it to be written to <profiles>/<name>.pprof.
func (s *server) profile(name string, d time.Duration) (wait func()) {
	if *profiles == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", s.debug, int(d.Seconds())))
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return
		}
		defer resp.Body.Close()
		check(os.MkdirAll(*profiles, 0o755))
		f, err := os.Create(filepath.Join(*profiles, name+".pprof"))
		check(err)
		defer f.Close()
		_, _ = io.Copy(f, resp.Body)
	}()
	return func() { <-done }
}

// build compiles the server into dir.
func build(dir string) string {
	bin := filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-o", bin, "./cmd/switchboard")
	build.Stderr = os.Stderr
	check(build.Run())
	return bin
}

// startServer starts bin serving the API (--role all unless extra says
// otherwise) on dbURL and redisURL, and waits for it to answer.
func startServer(bin, dbURL, redisURL string, extra ...string) *server {
	addr, debug := freePort(), freePort()
	args := append([]string{"serve", "--role", "all", "--addr", addr, "--database-url", dbURL, "--redis-url", redisURL,
		"--bootstrap-key", "--log-level", "warn", "--sandbox-ack-delay", "100ms", "--debug-addr", debug,
		"--rate-limit", "off"}, // the load is the point here
		extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true")
	out, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	s := &server{cmd: cmd, base: "http://" + addr, debug: debug}
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("sb_live_")) || !bytes.HasSuffix(bytes.TrimRight(got, " "), []byte("\n")) {
		n, err := out.Read(buf)
		check(err)
		got = append(got, buf[:n]...)
	}
	s.key = string(regexp.MustCompile(`sb_live_[0-9a-z]+`).Find(got))
	go func() { _, _ = io.Copy(io.Discard, out) }()
	for i := 0; i < 200; i++ {
		if resp, err := http.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "server did not start")
	os.Exit(1)
	return nil
}

func (s *server) call(method, path string, body []byte) (int, []byte) {
	req, _ := http.NewRequest(method, s.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
}

// peakRSS reads the server's peak resident set from /proc (VmHWM).
func (s *server) peakRSS() int64 { return procStatus(s.cmd.Process.Pid, "VmHWM:") }

func procStatus(pid int, field string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, field) {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// freshDatabase creates a database for the run and returns its URL and a
// function that drops it.
func freshDatabase() (string, func()) {
	admin, err := sql.Open("pgx", *pgURL)
	check(err)
	var autovacuum string
	check(admin.QueryRow("SHOW autovacuum").Scan(&autovacuum))
	if autovacuum != "on" {
		fmt.Fprintln(os.Stderr, "PostgreSQL runs with autovacuum off: the tables this run fills are never analyzed or vacuumed while it runs (README, Measuring performance)")
	}
	name := fmt.Sprintf("sb_compare_%d", time.Now().UnixNano())
	_, err = admin.Exec("CREATE DATABASE " + name)
	check(err)
	u, err := url.Parse(*pgURL)
	check(err)
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	}
}

// redisClient returns a client of the anchors' Redis database: the one after the
// server's, flushed, so that the anchors never touch the server's queues.
func redisClient() *redis.Client {
	opt, err := redis.ParseURL(*redisURL)
	check(err)
	server := redis.NewClient(opt)
	check(server.FlushDB(context.Background()).Err())
	server.Close()
	opt.DB++
	c := redis.NewClient(opt)
	check(c.FlushDB(context.Background()).Err())
	return c
}

// settle waits (up to two minutes) until the server has sent every message it
// was given and applied every engine event it stored, so that a row does not pay
// for the backlog of the one before.
func settle(dbURL string) {
	db, err := sql.Open("pgx", dbURL)
	check(err)
	defer db.Close()
	start := time.Now()
	for time.Since(start) < 2*time.Minute {
		var msgs, events, acks int
		check(db.QueryRow(`SELECT (SELECT count(*) FROM messages WHERE status IN ('pending', 'sending') AND send_at IS NULL),
			(SELECT count(*) FROM inbox_events WHERE applied_at IS NULL AND dead_at IS NULL),
			(SELECT count(*) FROM sandbox_events)`).Scan(&msgs, &events, &acks))
		if time.Since(start) > 10*time.Second && int(time.Since(start).Seconds())%10 == 0 {
			fmt.Fprintf(os.Stderr, "settling: %d messages to send, %d events to apply, %d acks to come\n", msgs, events, acks)
		}
		if msgs+events+acks == 0 {
			fmt.Fprintf(os.Stderr, "settled in %s\n", time.Since(start).Round(100*time.Millisecond))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "settle: still busy after two minutes")
}

// tableWrites snapshots PostgreSQL's per-table write counters when -stats is set;
// the returned func prints what was written since, per table, and the commits.
func tableWrites(dbURL string) (print func()) {
	if !*stats {
		return func() {}
	}
	db, err := sql.Open("pgx", dbURL)
	check(err)
	snap := func() map[string][4]int64 {
		out := map[string][4]int64{}
		rows, err := db.Query(`SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables
			UNION ALL SELECT 'commits', xact_commit, 0, 0, 0 FROM pg_stat_database WHERE datname = current_database()`)
		check(err)
		defer rows.Close()
		for rows.Next() {
			var name string
			var v [4]int64
			check(rows.Scan(&name, &v[0], &v[1], &v[2], &v[3]))
			out[name] = v
		}
		return out
	}
	before := snap()
	return func() {
		defer db.Close()
		time.Sleep(time.Second) // counters reach the statistics at the end of transactions, flushed about every second
		after := snap()
		names := slices.Sorted(maps.Keys(after))
		fmt.Printf("%-10s %-22s %10s %10s %10s %10s\n", "", "table", "inserted", "updated", "hot", "deleted")
		for _, name := range names {
			a, b := after[name], before[name]
			if a == b {
				continue
			}
			fmt.Printf("%-10s %-22s %10d %10d %10d %10d\n", "", name, a[0]-b[0], a[1]-b[1], a[2]-b[2], a[3]-b[3])
		}
	}
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().String()
}
