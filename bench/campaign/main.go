// Command campaign runs one campaign with pacing turned down to zero on
// PostgreSQL and Redis, through the real router and the real worker (app.New,
// role all, the sandbox engine), and reports the time from POST /v1/campaigns to
// completion (every contact read or counted failed), the peak RSS of the process
// (which is the server: API, worker and sandbox network) and the final counters.
// It creates its own database (bench_campaign by default, dropped at the end
// unless -keep) and flushes the Redis database it is given.
//
//	go run ./bench/campaign                          (10,000 contacts, 1 in 500 a ...0000 number)
//	go run ./bench/campaign -contacts 1000           (a quick look)
//
// The servers are TEST_DATABASE_URL and TEST_REDIS_URL (or -database-url and
// -redis-url).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/campaigns"
)

func main() {
	base := flag.String("database-url", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL server to create the benchmark database on")
	redisURL := flag.String("redis-url", envOr("TEST_REDIS_URL", "redis://127.0.0.1:6379/2"), "Redis database to use (flushed first)")
	name := flag.String("db", "bench_campaign", "name of the benchmark database (dropped and created)")
	contacts := flag.Int("contacts", 10000, "contacts in the audience")
	failEvery := flag.Int("fail-every", 500, "every n-th contact is a ...0000 number, which the sandbox rejects (0: none)")
	ackDelay := flag.Duration("ack-delay", time.Second, "the sandbox's ack delay (received after 1x, read after 2x)")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	keep := flag.Bool("keep", false, "keep the database afterwards")
	verbose := flag.Bool("v", false, "print the counters every 2 seconds")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the campaign's run to this file")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	flushRedis(ctx, *redisURL)
	dbURL := createDatabase(ctx, *base, *name)
	if !*keep {
		defer dropDatabase(*base, *name)
	}
	a, err := app.New(ctx, app.Config{Addr: "127.0.0.1:0", DatabaseURL: dbURL, RedisURL: *redisURL, Role: app.RoleAll,
		SandboxWorkspaces: []string{"*"}, SandboxAckDelay: *ackDelay, PresenceTTL: 10 * time.Second,
		DataDir: os.TempDir() + "/bench_campaign", Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	check(err)
	defer a.Close()
	check(a.Start(ctx))
	issued, err := auth.CreateKey(ctx, a.Client, "bench", []string{"*"}, "bench")
	check(err)
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	api := apiClient{url: srv.URL, key: issued.Key}

	t0 := time.Now()
	id, failing := makeAudience(api, *contacts, *failEvery)
	fmt.Printf("audience of %d contacts (%d of them ...0000) in %s\n", *contacts, failing, time.Since(t0).Round(time.Millisecond))

	if *profile != "" {
		f, err := os.Create(*profile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	c := api.call("POST", "/v1/campaigns", map[string]any{"name": "bench", "audienceId": id, "text": "Hi {firstName}!",
		"pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0, "dailyCap": 100000}})
	c, sentAt := awaitDelivered(api, c["cmpId"].(string), start, *timeout, *verbose)
	took := time.Since(start)
	fmt.Printf("campaign of %d contacts, pacing 0: every message sent (complete_sent) after %s, every contact read or failed (complete_delivered) after %s\n",
		*contacts, sentAt.Round(time.Millisecond), took.Round(time.Millisecond))
	fmt.Printf("final counters: status=%v totalCount=%v sentCount=%v deliveredCount=%v readCount=%v failedCount=%v\n",
		c["status"], c["totalCount"], c["sentCount"], c["deliveredCount"], c["readCount"], c["failedCount"])
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("peak RSS %s (VmHWM of the process: server, worker, sandbox and this client), Go heap in use %d MB, GOMAXPROCS %d\n",
		peakRSS(), ms.HeapInuse>>20, runtime.GOMAXPROCS(0))
}

// apiClient calls the API of the server at url with the API key key.
type apiClient struct{ url, key string }

// call makes a request with body as JSON and returns the data of its answer; any
// answer but 200 ends the benchmark.
func (api apiClient) call(method, path string, body any) map[string]any {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, api.url+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+api.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	check(err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		log.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	var m map[string]any
	check(json.Unmarshal(out, &m))
	d, _ := m["data"].(map[string]any)
	return d
}

// makeAudience creates an audience of contacts contacts, added 1000 at a time,
// every failEvery-th of them a number the sandbox rejects; it returns the
// audience's id and how many of its contacts will fail.
func makeAudience(api apiClient, contacts, failEvery int) (id string, failing int) {
	aud := api.call("POST", "/v1/audiences", map[string]any{"name": "bench"})
	id = aud["id"].(string)
	for first := 0; first < contacts; first += 1000 {
		var batch []map[string]any
		for i := first; i < min(first+1000, contacts); i++ {
			to := fmt.Sprintf("+1777%06d5", i)
			if failEvery > 0 && i%failEvery == 0 {
				to = fmt.Sprintf("+1777%06d0000", i)
				failing++
			}
			batch = append(batch, map[string]any{"to": to, "variables": map[string]any{"firstName": fmt.Sprintf("C%d", i)}})
		}
		api.call("POST", "/v1/audiences/"+id+"/contacts", map[string]any{"contacts": batch})
	}
	return id, failing
}

// awaitDelivered polls campaign cid, started at start, until every contact read
// or failed (complete_delivered); it returns the campaign then, and when every
// message had been sent (complete_sent). Not done within timeout ends the
// benchmark; verbose prints the counters every 2 seconds.
func awaitDelivered(api apiClient, cid string, start time.Time, timeout time.Duration, verbose bool) (c map[string]any, sentAt time.Duration) {
	deadline := time.Now().Add(timeout)
	lastReport := time.Now()
	for {
		c = api.call("GET", "/v1/campaigns/"+cid, nil)
		n := func(k string) int { f, _ := c[k].(float64); return int(f) }
		if sentAt == 0 && (c["status"] == string(campaigns.StatusCompleteSent) || c["status"] == string(campaigns.StatusCompleteDelivered)) {
			sentAt = time.Since(start)
		}
		if c["status"] == string(campaigns.StatusCompleteDelivered) && n("readCount")+n("failedCount") == n("totalCount") {
			return c, sentAt
		}
		if verbose && time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			fmt.Printf("  %5.1fs %v sent=%d delivered=%d read=%d failed=%d\n", time.Since(start).Seconds(), c["status"],
				n("sentCount"), n("deliveredCount"), n("readCount"), n("failedCount"))
		}
		if time.Now().After(deadline) {
			log.Fatalf("not complete after %s: %v", timeout, c)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// peakRSS is the process's VmHWM from /proc.
func peakRSS() string {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func flushRedis(ctx context.Context, raw string) {
	opt, err := redis.ParseURL(raw)
	check(err)
	c := redis.NewClient(opt)
	defer c.Close()
	check(c.FlushDB(ctx).Err())
}

func createDatabase(ctx context.Context, base, name string) string {
	admin, err := sql.Open("pgx", base)
	check(err)
	defer admin.Close()
	_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	check(err)
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	check(err)
	u, err := url.Parse(base)
	check(err)
	u.Path = "/" + name
	return u.String()
}

func dropDatabase(base, name string) {
	admin, err := sql.Open("pgx", base)
	if err == nil {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
