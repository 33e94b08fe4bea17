package rest_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// A remote engine that stops heartbeating leaves ping within the TTL, its
// pending command fails, and later commands fail fast.
func TestRemoteEngineHeartbeatLoss(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	rem := createEngine(e, key, "remote")
	id := rem["id"].(string)
	blocking := &blockingEngine{got: make(chan struct{})}
	c := &remote.Client{URL: e.Server.URL, Token: rem["token"].(string), Kind: engine.KindRegular, NoReconnect: true}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return blocking, nil })
	}()
	e.Eventually(10*time.Second, "the engine in ping", func() bool { return pinged(e, key, id) })

	wsID := e.Do("GET", "/v1/ping", key, nil).Data()["accountId"].(string)
	eng, err := e.App.Engines.Find(context.Background(), wsID, id)
	if err != nil {
		t.Fatal(err)
	}
	pending := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := eng.Send(sctx, engine.Outgoing{WireID: "3EB0TEST", To: "15550001234@c.us", Type: "text", Text: "stuck"})
		pending <- err
	}()
	select {
	case <-blocking.got:
	case err := <-pending:
		t.Fatalf("the command ended before reaching the engine: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not reach the engine")
	}
	c.PauseHeartbeat(true)
	start := time.Now()
	e.Eventually(10*time.Second, "ping without the engine", func() bool { return !pinged(e, key, id) })
	select {
	case err := <-pending:
		if !errors.Is(err, engine.ErrDisconnected) {
			t.Errorf("pending command = %v, want engine_disconnected", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pending command did not fail")
	}
	if gone := time.Since(start); gone > 3*e.Config.PresenceTTL {
		t.Errorf("gone after %s, TTL %s", gone, e.Config.PresenceTTL)
	}
	var ce *remote.CloseError
	if err := <-done; !errors.As(err, &ce) || ce.Code != remote.CloseHeartbeat {
		t.Errorf("client ended with %v, want close %d", err, remote.CloseHeartbeat)
	}
	// Commands now fail at once with a clear error.
	t0 := time.Now()
	if _, err := eng.Send(context.Background(), engine.Outgoing{WireID: "3EB0TEST2", To: "15550001234@c.us", Type: "text", Text: "x"}); !errors.Is(err, engine.ErrDisconnected) {
		t.Errorf("send to a gone engine = %v", err)
	}
	if time.Since(t0) > time.Second {
		t.Errorf("failing took %s", time.Since(t0))
	}
	if _, err := e.App.Engines.Find(context.Background(), wsID, id); !errors.Is(err, engine.ErrDisconnected) {
		t.Errorf("find a gone engine = %v", err)
	}
	if r := e.Do("POST", "/v1/messages/+15550001234", key, map[string]any{"type": "text", "text": "x"}); r.Status != 503 {
		t.Errorf("send without engine = %d %s", r.Status, r.Raw)
	}
}

// Bad tokens, malformed and oversized frames close that connection only.
func TestRemoteEngineBadConnections(t *testing.T) {
	e := remoteEnv(t, func(c *app.Config) { c.EngineMaxFrame = 64 << 10 })
	key := e.NewKey("acme", "*")
	good := createEngine(e, key, "remote")
	_, _ = runSandbox(t, e.Server.URL, good["token"].(string))
	e.Eventually(10*time.Second, "the good engine in ping", func() bool { return pinged(e, key, good["id"].(string)) })
	bad := createEngine(e, key, "remote")
	url := "ws" + strings.TrimPrefix(e.Server.URL, "http") + remote.Path
	ctx := context.Background()

	dial := func(token string) *websocket.Conn {
		t.Helper()
		var opts websocket.DialOptions
		if token != "" {
			opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
		}
		c, _, err := websocket.Dial(ctx, url, &opts)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		return c
	}
	write := func(c *websocket.Conn, v any) {
		t.Helper()
		raw, _ := json.Marshal(v)
		if err := c.Write(ctx, websocket.MessageText, raw); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	closedWith := func(c *websocket.Conn) websocket.StatusCode {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			if _, _, err := c.Read(rctx); err != nil {
				return websocket.CloseStatus(err)
			}
		}
	}
	hello := map[string]any{"type": "hello", "kind": "regular", "capabilities": []string{"send"}, "version": 1}

	// A bad token in the header is refused before the upgrade.
	if _, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer sb_engine_nope"}}}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("bad header token: %v %v", err, resp)
	}
	// A bad token in the hello closes with 4001.
	c := dial("")
	write(c, map[string]any{"type": "hello", "token": "sb_engine_nope", "kind": "regular"})
	if code := closedWith(c); code != remote.CloseUnauthorized {
		t.Errorf("bad hello token closed with %d", code)
	}
	// No token at all, likewise.
	c = dial("")
	write(c, hello)
	if code := closedWith(c); code != remote.CloseUnauthorized {
		t.Errorf("no token closed with %d", code)
	}
	// A first frame that is not a hello, or not JSON.
	c = dial(bad["token"].(string))
	write(c, map[string]any{"type": "heartbeat"})
	if code := closedWith(c); code != websocket.StatusPolicyViolation {
		t.Errorf("heartbeat before hello closed with %d", code)
	}
	c = dial(bad["token"].(string))
	_ = c.Write(ctx, websocket.MessageText, []byte("{not json"))
	if code := closedWith(c); code != websocket.StatusPolicyViolation {
		t.Errorf("malformed hello closed with %d", code)
	}
	// A welcomed engine that sends garbage, or an oversized frame. The
	// oversized one is larger than the sockets' buffers, so the engine is still
	// writing it when the hub refuses it: it must read 1009, not a reset.
	for _, tc := range []struct {
		name  string
		frame []byte
		code  websocket.StatusCode
	}{
		{"malformed", []byte(`{"type":`), websocket.StatusPolicyViolation},
		// A frame of an unknown type is answered unsupported, never closed
		// (engine/remote TestUnknownFramesAndFieldsAreIgnored).
		{"binary", nil, websocket.StatusPolicyViolation},
		{"oversized", []byte(`{"type":"events","events":[],"pad":"` + strings.Repeat("x", 4<<20) + `"}`), websocket.StatusMessageTooBig},
	} {
		c := dial(bad["token"].(string))
		write(c, hello)
		_, data, err := c.Read(ctx)
		if err != nil || !strings.Contains(string(data), `"welcome"`) {
			t.Fatalf("%s: no welcome: %v %s", tc.name, err, data)
		}
		if tc.frame == nil {
			err = c.Write(ctx, websocket.MessageBinary, []byte{1, 2, 3})
		} else {
			err = c.Write(ctx, websocket.MessageText, tc.frame)
		}
		if err != nil {
			t.Fatalf("%s: write: %v", tc.name, err)
		}
		if code := closedWith(c); code != tc.code {
			t.Errorf("%s closed with %d, want %d", tc.name, code, tc.code)
		}
	}
	// The good engine never noticed.
	if !pinged(e, key, good["id"].(string)) {
		t.Error("the good engine left ping")
	}
	sent := e.Do("POST", "/v1/messages/+15550005555", key, map[string]any{"type": "text", "text": "still here"})
	if sent.Status != 201 || sent.Data()["status"] != "confirmed" {
		t.Errorf("send through the good engine = %d %s", sent.Status, sent.Raw)
	}
	e.Eventually(10*time.Second, "the bad engine gone", func() bool { return !pinged(e, key, bad["id"].(string)) })
}

