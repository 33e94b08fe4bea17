package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// engineSocket is a raw connection to the engine endpoint, as an engine (or
// anyone) can open it.
type engineSocket struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialEngine opens the engine endpoint, with token in the upgrade's header
// unless it is empty.
func dialEngine(t *testing.T, e *apptest.Env, token string) *engineSocket {
	t.Helper()
	var opts websocket.DialOptions
	if token != "" {
		opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	ws, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(e.Server.URL, "http")+remote.Path, &opts)
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &engineSocket{t: t, ws: ws}
}

func (s *engineSocket) writeRaw(frame []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return s.ws.Write(ctx, websocket.MessageText, frame)
}

func (s *engineSocket) write(v any) {
	s.t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.writeRaw(raw); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// read reads the next frame; a nil frame and the close status when the socket
// closed instead.
func (s *engineSocket) read() (*remote.Frame, websocket.StatusCode) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := s.ws.Read(ctx)
	if err != nil {
		return nil, websocket.CloseStatus(err)
	}
	var f remote.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		s.t.Fatalf("the server sent %q: %v", data, err)
	}
	return &f, -1
}

// closed reads until the socket closes and returns its close status.
func (s *engineSocket) closed() websocket.StatusCode {
	s.t.Helper()
	for {
		if f, code := s.read(); f == nil {
			return code
		}
	}
}

// hello says hello and returns the welcome.
func (s *engineSocket) hello() *remote.Frame {
	s.t.Helper()
	s.write(map[string]any{"type": "hello", "kind": "regular", "capabilities": []string{"send"}, "version": 1})
	f, code := s.read()
	if f == nil || f.Type != remote.FrameWelcome {
		s.t.Fatalf("no welcome: %+v (closed %d)", f, code)
	}
	go s.heartbeat(time.Duration(f.HeartbeatMs) * time.Millisecond)
	return f
}

// heartbeat keeps the engine in presence until its socket closes.
func (s *engineSocket) heartbeat(every time.Duration) {
	beat := mustJSON(map[string]any{"type": "heartbeat"})
	for {
		time.Sleep(every)
		if s.writeRaw(beat) != nil {
			return
		}
	}
}

// events sends an events frame and returns its ack.
func (s *engineSocket) events(id string, events any) *remote.Frame {
	s.t.Helper()
	raw, err := json.Marshal(map[string]any{"type": "events", "id": id, "events": events})
	if err != nil {
		s.t.Fatal(err)
	}
	return s.eventsRaw(id, raw)
}

func (s *engineSocket) eventsRaw(id string, frame []byte) *remote.Frame {
	s.t.Helper()
	if err := s.writeRaw(frame); err != nil {
		s.t.Fatalf("write: %v", err)
	}
	f, code := s.read()
	if f == nil || f.Type != remote.FrameEventsAck || f.ID != id {
		s.t.Fatalf("no ack of %s: %+v (closed %d)", id, f, code)
	}
	return f
}

// incoming is an incoming-message event of the wire.
func incoming(id string, key engine.Key, typ, text string) map[string]any {
	return map[string]any{"id": id, "type": "message", "message": map[string]any{
		"key": key, "from": key.Remote, "type": typ, "text": text}}
}

// listed reports whether the workspace of apiKey holds the incoming message of
// key, with text.
func listed(e *apptest.Env, apiKey string, key engine.Key, text string) bool {
	r := e.Do("GET", "/v1/messages/"+key.Serialized(), apiKey, nil)
	return r.Status == 200 && r.Data()["text"] == text
}

