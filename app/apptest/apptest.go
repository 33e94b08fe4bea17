// Package apptest runs a whole Switchboard (real router, real asynq worker, sandbox
// engine) for tests: on SQLite and an in-process Redis by default, or on the
// PostgreSQL and Redis named by TEST_DATABASE_URL and TEST_REDIS_URL.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// Env is one running Switchboard.
type Env struct {
	T      testing.TB
	App    *app.App
	Server *httptest.Server
	// Key is a key with every scope in workspace "default".
	Key string
	// Config is the configuration the app runs with.
	Config app.Config
}

// Options tune an Env.
type Options struct {
	// RedisDB is the database index used on TEST_REDIS_URL; each test package that
	// runs Envs picks its own so packages can run in parallel.
	RedisDB int
	// Configure edits the configuration before the app starts.
	Configure func(*app.Config)
	// NoStart leaves the background parts (worker, heartbeat) stopped.
	NoStart bool
}

// New starts a Switchboard for t and stops it when t ends.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	cfg := app.Config{
		Addr:        "127.0.0.1:0",
		DatabaseURL: storagetest.DatabaseURL(t),
		RedisURL:    redisURL(t, o.RedisDB),
		Role:        app.RoleAll,
		// Test receivers, pages and media live on loopback; tests of the guard turn
		// these off through Configure.
		AllowPrivate:            true,
		LinkPreviewAllowPrivate: true,
		MediaAllowPrivate:       true,
		SandboxAckDelay:         50 * time.Millisecond,
		SandboxWorkspaces:       []string{"*"},
		PresenceTTL:             3 * time.Second,
		DataDir:                 t.TempDir(),
		Logger:                  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	srv := httptest.NewUnstartedServer(nil)
	cfg.PublicURL = "http://" + srv.Listener.Addr().String()
	a, err := app.New(ctx, cfg)
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	srv.Config.Handler = a.Handler
	srv.Start()
	e := &Env{T: t, App: a, Server: srv, Config: cfg}
	t.Cleanup(func() { srv.Close(); a.Close() })
	if !o.NoStart {
		if err := a.Start(ctx); err != nil {
			t.Fatalf("apptest: start: %v", err)
		}
	}
	e.Key = e.NewKey("default", "*")
	return e
}

// NewKey issues a key in workspace with scopes.
func (e *Env) NewKey(workspace string, scopes ...string) string {
	e.T.Helper()
	issued, err := auth.CreateKey(context.Background(), e.App.Client, workspace, scopes, "test")
	if err != nil {
		e.T.Fatalf("apptest: create key: %v", err)
	}
	return issued.Key
}

// Response is a decoded answer.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Data returns body.data as an object.
func (r *Response) Data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

// List returns body.data as a list of objects.
func (r *Response) List() []map[string]any {
	raw, _ := r.Body["data"].([]any)
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// Error returns body.error.
func (r *Response) Error() map[string]any {
	d, _ := r.Body["error"].(map[string]any)
	return d
}

// DetailPaths lists the paths of body.error.details.
func (r *Response) DetailPaths() []string {
	var out []string
	details, _ := r.Error()["details"].([]any)
	for _, d := range details {
		if m, ok := d.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["path"]))
		}
	}
	return out
}

// Do sends a request with key (none when empty). body is JSON-encoded unless it is
// a string or []byte, sent as is. headers are name, value pairs.
func (e *Env) Do(method, path, key string, body any, headers ...string) *Response {
	e.T.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	case []byte:
		rd, ct = bytes.NewReader(b), "application/json"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd, ct = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequest(method, e.Server.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.Send(req)
}

// Send sends a prepared request.
func (e *Env) Send(req *http.Request) *Response {
	e.T.Helper()
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		e.T.Fatalf("apptest: %s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	return out
}

// Eventually polls cond until it holds or timeout passes.
func (e *Env) Eventually(timeout time.Duration, what string, cond func() bool) {
	e.T.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.T.Fatalf("apptest: timed out after %s waiting for %s", timeout, what)
}

func redisURL(t testing.TB, db int) string {
	base := os.Getenv("TEST_REDIS_URL")
	if base == "" {
		return ""
	}
	opt, err := redis.ParseURL(base)
	if err != nil {
		t.Fatalf("apptest: TEST_REDIS_URL: %v", err)
	}
	opt.DB = db
	c := redis.NewClient(opt)
	defer c.Close()
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("apptest: flush redis: %v", err)
	}
	u, _ := url.Parse(base)
	u.Path = fmt.Sprintf("/%d", db)
	return u.String()
}

// Text returns the raw body as a string.
func (r *Response) Text() string { return string(r.Raw) }
