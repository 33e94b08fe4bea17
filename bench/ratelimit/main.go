// Command ratelimit checks the per-key rate limit under load: it starts
// Switchboard in process (embedded SQLite and Redis, or -redis-url to share a
// real Redis) with a limit of -rate requests per minute and a burst of
// -burst, then sends GET /v1/ping with one key at a pace below the limit and
// at one well above it, and prints how many requests were answered 200 and
// 429, and whether every answer carried correct X-RateLimit-* (and, on 429,
// Retry-After) headers. Below the limit nothing may be refused; above it, what
// goes through must match the limit (the burst, then one request per period
// divided by the rate).
//
//	go run ./bench/ratelimit                    (600/m, burst 20, 10 s per pace)
//	go run ./bench/ratelimit -d 30s -redis-url redis://127.0.0.1:6379/13
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
)

func main() {
	rate := flag.Int("rate", 600, "requests per minute one key may make")
	burst := flag.Int("burst", 20, "requests that may come at once")
	d := flag.Duration("d", 10*time.Second, "how long each pace runs")
	redisURL := flag.String("redis-url", "", "Redis to keep the counts in (embedded when empty)")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench_ratelimit")
	check(err)
	defer os.RemoveAll(dir)
	a, err := app.New(ctx, app.Config{Addr: "127.0.0.1:0", DatabaseURL: "sqlite://" + dir + "/rl.db", RedisURL: *redisURL,
		Role: app.RoleAPI, SandboxWorkspaces: []string{"nobody"}, DataDir: dir,
		RateLimit: fmt.Sprintf("%d/m", *rate), RateBurst: *burst,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	check(err)
	defer a.Close()
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()

	perSecond := float64(*rate) / 60
	fmt.Printf("limit %d/min (%.1f/s), burst %d; %s per pace\n\n", *rate, perSecond, *burst, *d)
	fmt.Printf("%-22s %8s %6s %6s %9s %10s %s\n", "pace", "sent", "200", "429", "expected", "bad hdrs", "")
	for _, pace := range []struct {
		name string
		rps  float64
	}{
		{"below (0.8x the rate)", perSecond * 0.8},
		{"above (4x the rate)", perSecond * 4},
	} {
		// A fresh key each time, so the two paces do not share a budget.
		issued, err := auth.CreateKey(ctx, a.Client, "bench", []string{"*"}, "ratelimit")
		check(err)
		var sent, ok, limited, bad int
		tick := time.NewTicker(time.Duration(float64(time.Second) / pace.rps))
		start := time.Now()
		for time.Since(start) < *d {
			<-tick.C
			sent++
			status, good := ping(srv.URL, issued.Key, *rate)
			switch status {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				limited++
			default:
				log.Fatalf("unexpected status %d", status)
			}
			if !good {
				bad++
			}
		}
		tick.Stop()
		elapsed := time.Since(start).Seconds()
		// What GCRA lets through: the burst, then one request per emission interval.
		expected := min(sent, *burst+int(elapsed*perSecond))
		verdict := "ok"
		if pace.rps < perSecond && limited > 0 || bad > 0 || ok > expected+1 || ok < expected-2 {
			verdict = "WRONG"
		}
		fmt.Printf("%-22s %8d %6d %6d %9d %10d %s\n", pace.name, sent, ok, limited, expected, bad, verdict)
	}
}

// ping sends one request and says whether its rate-limit headers are right.
func ping(base, key string, rate int) (int, bool) {
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/ping", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h := resp.Header
	good := h.Get("X-RateLimit-Limit") == strconv.Itoa(rate)
	remaining, err1 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	reset, err2 := strconv.Atoi(h.Get("X-RateLimit-Reset"))
	good = good && err1 == nil && err2 == nil && remaining >= 0 && reset >= 0
	if resp.StatusCode == http.StatusTooManyRequests {
		retry, err := strconv.Atoi(h.Get("Retry-After"))
		good = good && err == nil && retry >= 1 && remaining == 0
	} else {
		good = good && h.Get("Retry-After") == ""
	}
	return resp.StatusCode, good
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
