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
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// remoteEnv runs a Switchboard whose only sandbox is the default workspace's, so
// that other workspaces get engines only through the API.
func remoteEnv(t *testing.T, configure ...func(*app.Config)) *apptest.Env {
	return apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.SandboxWorkspaces = []string{"default"}
		c.PresenceTTL = 2 * time.Second
		for _, f := range configure {
			f(c)
		}
	}})
}

// createEngine creates an engine through the API and returns its record.
func createEngine(e *apptest.Env, key, kind string) map[string]any {
	e.T.Helper()
	r := e.Do("POST", "/v1/engines", key, map[string]any{"kind": kind, "name": "test " + kind})
	if r.Status != 201 {
		e.T.Fatalf("create %s engine = %d %s", kind, r.Status, r.Raw)
	}
	return r.Data()
}

// pingIDs lists the ids ping reports connected.
func pingIDs(e *apptest.Env, key string) []string {
	e.T.Helper()
	var ids []string
	conns, _ := e.Do("GET", "/v1/ping", key, nil).Data()["whatsappConnections"].([]any)
	for _, c := range conns {
		ids = append(ids, c.(map[string]any)["id"].(string))
	}
	return ids
}

func pinged(e *apptest.Env, key, id string) bool {
	for _, got := range pingIDs(e, key) {
		if got == id {
			return true
		}
	}
	return false
}

// runSandbox runs the out-of-process sandbox (its own SQLite memory) against
// serverURL with token, in a goroutine, and returns its client and the channel
// Run's result arrives on.
func runSandbox(t *testing.T, serverURL, token string) (*remote.Client, <-chan error) {
	t.Helper()
	return runSandboxAs(t, serverURL, token, "")
}

// runSandboxAs is runSandbox with the account's own number phone (switchboard
// engine sandbox --phone; "" for the one derived from the workspace).
func runSandboxAs(t *testing.T, serverURL, token, phone string) (*remote.Client, <-chan error) {
	t.Helper()
	db := sandboxDB(t)
	c := &remote.Client{URL: serverURL, Token: token, Phone: phone, NoReconnect: true}
	ctx, cancel := context.WithCancel(context.Background())
	done, stopped := make(chan error, 1), make(chan struct{})
	go func() { done <- sandbox.ServeRemote(ctx, c, db, 50*time.Millisecond); close(stopped) }()
	t.Cleanup(func() {
		cancel()
		select { // bounded: a client that does not stop must not hang the suite
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("the sandbox client did not stop")
		}
	})
	return c, done
}

