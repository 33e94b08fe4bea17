package conformance_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/remote/conformance"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage"
)

// runSandbox is the sandbox engine served out of process, as `switchboard
// engine sandbox` runs it, with its memory in dir.
func runSandbox(dir string) func(ctx context.Context, server, token string) error {
	return func(ctx context.Context, server, token string) error {
		url := "sqlite://" + filepath.ToSlash(filepath.Join(dir, "engine.db"))
		db, err := storage.Open(url)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := storage.Migrate(ctx, db, url); err != nil {
			return err
		}
		return sandbox.ServeRemote(ctx, &remote.Client{URL: server, Token: token}, db, 50*time.Millisecond)
	}
}

func logReport(t *testing.T, r *conformance.Report) {
	t.Helper()
	var b bytes.Buffer
	r.Write(&b)
	t.Log("\n" + b.String())
}

// The sandbox engine, served out of process, passes every check.
func TestSandboxConforms(t *testing.T) {
	var out bytes.Buffer
	r, err := conformance.Run(context.Background(), conformance.Options{Start: runSandbox(t.TempDir()), Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, r)
	if r.Failed() > 0 {
		t.Errorf("%d checks failed; the engine said:\n%s", r.Failed(), out.String())
	}
	for _, name := range []string{"handshake", "heartbeats", "command Send", "idempotent Send", "send through the API", "events", "resend after an ack error", "reconnect", "no reconnect after 4002", "frames"} {
		if c, ok := r.Find(name); !ok || c.Status != conformance.Pass {
			t.Errorf("check %q: %+v, want PASS", name, c)
		}
	}
}

// faultyEngine speaks the protocol with three faults: it answers every
// command with an empty result, closes the connection on a frame type it does
// not know, and connects again after any close.
func faultyEngine(ctx context.Context, server, token string) error {
	for ctx.Err() == nil {
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(server, "http")+remote.Path,
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
		if err != nil {
			// Dial again, as its fault is to connect again after any close: a dial
			// refused on a busy machine once ended it, and "no reconnect after
			// 4002" passed for it.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		_ = wsjson.Write(ctx, ws, map[string]any{"type": "hello", "kind": "regular", "capabilities": []string{"send"}, "versions": []int{1}})
		var welcome struct {
			HeartbeatMs int64 `json:"heartbeatMs"`
		}
		if err := wsjson.Read(ctx, ws, &welcome); err != nil {
			continue
		}
		beat, stop := context.WithCancel(ctx)
		go func() {
			t := time.NewTicker(time.Duration(welcome.HeartbeatMs) * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-beat.Done():
					return
				case <-t.C:
					_ = wsjson.Write(beat, ws, map[string]string{"type": "heartbeat"})
				}
			}
		}()
		for {
			var f struct{ Type, ID string }
			if err := wsjson.Read(ctx, ws, &f); err != nil {
				break
			}
			switch f.Type {
			case "command":
				_ = wsjson.Write(ctx, ws, map[string]any{"type": "reply", "id": f.ID, "result": []any{}})
			case "events_ack", "state_ack":
			default:
				_ = ws.Close(websocket.StatusPolicyViolation, "unknown frame type "+f.Type)
			}
		}
		stop()
		ws.CloseNow()
	}
	return ctx.Err()
}

// An engine off the contract fails the checks of what it does wrong, and
// passes the others.
func TestFaultyEngineFails(t *testing.T) {
	r, err := conformance.Run(context.Background(), conformance.Options{Start: faultyEngine, Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, r)
	got := map[string]conformance.Status{}
	for _, c := range r.Checks {
		got[c.Name] = c.Status
	}
	want := map[string]conformance.Status{
		"handshake": conformance.Pass, "heartbeats": conformance.Pass,
		"unknown frame type": conformance.Fail, "unknown method": conformance.Fail,
		"malformed params": conformance.Fail, "command Send": conformance.Fail,
		"reconnect": conformance.Pass, "no reconnect after 4002": conformance.Fail,
	}
	for name, status := range want {
		if got[name] != status {
			t.Errorf("check %q = %q, want %q", name, got[name], status)
		}
	}
}
