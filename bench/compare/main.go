// Command compare measures Switchboard side by side with the anchors of the
// performance issue, in one run on this machine, and prints the ratios:
//
//	ping       GET /v1/ping                     vs a bare net/http JSON handler
//	schedule   POST /v1/scheduled-messages      vs pgbench single-row INSERTs, same clients
//	fanout     messages queued, their events    vs a bare asynq task that HMAC-signs and POSTs 1 KB
//	           fanned out and delivered
//	delivery   recorded events fanned out and   vs the same anchor
//	           delivered by a worker started
//	           after them (what the anchor does)
//	lateness   messages due at one sendAt       p50/p99 of confirmed_at - send_at
//	statements SQL statements per message in a  vs the targets: <= 25, <= 40 with a
//	           burst (bench/statements.sh)         webhook on every message event, and
//	                                               none in 2 idle seconds
//	memory     the server's idle RssAnon        vs the target: <= 20 MB; beside it the
//	                                               idle RSS, the binary's size, peak RSS
//
// It starts its own server (`switchboard serve --role all`) on a fresh PostgreSQL
// database and a Redis database index of its own (the delivery row starts an API
// server and a worker on another fresh database and the index after the anchors'),
// and only ever talks to loopback. The statements row runs bench/statements.sh
// (from the repository's root, as `go run ./bench/compare` is) with the same
// binary, on the Redis index the delivery row uses.
//
//	go run ./bench/compare -pg postgres://postgres@127.0.0.1:5432/test?sslmode=disable -redis redis://127.0.0.1:6379/10
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
)

var (
	pgURL    = flag.String("pg", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL admin URL")
	redisURL = flag.String("redis", "redis://127.0.0.1:6379/10", "Redis URL of the server (flushed); the anchors use the next database index, the delivery row the one after")
	clients  = flag.Int("c", 32, "concurrent clients")
	dur      = flag.Duration("d", 10*time.Second, "duration of each throughput run")
	fanN     = flag.Int("fanout", 2000, "deliveries in the fan-out runs")
	lateN    = flag.Int("late", 10000, "messages in the lateness run")
	spread   = flag.Duration("spread", 0, "spread the lateness run's sendAt evenly over this window (0: all due at one sendAt)")
	lead     = flag.Duration("lead", 0, "time to queue the lateness run before its first sendAt (default: 5 ms a message + 15 s)")
	only     = flag.String("only", "", "comma-separated rows to run (default all)")
	stats    = flag.Bool("stats", false, "print the rows PostgreSQL wrote per table during each row")
	profiles = flag.String("profiles", "", "write a CPU profile of the server during each row into this directory")
)

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "sb-compare")
	check(err)
	defer os.RemoveAll(dir)

	db, drop := freshDatabase()
	defer drop()
	rdb := redisClient()
	bin := build(dir)
	srv := startServer(bin, db, *redisURL)
	defer srv.stop()
	fmt.Printf("%-10s %14s %14s %8s\n", "row", "anchor", "switchboard", "ratio")
	idle := srv.memoryNow()
	run := func(name string) bool { return *only == "" || slices.Contains(strings.Split(*only, ","), name) }
	if run("ping") {
		anchor := bareHandlerRate()
		done := srv.profile("ping", *dur)
		sb := loadRate(srv.base+"/v1/ping", "GET", nil, srv.key)
		done()
		row("ping", anchor, sb, "req/s")
	}
	if run("schedule") {
		anchor := pgbenchRate(db)
		done, written := srv.profile("schedule", *dur), tableWrites(db)
		sb := loadRate(srv.base+"/v1/scheduled-messages/+15559871234", "POST", []byte(`{"type":"text","text":"load test"}`), srv.key)
		done()
		written()
		row("schedule", anchor, sb, "req/s")
		settle(db) // the next rows start with the server idle again
	}
	if run("fanout") {
		anchor := bareAsynqRate(rdb)
		done, written := srv.profile("fanout", *dur), tableWrites(db)
		sb := switchboardFanoutRate(srv)
		done()
		written()
		row("fanout", anchor, sb, "deliveries/s")
	}
	if run("delivery") {
		anchor := bareAsynqRate(rdb)
		sb := switchboardDeliveryRate(bin)
		row("delivery", anchor, sb, "deliveries/s")
	}
	if run("lateness") {
		written := tableWrites(db)
		p50, p99 := lateness(srv, db)
		written()
		how := "due at one sendAt"
		if *spread > 0 {
			how = "due over " + spread.String()
		}
		fmt.Printf("%-10s %14s %14s   p50 %s, p99 %s for %d messages %s\n", "lateness", "-", "-", p50, p99, *lateN, how)
	}
	if run("statements") {
		if f, err := runStatements(bin); err != nil {
			fmt.Fprintln(os.Stderr, "statements:", err)
		} else {
			statementsRows(f)
		}
	}
	if run("memory") {
		memoryRow(idle, srv.peakRSS(), bin)
	}
}