// sandboxDB is the memory of an out-of-process sandbox: a new SQLite database,
// closed when the test ends.
func sandboxDB(t *testing.T) *ent.Client {
	t.Helper()
	url := "sqlite://" + t.TempDir() + "/engine.db"
	db, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.Migrate(context.Background(), db, url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestEngineCRUD(t *testing.T) {
	e := newEnv(t)

	// The embedded default's sandbox is a row of the default workspace, and the
	// engine ping lists.
	list := e.Do("GET", "/v1/engines", e.Key, nil)
	if list.Status != 200 || len(list.List()) != 1 || list.Body["total"] != float64(1) {
		t.Fatalf("GET /v1/engines = %d %s", list.Status, list.Raw)
	}
	sb := list.List()[0]
	if sb["kind"] != "sandbox" || sb["type"] != "gateway" || sb["connected"] != true || sb["state"] != "CONNECTED" {
		t.Errorf("sandbox engine = %v", sb)
	}
	if ids := pingIDs(e, e.Key); len(ids) != 1 || ids[0] != sb["id"] {
		t.Errorf("ping ids = %v, want [%v]", ids, sb["id"])
	}

	rem := createEngine(e, e.Key, "remote")
	token, _ := rem["token"].(string)
	if !strings.HasPrefix(token, "sb_engine_") || rem["connected"] != false || rem["state"] != "DISCONNECTED" ||
		rem["type"] != "regular" || !strings.HasPrefix(token, strings.TrimSuffix(rem["tokenPrefix"].(string), "…")) {
		t.Errorf("created remote engine = %v", rem)
	}
	got := e.Do("GET", "/v1/engines/"+rem["id"].(string), e.Key, nil)
	if got.Status != 200 || got.Data()["token"] != nil || got.Data()["kind"] != "remote" {
		t.Errorf("GET remote engine = %d %s", got.Status, got.Raw)
	}
	if n := len(e.Do("GET", "/v1/engines?limit=1&skip=1", e.Key, nil).List()); n != 1 {
		t.Errorf("page of 1 = %d engines", n)
	}

	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code, detail       string
	}{
		{"unknown kind", "POST", "/v1/engines", map[string]any{"kind": "phone"}, 422, "validation_failed", "kind"},
		{"no kind", "POST", "/v1/engines", map[string]any{}, 422, "validation_failed", "kind"},
		{"long name", "POST", "/v1/engines", map[string]any{"kind": "remote", "name": strings.Repeat("n", 101)}, 422, "validation_failed", "name"},
		{"malformed body", "POST", "/v1/engines", `{"kind":`, 400, "invalid_request", ""},
		{"unknown field", "POST", "/v1/engines", map[string]any{"kind": "remote", "color": "red"}, 400, "invalid_request", "color"},
		{"bad limit", "GET", "/v1/engines?limit=0", nil, 400, "invalid_request", "limit"},
		{"unknown engine", "GET", "/v1/engines/eng_nope", nil, 404, "not_found", ""},
		{"sandbox qr", "GET", "/v1/engines/" + sb["id"].(string) + "/qr", nil, 409, "not_pairable", ""},
		{"remote qr", "GET", "/v1/engines/" + rem["id"].(string) + "/qr?format=png", nil, 409, "not_pairable", ""},
		{"bad qr format", "GET", "/v1/engines/" + sb["id"].(string) + "/qr?format=gif", nil, 400, "invalid_request", "format"},
		{"sandbox pairing code", "POST", "/v1/engines/" + sb["id"].(string) + "/pairing-code", map[string]any{"phone": "+15551234567"}, 409, "not_pairable", ""},
		{"bad phone", "POST", "/v1/engines/" + sb["id"].(string) + "/pairing-code", map[string]any{"phone": "call me"}, 400, "invalid_request", "phone"},
		{"no phone", "POST", "/v1/engines/" + sb["id"].(string) + "/pairing-code", map[string]any{}, 422, "validation_failed", "phone"},
		{"unknown logout", "POST", "/v1/engines/eng_nope/logout", nil, 404, "not_found", ""},
	} {
		r := e.Do(c.method, c.path, e.Key, c.body)
		if r.Status != c.status || r.Error()["code"] != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
			continue
		}
		if c.detail != "" && !strings.Contains(strings.Join(r.DetailPaths(), ","), c.detail) {
			t.Errorf("%s: details %v, want %s", c.name, r.DetailPaths(), c.detail)
		}
	}

	// A workspace can create its own sandbox: connected at once.
	other := e.NewKey("sandboxes", "engines:read", "engines:write")
	mine := createEngine(e, other, "sandbox")
	if mine["connected"] != true {
		t.Errorf("new sandbox engine = %v", mine)
	}
	// Logging it out ends its session; its next use connects it again.
	out := e.Do("POST", "/v1/engines/"+mine["id"].(string)+"/logout", other, nil)
	if out.Status != 200 || out.Data()["state"] != "LOGGED_OUT" || out.Data()["connected"] != false {
		t.Errorf("logout = %d %s", out.Status, out.Raw)
	}

	if r := e.Do("DELETE", "/v1/engines/"+rem["id"].(string), e.Key, nil); r.Status != 200 || r.Data()["deleted"] != true {
		t.Errorf("DELETE = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/v1/engines/"+rem["id"].(string), e.Key, nil); r.Status != 404 {
		t.Errorf("GET deleted engine = %d", r.Status)
	}
	if r := e.Do("DELETE", "/v1/engines/"+rem["id"].(string), e.Key, nil); r.Status != 404 {
		t.Errorf("DELETE twice = %d", r.Status)
	}
}

func TestEngineScopesAndTenants(t *testing.T) {
	e := newEnv(t)
	rem := createEngine(e, e.Key, "remote")
	id := rem["id"].(string)
	reader := e.NewKey("default", "engines:read")
	noScope := e.NewKey("default", "messages:read")
	stranger := e.NewKey("elsewhere", "*")
	for _, c := range []struct {
		method, path, key string
		body              any
		status            int
	}{
		{"GET", "/v1/engines", reader, nil, 200},
		{"GET", "/v1/engines/" + id, reader, nil, 200},
		{"POST", "/v1/engines", reader, map[string]any{"kind": "remote"}, 403},
		{"DELETE", "/v1/engines/" + id, reader, nil, 403},
		{"POST", "/v1/engines/" + id + "/logout", reader, nil, 403},
		{"GET", "/v1/engines/" + id + "/qr", reader, nil, 403},
		{"GET", "/v1/engines", noScope, nil, 403},
		{"GET", "/v1/engines", "", nil, 401},
		// Another workspace sees none of it.
		{"GET", "/v1/engines/" + id, stranger, nil, 404},
		{"DELETE", "/v1/engines/" + id, stranger, nil, 404},
		{"POST", "/v1/engines/" + id + "/logout", stranger, nil, 404},
	} {
		if r := e.Do(c.method, c.path, c.key, c.body); r.Status != c.status {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, r.Status, r.Raw, c.status)
		}
	}
	for _, eng := range e.Do("GET", "/v1/engines", stranger, nil).List() {
		if eng["id"] == id {
			t.Errorf("another workspace lists engine %s", id)
		}
	}
	// A remote engine's token is not an API key, and an API key is no engine token.
	if r := e.Do("GET", "/v1/ping", rem["token"].(string), nil); r.Status != 401 {
		t.Errorf("engine token as API key = %d", r.Status)
	}
	_, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(e.Server.URL, "http")+remote.Path,
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + e.Key}}})
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("API key as engine token: err %v, resp %v", err, resp)
	}
}