// Issue 26 row 1: engine events are ordered within their workspace and engine.
// Workspace B's engine reports an incoming message that can never be applied
// (an empty type): it is refused alone, in the ack, with its reason, and the
// rest of B's frame is stored. A's engine then reports a message of the same
// key: it applies at once. And an event B stored before this version (bare
// subject, failing for hours) holds up no event of A's once the migration
// scoped it: A's event of that key applies at once too.
func TestRemoteEngineOrderedWithinItsWorkspace(t *testing.T) {
	e := remoteEnv(t)
	keyA, keyB := e.NewKey("acme", "*"), e.NewKey("bravo", "*")
	engA, engB := createEngine(e, keyA, "remote"), createEngine(e, keyB, "remote")
	a, b := dialEngine(t, e, engA["token"].(string)), dialEngine(t, e, engB["token"].(string))
	a.hello()
	b.hello()

	shared := engine.Key{Remote: "15550201111@c.us", ID: "3EB0SHARED"}
	bGood := engine.Key{Remote: "15550201112@c.us", ID: "3EB0BGOOD"}
	ack := b.events("evb_b1", []any{incoming("b-bad", shared, "", "from B"),
		incoming("b-good", bGood, "text", "B's good one")})
	want := []remote.Rejected{{Index: 0, ID: "b-bad", Reason: "message.type is missing"}}
	if ack.Error != nil || !cmp.Equal(ack.Rejected, want) {
		t.Fatalf("B's ack: error %+v, rejected %s", ack.Error, cmp.Diff(want, ack.Rejected))
	}
	start := time.Now()
	if ack := a.events("evb_a1", []any{incoming("a-1", shared, "text", "hello A")}); ack.Error != nil || ack.Rejected != nil {
		t.Fatalf("A's ack: %+v", ack)
	}
	e.Eventually(5*time.Second, "A's message applied", func() bool { return listed(e, keyA, shared, "hello A") })
	e.Eventually(5*time.Second, "B's good message applied", func() bool { return listed(e, keyB, bGood, "B's good one") })
	t.Logf("A's event applied after %s", time.Since(start).Round(time.Millisecond))

	// An event of B's stored by an earlier version, with the bare subject, that
	// fails to apply: the migration scopes it to B's workspace and engine.
	wsB, engBID := mustWorkspace(t, e, keyB), engB["id"].(string)
	stuck := engine.Key{Remote: "15550202222@c.us", ID: "3EB0STUCK"}
	old := engine.Event{ID: engBID + ":old", Type: engine.EventMessage, WorkspaceID: wsB, EngineID: engBID,
		At: time.Now().Add(-time.Minute), Message: &engine.Incoming{Key: stuck, From: stuck.Remote}}
	payload, _ := json.Marshal(old)
	row, err := e.App.Client.InboxEvent.Create().SetDedupeKey(old.ID).SetType("message").SetSubject(old.Subject()).
		SetPayload(payload).SetAt(old.At).SetNextAttemptAt(old.At).Save(viewer.WorkspaceContext(context.Background(), wsB))
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.Migrate(context.Background(), e.App.Client, e.Config.DatabaseURL); err != nil {
		t.Fatal(err)
	}
	row, err = e.App.Client.InboxEvent.Get(systemCtx(), row.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := old.OrderKey(); row.Subject != want {
		t.Errorf("migrated subject = %q, want %q", row.Subject, want)
	}
	e.Eventually(5*time.Second, "B's old event failing", func() bool {
		r, err := e.App.Client.InboxEvent.Get(systemCtx(), row.ID)
		return err == nil && r.Attempts > 0 && r.AppliedAt == nil
	})
	if ack := a.events("evb_a2", []any{incoming("a-2", stuck, "text", "A again")}); ack.Error != nil {
		t.Fatalf("A's ack: %+v", ack)
	}
	e.Eventually(5*time.Second, "A's message beside B's failing one applied", func() bool {
		return listed(e, keyA, stuck, "A again")
	})
	// Calls of A that wait on applied events do not wait for B's.
	begin := time.Now()
	if err := e.App.Inbox.WaitApplied(viewer.WorkspaceContext(context.Background(), mustWorkspace(t, e, keyA)), time.Now()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("waiting for A's events took %s", d)
	}
}

// Issue 26 row 2: before its welcome a socket reads at most HelloMaxFrame a
// frame, the hello's token is checked before the rest of it is decoded, and a
// welcomed engine may send frames up to maxFrame.
func TestRemoteEngineHelloLimits(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	eng := createEngine(e, key, "remote")
	token := eng["token"].(string)
	caps := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "send"
		}
		return out
	}

	// A hello over the limit, no token: 1009.
	s := dialEngine(t, e, "")
	_ = s.writeRaw(mustJSON(map[string]any{"type": "hello", "kind": "regular", "capabilities": caps(20000)}))
	if code := s.closed(); code != websocket.StatusMessageTooBig {
		t.Errorf("a hello of 140 KB closed with %d, want 1009", code)
	}
	// The token is checked first: without one, whatever the rest holds, 4001.
	s = dialEngine(t, e, "")
	s.write(map[string]any{"type": "hello", "kind": 7, "capabilities": map[string]any{"a": 1}})
	if code := s.closed(); code != remote.CloseUnauthorized {
		t.Errorf("a hello without token and with a malformed rest closed with %d, want 4001", code)
	}
	// With a good token, a malformed rest and too many capabilities are 1008.
	for name, hello := range map[string]map[string]any{
		"malformed capabilities": {"type": "hello", "token": token, "kind": "regular", "capabilities": 5},
		"too many capabilities":  {"type": "hello", "token": token, "kind": "regular", "capabilities": caps(remote.MaxCapabilities + 1)},
		"bad kind":               {"type": "hello", "token": token, "kind": "phone"},
	} {
		s = dialEngine(t, e, "")
		s.write(hello)
		if code := s.closed(); code != websocket.StatusPolicyViolation {
			t.Errorf("%s closed with %d, want 1008", name, code)
		}
	}
	// The welcome tells the limits; after it, frames up to maxFrame pass.
	s = dialEngine(t, e, "")
	s.write(map[string]any{"type": "hello", "token": token, "kind": "regular", "capabilities": caps(remote.MaxCapabilities)})
	w, code := s.read()
	if w == nil || w.MaxFrame != remote.DefaultMaxFrame || w.MaxBatch != remote.DefaultMaxBatch {
		t.Fatalf("welcome = %+v (closed %d), want maxFrame %d and maxBatch %d", w, code, remote.DefaultMaxFrame, remote.DefaultMaxBatch)
	}
	big := strings.Repeat("x", 1<<20)
	k := engine.Key{Remote: "15550203333@c.us", ID: "3EB0BIG"}
	if ack := s.events("evb_big", []any{incoming("big", k, "text", big)}); ack.Error != nil || ack.Rejected != nil {
		t.Errorf("a 1 MiB events frame after the welcome: %+v", ack)
	}
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// Issue 26 row 2: one address may hold only so many upgrades without a token in
// the header waiting for their hello; the next is answered 429 with
// Retry-After, and an engine that authenticates in the header is not held up.
func TestRemoteEnginePendingHellosPerAddress(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	eng := createEngine(e, key, "remote")
	url := "ws" + strings.TrimPrefix(e.Server.URL, "http") + remote.Path
	var pending []*engineSocket
	for range remote.DefaultMaxPendingPerAddress {
		pending = append(pending, dialEngine(t, e, ""))
	}
	_, resp, err := websocket.Dial(context.Background(), url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("upgrade past the pending limit: %v %+v, want 429 with Retry-After", err, resp)
	}
	var body struct {
		Error struct{ Code string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if body.Error.Code != "rate_limited" {
		t.Errorf("429 body code = %q, want rate_limited", body.Error.Code)
	}
	// An engine with its token in the header still connects.
	good := dialEngine(t, e, eng["token"].(string))
	good.hello()
	// A pending socket that says hello (even a bad one) frees its slot.
	pending[0].write(map[string]any{"type": "hello", "kind": "regular"})
	if code := pending[0].closed(); code != remote.CloseUnauthorized {
		t.Errorf("hello without token closed with %d", code)
	}
	e.Eventually(5*time.Second, "a slot free again", func() bool {
		ws, _, err := websocket.Dial(context.Background(), url, nil)
		if err == nil {
			_ = ws.CloseNow()
		}
		return err == nil
	})
}

// Issue 26 row 4: an events frame holds at most maxBatch events (more are
// refused whole, with a clear error, and nothing is stored); within it each
// event is checked alone: the bad ones are refused with their reasons, the good
// ones stored, on both databases (NUL failed the whole batch on PostgreSQL).
func TestRemoteEngineEventBatches(t *testing.T) {
	e := remoteEnv(t, func(c *app.Config) { c.EngineMaxBatch = 50 })
	key := e.NewKey("acme", "*")
	eng := createEngine(e, key, "remote")
	s := dialEngine(t, e, eng["token"].(string))
	if w := s.hello(); w.MaxBatch != 50 {
		t.Fatalf("welcome maxBatch = %d, want 50", w.MaxBatch)
	}
	ws := mustWorkspace(t, e, key)
	stored := func() int {
		n, err := e.App.Client.InboxEvent.Query().Where(inboxevent.WorkspaceID(ws), inboxevent.TypeNEQ("connected")).Count(systemCtx())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	acks := func(n int, prefix string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "type": "ack", "ack": 2,
				"key": engine.Key{FromMe: true, Remote: "15550204444@c.us", ID: fmt.Sprintf("3EB0%s%d", prefix, i)}}
		}
		return out
	}

	ack := s.events("evb_over", acks(51, "over"))
	if ack.Error == nil || ack.Error.Code != "payload_too_large" || !strings.Contains(ack.Error.Message, "at most 50 events") {
		t.Errorf("a frame of 51 events: %+v, want payload_too_large naming the limit", ack.Error)
	}
	if n := stored(); n != 0 {
		t.Errorf("%d events of the refused frame stored", n)
	}
	if ack := s.events("evb_full", acks(50, "full")); ack.Error != nil || ack.Rejected != nil {
		t.Errorf("a frame of 50 events: %+v", ack)
	}
	if n := stored(); n != 50 {
		t.Errorf("%d events stored, want 50", n)
	}

	k := engine.Key{Remote: "15550205555@c.us", ID: "3EB0MIX"}
	frame := `{"type":"events","id":"evb_mixed","events":[` + strings.Join([]string{
		string(mustJSON(incoming("good-1", k, "text", "fine"))),
		`{"id":"nul","type":"message","message":{"key":{"remote":"15550205555@c.us","id":"N"},"type":"text","text":"a\u0000b"}}`,
		"{\"id\":\"utf8\",\"type\":\"message\",\"message\":{\"key\":{\"remote\":\"15550205555@c.us\",\"id\":\"U\"},\"type\":\"text\",\"text\":\"a\xc0\xafb\"}}",
		`{"id":"unknown","type":"shout","key":{"remote":"1@c.us","id":"S"}}`,
		`{"id":"empty","type":"","key":{"remote":"1@c.us","id":"E"}}`,
		`{"id":"nokey","type":"ack","ack":3}`,
		`{"id":"session","type":"connected"}`,
		`"not an object"`,
		`{"id":"badtime","type":"ack","at":"yesterday","key":{"remote":"1@c.us","id":"T"}}`,
		`{"id":"wrongtype","type":"message","message":{"key":{"remote":"1@c.us","id":"W"},"type":"text","text":5}}`,
		string(mustJSON(incoming("good-2", engine.Key{Remote: k.Remote, ID: "3EB0MIX2"}, "text", "fine too"))),
	}, ",") + `]}`
	ack = s.eventsRaw("evb_mixed", []byte(frame))
	got := map[int]string{}
	for _, r := range ack.Rejected {
		got[r.Index] = r.ID + ": " + r.Reason
	}
	want := map[int]string{
		1: "nul: message.text must be valid UTF-8 text without NUL bytes",
		2: "utf8: the event is not valid UTF-8",
		3: `unknown: type "shout" is not an event type`,
		4: "empty: type is missing",
		5: "nokey: key.remote is missing",
		6: "session: type connected: session events are the server's to tell",
		7: ": not an event: the event is not an object",
		8: "badtime: not an event: a field has a bad value",
		9: "wrongtype: not an event: message.text has the wrong type (number)",
	}
	if ack.Error != nil || !cmp.Equal(got, want) {
		t.Errorf("mixed frame: error %+v, rejected (-want +got):\n%s", ack.Error, cmp.Diff(want, got))
	}
	e.Eventually(5*time.Second, "the good events applied", func() bool {
		return listed(e, key, k, "fine") && listed(e, key, engine.Key{Remote: k.Remote, ID: "3EB0MIX2"}, "fine too")
	})
}

// Issue 26 row 4: a batch larger than the databases' parameter limits allow in
// one statement (SQLite fails past about 3,000 events, PostgreSQL past 6,000) is
// stored in chunks, all of it.
func TestInboxStoresLargeBatches(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	ws := workspaceOf(e)
	evs := make([]engine.Event, 7000)
	for i := range evs {
		evs[i] = engine.Event{ID: fmt.Sprintf("big-%d", i), Type: engine.EventAck, WorkspaceID: ws, EngineID: "eng_x",
			Key: engine.Key{FromMe: true, Remote: "15550206666@c.us", ID: fmt.Sprintf("3EB0%d", i)}, Ack: engine.AckDevice}
	}
	if err := e.App.Inbox.HandleEvents(context.Background(), evs); err != nil {
		t.Fatalf("store 7,000 events: %v", err)
	}
	if n, err := e.App.Client.InboxEvent.Query().Where(inboxevent.WorkspaceID(ws)).Count(systemCtx()); err != nil || n != 7000 {
		t.Errorf("stored %d (%v), want 7000", n, err)
	}
	// Reported again, with one more: stored once each.
	evs = append(evs, engine.Event{ID: "big-last", Type: engine.EventAck, WorkspaceID: ws, EngineID: "eng_x",
		Key: engine.Key{FromMe: true, Remote: "15550206666@c.us", ID: "3EB0LAST"}, Ack: engine.AckDevice})
	if err := e.App.Inbox.HandleEvents(context.Background(), evs); err != nil {
		t.Fatalf("store again: %v", err)
	}
	if n, err := e.App.Client.InboxEvent.Query().Where(inboxevent.WorkspaceID(ws)).Count(systemCtx()); err != nil || n != 7001 {
		t.Errorf("stored %d (%v), want 7001", n, err)
	}
}

// nullEngine is an engine that sends nothing, for a Client whose sink a test
// drives.
type nullEngine struct{ id string }

func (n nullEngine) ID() string   { return n.id }
func (n nullEngine) Kind() string { return engine.KindRegular }
func (n nullEngine) Close() error { return nil }
func (n nullEngine) Send(context.Context, engine.Outgoing) (engine.Key, error) {
	return engine.Key{}, engine.ErrRejected
}