// Two API replicas share the database and Redis: the engine's socket is on
// replica B, and what replica A (with the worker) asks of it is routed there.
func TestRemoteEngineOnAnotherReplica(t *testing.T) {
	// Two API replicas and one worker: the engine's socket is on B; the API
	// calls are A's; the queued send is the worker's.
	a := remoteEnv(t, func(c *app.Config) { c.Role = app.RoleAPI })
	redisURL := a.Config.RedisURL
	if redisURL == "" {
		redisURL = a.App.RedisURL()
	}
	replica := func(role string) *apptest.Env {
		return apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
			c.SandboxWorkspaces = []string{"default"}
			c.PresenceTTL = a.Config.PresenceTTL
			c.DatabaseURL, c.RedisURL, c.Role = a.Config.DatabaseURL, redisURL, role
		}})
	}
	b, _ := replica(app.RoleAPI), replica(app.RoleWorker)
	key := a.NewKey("acme", "*")
	rem := createEngine(a, key, "remote")
	id := rem["id"].(string)
	_, _ = runSandbox(t, b.Server.URL, rem["token"].(string))
	a.Eventually(10*time.Second, "replica A sees the engine", func() bool { return pinged(a, key, id) })
	if a.App.Engines.Held(mustWorkspace(t, a, key), id) {
		t.Fatal("replica A holds the session")
	}

	// A direct send on A (the command crosses to B), then a queued one that A's
	// worker dispatches.
	sent := a.Do("POST", "/v1/messages/+15550007777", key, map[string]any{"type": "text", "text": "via B"})
	if sent.Status != 201 || sent.Data()["status"] != "confirmed" {
		t.Fatalf("direct send on A = %d %s", sent.Status, sent.Raw)
	}
	a.Eventually(10*time.Second, "read ack", func() bool {
		return a.Do("GET", "/v1/messages/"+sent.Data()["id"].(string), key, nil).Data()["ack"] == float64(3)
	})
	queued := a.Do("POST", "/v1/scheduled-messages/+15550008888", key, map[string]any{"type": "text", "text": "queued via B"})
	a.Eventually(10*time.Second, "queued message read", func() bool {
		return a.Do("GET", "/v1/scheduled-messages/"+queued.Data()["id"].(string), key, nil).Data()["status"] == "read"
	})
	// Deleting it on A closes the socket on B.
	if r := a.Do("DELETE", "/v1/engines/"+id, key, nil); r.Status != 200 {
		t.Fatalf("delete = %d %s", r.Status, r.Raw)
	}
	b.Eventually(10*time.Second, "the engine gone from B", func() bool { return !pinged(b, key, id) })
	if _, err := a.App.Engines.Find(context.Background(), mustWorkspace(t, a, key), id); !errors.Is(err, engine.ErrDisconnected) {
		t.Errorf("find deleted engine = %v", err)
	}
}