func row(name string, anchor, sb float64, unit string) {
	fmt.Printf("%-10s %14.0f %14.0f %7.2fx  (%s)\n", name, anchor, sb, sb/anchor, unit)
}

// loadRate drives url with the configured clients for the configured time and
// returns successful requests per second.
func loadRate(u, method string, body []byte, key string) float64 {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients * 2}, Timeout: 30 * time.Second}
	var ok atomic.Int64
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	start := time.Now()
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(method, u, bytes.NewReader(body))
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode < 300 {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds()
}

// bareHandlerRate is the ping anchor: the same JSON shape from a bare handler.
func bareHandlerRate() float64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{"api": "ok", "accountId": "ws_x", "whatsappConnections": []any{}}})
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	return loadRate("http://"+ln.Addr().String()+"/v1/ping", "GET", nil, "")
}

// pgbenchRate is the schedule anchor: single-row INSERTs with the same clients.
func pgbenchRate(dbURL string) float64 {
	s, err := sql.Open("pgx", dbURL)
	check(err)
	defer s.Close()
	_, err = s.Exec(`CREATE TABLE IF NOT EXISTS bench_rows (id bigserial primary key, body text, created_at timestamptz default now())`)
	check(err)
	script := filepath.Join(os.TempDir(), "sb-insert.sql")
	check(os.WriteFile(script, []byte("INSERT INTO bench_rows (body) VALUES ('load test');\n"), 0o644))
	out, err := exec.Command("pgbench", "-n", "-f", script, "-c", strconv.Itoa(*clients), "-j", "2",
		"-T", strconv.Itoa(int(dur.Seconds())), dbURL).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgbench: %v\n%s", err, out)
		os.Exit(1)
	}
	m := regexp.MustCompile(`tps = ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		fmt.Fprintf(os.Stderr, "pgbench said:\n%s", out)
		os.Exit(1)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	return tps
}

// receiver counts the POSTs it gets.
type receiver struct {
	*http.Server
	url   string
	hits  atomic.Int64
	first atomic.Int64 // when the first POST came, in Unix nanoseconds
}

func newReceiver() *receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	rc := &receiver{url: "http://" + ln.Addr().String() + "/hook"}
	rc.Server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rc.first.CompareAndSwap(0, time.Now().UnixNano())
		rc.hits.Add(1)
	})}
	go func() { _ = rc.Serve(ln) }()
	return rc
}

func (rc *receiver) waitFor(n int64, limit time.Duration) time.Duration {
	start := time.Now()
	for rc.hits.Load() < n && time.Since(start) < limit {
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// bareAsynqRate is the fan-out anchor: one asynq task per delivery that
// HMAC-signs a 1 KB body and POSTs it.
func bareAsynqRate(rdb *redis.Client) float64 {
	check(rdb.FlushDB(context.Background()).Err())
	rc := newReceiver()
	defer rc.Close()
	body := bytes.Repeat([]byte("x"), 1024)
	httpc := &http.Client{Timeout: 10 * time.Second}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 20, LogLevel: asynq.ErrorLevel,
		TaskCheckInterval: 100 * time.Millisecond})
	mux := asynq.NewServeMux()
	mux.HandleFunc("deliver", func(ctx context.Context, t *asynq.Task) error {
		mac := hmac.New(sha256.New, []byte("secret"))
		mac.Write(t.Payload())
		req, _ := http.NewRequestWithContext(ctx, "POST", rc.url, bytes.NewReader(t.Payload()))
		req.Header.Set("webhook-signature", fmt.Sprintf("v1,%x", mac.Sum(nil)))
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	client := asynq.NewClientFromRedisClient(rdb)
	start := time.Now()
	for i := 0; i < *fanN; i++ {
		_, err := client.Enqueue(asynq.NewTask("deliver", body))
		check(err)
	}
	check(srv.Start(mux))
	rc.waitFor(int64(*fanN), 2*time.Minute)
	took := time.Since(start)
	srv.Shutdown()
	return float64(rc.hits.Load()) / took.Seconds()
}

// switchboardFanoutRate measures events to deliveries end to end: messages are
// queued while one webhook listens to message.queued, and the rate is deliveries
// received per second from the first request.
func switchboardFanoutRate(s *server) float64 {
	rc := newReceiver()
	defer rc.Close()
	body, _ := json.Marshal(map[string]any{"url": rc.url, "events": []string{"message.queued"}})
	status, raw := s.call("POST", "/v1/webhooks", body)
	if status != 201 {
		fmt.Fprintf(os.Stderr, "create webhook: %d %s\n", status, raw)
		os.Exit(1)
	}
	var id struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(raw, &id)
	defer s.call("DELETE", "/v1/webhooks/"+id.Data.ID, nil)
	start := time.Now()
	queueFanout(s)
	queued, got := time.Since(start), rc.hits.Load()
	rc.waitFor(int64(*fanN), 2*time.Minute)
	fmt.Fprintf(os.Stderr, "fanout: %d messages queued in %s, %d delivered by then; all delivered after %s\n",
		*fanN, queued.Round(time.Millisecond), got, time.Since(start).Round(time.Millisecond))
	return float64(rc.hits.Load()) / time.Since(start).Seconds()
}

// queueFanout queues fanN messages due in an hour, from the configured clients.
func queueFanout(s *server) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				s.call("POST", "/v1/scheduled-messages/+15559871235", []byte(`{"type":"text","text":"fan out","sendAt":"`+
					time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`))
			}
		}()
	}
	for i := 0; i < *fanN; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// switchboardDeliveryRate measures fan-out and delivery alone, as the anchor
// measures its tasks: an API server with no worker records fanN message.queued
// events (on a fresh database and Redis index of their own), then a worker
// process starts, and the rate is deliveries per second from its start to the last.
func switchboardDeliveryRate(bin string) float64 {
	db, drop := freshDatabase()
	defer drop()
	opt, err := redis.ParseURL(*redisURL)
	check(err)
	opt.DB += 2
	rdb := redis.NewClient(opt)
	check(rdb.FlushDB(context.Background()).Err())
	rdb.Close()
	redisU := fmt.Sprintf("redis://%s/%d", opt.Addr, opt.DB)
	api := startServer(bin, db, redisU, "--role", "api")
	defer api.stop()
	rc := newReceiver()
	defer rc.Close()
	body, _ := json.Marshal(map[string]any{"url": rc.url, "events": []string{"message.queued"}})
	if status, raw := api.call("POST", "/v1/webhooks", body); status != 201 {
		fmt.Fprintf(os.Stderr, "create webhook: %d %s\n", status, raw)
		os.Exit(1)
	}
	queueFanout(api)
	start := time.Now()
	debug := freePort()
	worker := exec.Command(bin, "serve", "--role", "worker", "--database-url", db, "--redis-url", redisU,
		"--log-level", "warn", "--sandbox-ack-delay", "100ms", "--debug-addr", debug)
	worker.Env = append(os.Environ(), "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true")
	worker.Stderr = os.Stderr
	check(worker.Start())
	w := &server{cmd: worker, debug: debug}
	defer w.stop()
	if *profiles != "" {
		for rc.hits.Load() == 0 && time.Since(start) < time.Minute {
			time.Sleep(time.Millisecond)
		}
		defer w.profile("delivery", time.Duration(*fanN)*time.Second/4000)() // most of the run
	}
	rc.waitFor(int64(*fanN), 2*time.Minute)
	took := time.Since(start)
	fmt.Fprintf(os.Stderr, "delivery: %d events recorded; the first delivered %s after the worker was started, all after %s\n",
		*fanN, time.Unix(0, rc.first.Load()).Sub(start).Round(time.Millisecond), took.Round(time.Millisecond))
	return float64(rc.hits.Load()) / took.Seconds()
}

// lateness queues lateN messages due at one sendAt (or spread over a window) and
// reports how late they were confirmed.
func lateness(s *server, dbURL string) (time.Duration, time.Duration) {
	if *lead == 0 {
		*lead = time.Duration(*lateN)*5*time.Millisecond + 15*time.Second
	}
	at := time.Now().Add(*lead).UTC().Truncate(time.Second)
	go func() {
		time.Sleep(time.Until(at))
		s.profile("lateness", max(5*time.Second, *spread))() // the burst, or the whole window
	}()
	bodyFor := func(i int) []byte {
		due := at.Add(time.Duration(int64(*spread) * int64(i) / int64(*lateN))).Truncate(time.Second)
		return []byte(`{"type":"text","text":"due together","secret":"lateness","sendAt":"` + due.Format(time.RFC3339) + `"}`)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				// Numbers never ending in 0000, which the sandbox rejects.
				s.call("POST", fmt.Sprintf("/v1/scheduled-messages/+1555%03d%04d", i/9000, 1000+i%9000), bodyFor(i))
			}
		}()
	}
	for i := 0; i < *lateN; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if time.Now().After(at) {
		fmt.Fprintln(os.Stderr, "lateness: queueing took longer than the lead time; raise it")
	}
	db, err := sql.Open("pgx", dbURL)
	check(err)
	defer db.Close()
	// Counting is a scan: wait till the last sendAt before asking.
	time.Sleep(time.Until(at.Add(*spread)))
	deadline := at.Add(*spread + 5*time.Minute)
	for time.Now().Before(deadline) {
		var left int
		check(db.QueryRow(`SELECT count(*) FROM messages WHERE secret = 'lateness' AND confirmed_at IS NULL`).Scan(&left))
		if left == 0 {
			break
		}
		// The count reads every message (170 ms for 100,000): asked often, it
		// takes PostgreSQL's time from the run it measures.
		time.Sleep(2 * time.Second)
	}
	if *spread >= 20*time.Second {
		// Whether lateness grows over the window (the pipeline falls behind) or
		// stays level (each burst takes its time) shows in its tenths.
		rows, err := db.Query(`SELECT width_bucket(extract(epoch FROM send_at - $1::timestamptz), 0, $2, 10),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM confirmed_at - send_at)),
			percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM confirmed_at - send_at))
			FROM messages WHERE secret = 'lateness' GROUP BY 1 ORDER BY 1`, at, spread.Seconds())
		check(err)
		for rows.Next() {
			var tenth int
			var b50, b99 float64
			check(rows.Scan(&tenth, &b50, &b99))
			fmt.Fprintf(os.Stderr, "lateness: tenth %2d of the window: p50 %4.0f ms, p99 %4.0f ms\n", tenth, b50*1000, b99*1000)
		}
		check(rows.Err())
	}
	var p50, p99 float64
	check(db.QueryRow(`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM confirmed_at - send_at)),
		percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM confirmed_at - send_at))
		FROM messages WHERE secret = 'lateness'`).Scan(&p50, &p99))
	return time.Duration(p50 * float64(time.Second)), time.Duration(p99 * float64(time.Second))
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}
