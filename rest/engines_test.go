package rest_test

import (
	"context"
	"errors"
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

func mustWorkspace(t *testing.T, e *apptest.Env, key string) string {
	t.Helper()
	return e.Do("GET", "/v1/ping", key, nil).Data()["accountId"].(string)
}

var (
	_ = ent.IsNotFound
	_ = entengine.KindRemote
)