// The out-of-process sandbox, connected over the protocol, serves a workspace
// like the in-process one: sends are delivered and read, replies come in,
// history and groups work, and its session shows in ping and in events.
func TestRemoteSandboxEndToEnd(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	rc := newReceiver(t, nil)
	if r := e.Do("POST", "/v1/webhooks", key, map[string]any{"url": rc.URL, "events": []string{"session.connected", "session.disconnected"}}); r.Status != 201 {
		t.Fatalf("webhook = %d %s", r.Status, r.Raw)
	}
	if ids := pingIDs(e, key); len(ids) != 0 {
		t.Fatalf("ping before any engine = %v", ids)
	}
	if r := e.Do("POST", "/v1/messages/+15550002222", key, map[string]any{"type": "text", "text": "hi"}); r.Status != 503 || r.Error()["code"] != "engine_unavailable" {
		t.Fatalf("send without engine = %d %s", r.Status, r.Raw)
	}
	rem := createEngine(e, key, "remote")
	id := rem["id"].(string)
	client, done := runSandbox(t, e.Server.URL, rem["token"].(string))

	e.Eventually(10*time.Second, "the remote engine in ping", func() bool { return pinged(e, key, id) })
	got := e.Do("GET", "/v1/engines/"+id, key, nil).Data()
	if got["connected"] != true || got["type"] != "gateway" || got["state"] != "CONNECTED" {
		t.Errorf("connected remote engine = %v", got)
	}
	e.Eventually(10*time.Second, "session.connected", func() bool { return len(rc.ofType("session.connected")) == 1 })
	e.Eventually(10*time.Second, "the row CONNECTED", func() bool {
		row, err := e.App.Client.Engine.Get(systemCtx(), id)
		return err == nil && row.State == "CONNECTED" && row.ConnectedAt != nil
	})

	// A direct send goes to the remote engine and its acks and the contact's
	// reply come back over the socket.
	sent := e.Do("POST", "/v1/messages/+15550002222", key, map[string]any{"type": "text", "text": "over the wire"})
	if sent.Status != 201 || sent.Data()["status"] != "confirmed" {
		t.Fatalf("direct send = %d %s", sent.Status, sent.Raw)
	}
	msgID := sent.Data()["id"].(string)
	e.Eventually(10*time.Second, "read ack", func() bool {
		return e.Do("GET", "/v1/messages/"+msgID, key, nil).Data()["ack"] == float64(3)
	})
	ws := viewer.WorkspaceContext(context.Background(), e.Do("GET", "/v1/ping", key, nil).Data()["accountId"].(string))
	e.Eventually(10*time.Second, "the contact's reply", func() bool {
		n, err := e.App.Client.Message.Query().Where(message.FromMe(false), message.From("15550002222@c.us")).Count(ws)
		return err == nil && n >= 1
	})
	// A scheduled message goes through the worker's dispatch (SendBatch).
	queued := e.Do("POST", "/v1/scheduled-messages/+15550003333", key, map[string]any{"type": "text", "text": "queued"})
	if queued.Status != 201 {
		t.Fatalf("schedule = %d %s", queued.Status, queued.Raw)
	}
	e.Eventually(10*time.Second, "queued message read", func() bool {
		return e.Do("GET", "/v1/scheduled-messages/"+queued.Data()["id"].(string), key, nil).Data()["status"] == "read"
	})
	// History (a large events frame) and a group (a command with two results).
	chats := e.Do("GET", "/v1/latest-chats?numberOfChats=5&numberOfMessages=1", key, nil)
	if list, _ := chats.Data()["chats"].([]any); len(list) == 0 {
		t.Errorf("latest-chats = %d %.300s", chats.Status, chats.Raw)
	}
	group := e.Do("POST", "/v1/groups", key, map[string]any{"name": "Remote crew", "participants": []string{"+15550001212", "+15550000000"}})
	if group.Status/100 != 2 || !strings.HasSuffix(group.Data()["id"].(string), "@g.us") {
		t.Errorf("create group = %d %s", group.Status, group.Raw)
	}
	// An engine error crosses the wire as the same error: a rule of the network.
	if r := e.Do("DELETE", "/v1/groups/"+group.Data()["id"].(string)+"/members/15550009876@c.us", key, nil); r.Status < 400 || r.Status >= 500 {
		t.Errorf("remove a non-member = %d %s", r.Status, r.Raw)
	}

	// Logging out ends the session for good: the client stops, ping forgets it.
	if r := e.Do("POST", "/v1/engines/"+id+"/logout", key, nil); r.Status != 200 || r.Data()["state"] != "LOGGED_OUT" {
		t.Fatalf("logout = %d %s", r.Status, r.Raw)
	}
	select {
	case err := <-done:
		var ce *remote.CloseError
		if !errors.As(err, &ce) || ce.Code != remote.CloseLoggedOut {
			t.Errorf("client ended with %v, want close %d", err, remote.CloseLoggedOut)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not stop after logout")
	}
	if client.Connected() {
		t.Error("client still connected")
	}
	e.Eventually(5*time.Second, "ping without the engine", func() bool { return !pinged(e, key, id) })
	e.Eventually(10*time.Second, "session.disconnected", func() bool { return len(rc.ofType("session.disconnected")) == 1 })
	if row, err := e.App.Client.Engine.Get(systemCtx(), id); err != nil || row.State != "LOGGED_OUT" {
		t.Errorf("row after logout = %v %v", row, err)
	}
}

// blockingEngine holds every send until its context ends.
type blockingEngine struct {
	id   string
	once sync.Once
	got  chan struct{}
}

func (b *blockingEngine) ID() string   { return b.id }
func (b *blockingEngine) Kind() string { return engine.KindRegular }
func (b *blockingEngine) Close() error { return nil }
func (b *blockingEngine) Send(ctx context.Context, m engine.Outgoing) (engine.Key, error) {
	b.once.Do(func() { close(b.got) })
	<-ctx.Done()
	return engine.Key{}, ctx.Err()
}

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
		{"unknown type", []byte(`{"type":"shout"}`), websocket.StatusPolicyViolation},
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

func mustWorkspace(t *testing.T, e *apptest.Env, key string) string {
	t.Helper()
	return e.Do("GET", "/v1/ping", key, nil).Data()["accountId"].(string)
}

var (
	_ = ent.IsNotFound
	_ = entengine.KindRemote
)

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
		if sent.Status != 201 || sent.Data()["status"] != "confirmed" {
			t.Fatalf("send %d while the other engine closes = %d %s", i, sent.Status, sent.Raw)
		}
	}
}
