// Command fanout measures webhook delivery end to end: it runs a Switchboard in
// process (embedded default, or DATABASE_URL / REDIS_URL), registers N endpoints on
// a local receiver, queues M messages (one message.queued event each) and reports
// how fast the N×M deliveries arrive.
//
//	go run ./bench/fanout -endpoints 10 -events 200
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
)

func main() {
	endpoints := flag.Int("endpoints", 10, "webhook endpoints")
	events := flag.Int("events", 200, "events (messages queued)")
	timeout := flag.Duration("timeout", 5*time.Minute, "give up after")
	flag.Parse()

	var got atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer recv.Close()

	dir, _ := os.MkdirTemp("", "fanout")
	defer os.RemoveAll(dir)
	cfg := app.Config{
		Addr: "127.0.0.1:0", DatabaseURL: envOr("DATABASE_URL", "sqlite://"+dir+"/sb.db"), RedisURL: os.Getenv("REDIS_URL"),
		Role: app.RoleAll, AllowPrivate: true, SandboxAckDelay: time.Hour, SandboxWorkspaces: []string{"*"},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	api := httptest.NewUnstartedServer(nil)
	cfg.PublicURL = "http://" + api.Listener.Addr().String()
	ctx := context.Background()
	a, err := app.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	api.Config.Handler = a.Handler
	api.Start()
	defer api.Close()
	if err := a.Start(ctx); err != nil {
		log.Fatal(err)
	}
	key, err := auth.CreateKey(ctx, a.Client, "fanout", []string{"*"}, "bench")
	if err != nil {
		log.Fatal(err)
	}
	post := func(path string, body any) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", api.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+key.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode >= 300 {
			log.Fatalf("POST %s: %v %v", path, err, resp.Status)
		}
		resp.Body.Close()
	}
	for i := 0; i < *endpoints; i++ {
		post("/v1/webhooks", map[string]any{"url": fmt.Sprintf("%s/hook/%d", recv.URL, i), "events": []string{"message.queued"}})
	}
	want := int64(*endpoints * *events)
	start := time.Now()
	for i := 0; i < *events; i++ {
		post("/v1/scheduled-messages/+15559991111", map[string]any{"type": "text", "text": "fan-out"})
	}
	queued := time.Since(start)
	deadline := time.Now().Add(*timeout)
	for got.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	fmt.Printf("endpoints=%d events=%d deliveries=%d/%d queued_in=%s elapsed=%s throughput=%.0f deliveries/s\n",
		*endpoints, *events, got.Load(), want, queued.Round(time.Millisecond), elapsed.Round(time.Millisecond),
		float64(got.Load())/elapsed.Seconds())
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