// A client that declares a frame larger than the limit, sends past the limit
// and then stalls has its socket closed all the same, soon after the 1009:
// refusing the frame drains its rest only for a while. No token is needed to
// try it (a hello may carry the token), so nothing may wait on it unbounded.
func TestRemoteEngineStalledOversizedFrame(t *testing.T) {
	e := remoteEnv(t, func(c *app.Config) { c.EngineMaxFrame = 64 << 10 })
	addr := strings.TrimPrefix(e.Server.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", remote.Path, addr, base64.StdEncoding.EncodeToString(key))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", err, resp)
	}
	// One masked text frame that says it carries 1 GiB; 128 KiB of it follow.
	header := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}
	if _, err := conn.Write(append(header, make([]byte, 128<<10)...)); err != nil {
		t.Fatal(err)
	}
	// The hub answers 1009 and then closes: reading ends in EOF or a reset,
	// not in this test's own deadline.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	_, err = io.Copy(io.Discard, br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the socket was still open after %s", time.Since(start).Round(time.Second))
	}
}

// A connection whose read failed is out of the hub's choice at once, while its
// close handshake still waits (up to the drain's grace for a peer that never
// answers it): commands go to the live engine meanwhile.
func TestDyingEngineIsNotPicked(t *testing.T) {
	e := remoteEnv(t, func(c *app.Config) { c.EngineMaxFrame = 64 << 10 })
	key := e.NewKey("acme", "*")
	good := createEngine(e, key, "remote")
	_, _ = runSandbox(t, e.Server.URL, good["token"].(string))
	e.Eventually(10*time.Second, "the good engine in ping", func() bool { return pinged(e, key, good["id"].(string)) })
	bad := createEngine(e, key, "remote")
	ctx := context.Background()
	url := "ws" + strings.TrimPrefix(e.Server.URL, "http") + remote.Path
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + bad["token"].(string)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	raw, _ := json.Marshal(map[string]any{"type": "hello", "kind": "regular", "capabilities": []string{"send"}, "version": 1})
	if err := c.Write(ctx, websocket.MessageText, raw); err != nil {
		t.Fatal(err)
	}
	if _, data, err := c.Read(ctx); err != nil || !strings.Contains(string(data), `"welcome"`) {
		t.Fatalf("no welcome: %v %s", err, data)
	}
	e.Eventually(10*time.Second, "the bad engine in ping", func() bool { return pinged(e, key, bad["id"].(string)) })
	// An oversized frame; the engine then never reads, so it never answers the
	// hub's close and the hub waits out its grace.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"events","pad":"`+strings.Repeat("x", 1<<20)+`"}`)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		sent := e.Do("POST", fmt.Sprintf("/v1/messages/+1555000%04d", 6000+i), key, map[string]any{"type": "text", "text": "to the live engine"})
		// confirmed, or already received when the sandbox's ack was applied
		// before the answer was written (a loaded machine)
		if st := sent.Data()["status"]; sent.Status != 201 || st != "confirmed" && st != "received" {
			t.Fatalf("send %d while the other engine closes = %d %s", i, sent.Status, sent.Raw)
		}
	}
}
