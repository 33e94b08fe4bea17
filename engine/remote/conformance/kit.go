// Package conformance is the engine protocol's conformance kit
// (docs/engine-protocol.md, "Conformance"): it starts a Switchboard, runs the
// engine under test against it through a proxy that records every frame, and
// checks the contract: the handshake, heartbeats, every command the engine
// announces with its reply's shape, event batches and their acks, resending,
// unknown frames, methods and fields, malformed params, reconnecting and the
// final close codes. Its report lists each check.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// Options configure a run of the kit.
type Options struct {
	// Command starts the engine under test (its program and arguments). The kit
	// adds SWITCHBOARD_SERVER (the server's base URL) and
	// SWITCHBOARD_ENGINE_TOKEN (its engine token) to its environment, and stops
	// it with SIGTERM at the end.
	Command []string
	// Start runs an engine in this process instead of Command, until ctx ends.
	Start func(ctx context.Context, server, token string) error
	// To is a number on the engine's network (E.164) that the kit sends
	// messages to; +15550002222 when empty.
	To string
	// Wait bounds each wait for the engine: 15 s when zero.
	Wait time.Duration
	// Output receives the engine's stdout and stderr (discarded when nil).
	Output io.Writer
	// Logger receives the server's log (discarded when nil).
	Logger *slog.Logger
}

// Status is a check's outcome.
type Status string

// Outcomes of a check.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Check is one checked rule of the contract.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Report is the outcome of a run: every check, in the order they ran.
type Report struct {
	Checks []Check `json:"checks"`
}

// Failed is the number of failed checks.
func (r *Report) Failed() int { return r.count(Fail) }

func (r *Report) count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Find returns the check named name.
func (r *Report) Find(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Write prints the report, one line a check and a summary.
func (r *Report) Write(w io.Writer) {
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%-4s  %-30s %s\n", c.Status, c.Name, c.Detail)
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", r.count(Pass), r.count(Fail), r.count(Skip))
}

// kit is one run: the server, the proxy, the engine's record and the report.
type kit struct {
	o        Options
	app      *app.App
	front    *httptest.Server // the engine's and the kit's way in
	back     *httptest.Server // the server itself, behind the proxy
	proxy    *proxy
	j        *journal
	v        *remote.Validator
	key      string         // an all-scopes API key
	bg       sync.WaitGroup // work the checks left running (a send through the API)
	engineID string
	token    string
	report   Report

	// what the handshake learned
	link         int // the connection the checks talk to
	heartbeat    time.Duration
	maxFrame     int64
	maxBatch     int
	capabilities []string
	welcomed     bool
}

// Run starts a server and the engine under test, runs every check and returns
// the report. An error means the kit itself could not run.
func Run(ctx context.Context, o Options) (*Report, error) {
	if len(o.Command) == 0 && o.Start == nil {
		return nil, errors.New("conformance: no engine to run: give a command")
	}
	if o.To == "" {
		o.To = "+15550002222"
	}
	if o.Wait <= 0 {
		o.Wait = 15 * time.Second
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dir, err := os.MkdirTemp("", "switchboard-conformance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	k := &kit{o: o, j: newJournal()}
	if k.v, err = remote.NewValidator(); err != nil {
		return nil, err
	}
	if err := k.startServer(ctx, dir); err != nil {
		return nil, err
	}
	defer k.stopServer()
	stop, err := k.startEngine(ctx)
	if err != nil {
		return nil, err
	}
	k.runChecks(ctx)
	stop()
	k.bg.Wait()
	return &k.report, nil
}

// startServer starts a Switchboard on an embedded database and Redis in dir,
// its engine endpoint behind the proxy, and creates the remote engine.
func (k *kit) startServer(ctx context.Context, dir string) error {
	k.front = httptest.NewUnstartedServer(nil)
	k.back = httptest.NewUnstartedServer(nil)
	cfg := app.Config{
		Addr:        "127.0.0.1:0",
		DatabaseURL: "sqlite://" + filepath.ToSlash(filepath.Join(dir, "switchboard.db")),
		Role:        app.RoleAll,
		PublicURL:   "http://" + k.front.Listener.Addr().String(),
		DataDir:     dir,
		// Heartbeats every second, so that the checks of liveness are quick.
		PresenceTTL: 3 * time.Second,
		// The engine under test runs on this machine: its media is on loopback.
		MediaAllowPrivate: true,
		Logger:            k.o.Logger,
	}
	a, err := app.New(ctx, cfg)
	if err != nil {
		return fmt.Errorf("conformance: start the server: %w", err)
	}
	k.app = a
	k.back.Config.Handler = a.Handler
	k.back.Start()
	k.proxy = newProxy("ws://"+k.back.Listener.Addr().String()+remote.Path, k.j)
	mux := http.NewServeMux()
	mux.Handle(remote.Path, k.proxy)
	mux.Handle("/", a.Handler)
	k.front.Config.Handler = mux
	k.front.Start()
	if err := a.Start(ctx); err != nil {
		return fmt.Errorf("conformance: start the server: %w", err)
	}
	issued, err := auth.CreateKey(ctx, a.Client, app.DefaultWorkspace, []string{"*"}, "conformance")
	if err != nil {
		return fmt.Errorf("conformance: create a key: %w", err)
	}
	k.key = issued.Key
	var created struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	if code, err := k.api(ctx, http.MethodPost, "/v1/engines", map[string]any{"kind": "remote", "name": "under test"}, &created); err != nil || code != http.StatusCreated {
		return fmt.Errorf("conformance: create the remote engine: %d %v", code, err)
	}
	k.engineID, k.token = created.ID, created.Token
	if code, err := k.api(ctx, http.MethodPost, "/v1/engines/"+k.engineID+"/default", nil, nil); err != nil || code != http.StatusOK {
		return fmt.Errorf("conformance: make the engine the default: %d %v", code, err)
	}
	return nil
}

func (k *kit) stopServer() {
	k.front.Close()
	k.back.Close()
	k.app.Close()
}

// startEngine starts the engine under test; stop ends it.
func (k *kit) startEngine(ctx context.Context) (stop func(), err error) {
	server := k.front.URL
	if k.o.Start != nil {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := k.o.Start(ctx, server, k.token); err != nil && ctx.Err() == nil {
				fmt.Fprintf(k.o.Output, "conformance: the engine stopped: %v\n", err)
			}
		}()
		return func() { cancel(); <-done }, nil
	}
	cmd := exec.Command(k.o.Command[0], k.o.Command[1:]...)
	cmd.Env = append(os.Environ(), "SWITCHBOARD_SERVER="+server, "SWITCHBOARD_ENGINE_TOKEN="+k.token)
	cmd.Stdout, cmd.Stderr = k.o.Output, k.o.Output
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("conformance: start %s: %w", k.o.Command[0], err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}, nil
}

// api calls the server's REST API with the kit's key and decodes the answer's
// data into out.
func (k *kit) api(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.front.URL+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+k.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			return resp.StatusCode, err
		}
		if err := json.Unmarshal(env.Data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	return resp.StatusCode, nil
}

// chatPath is the path segment of the kit's peer's chat.
func (k *kit) chatPath() string { return url.PathEscape(jidOf(k.o.To)) }

// jidOf is the chat id of an E.164 number.
func jidOf(phone string) string { return strings.TrimPrefix(phone, "+") + "@c.us" }
