package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
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

// Issue 26 row 4: the reference client splits what it reports by the welcome's
// maxBatch, and an event the server refuses for good is told to Refused and
// counts as carried: the engine does not report it again and again.
func TestRemoteClientCarriesBatchesAndRefusals(t *testing.T) {
	e := remoteEnv(t, func(c *app.Config) { c.EngineMaxBatch = 100 })
	key := e.NewKey("acme", "*")
	eng := createEngine(e, key, "remote")
	var mu sync.Mutex
	var refused []string
	c := &remote.Client{URL: e.Server.URL, Token: eng["token"].(string), Kind: engine.KindRegular, NoReconnect: true,
		Refused: func(ev engine.Event, reason string) {
			mu.Lock()
			defer mu.Unlock()
			refused = append(refused, ev.ID+": "+reason)
		}}
	sinks := make(chan engine.BatchSink, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(_ context.Context, w remote.Welcome, sink engine.BatchSink) (engine.Engine, error) {
			sinks <- sink
			return nullEngine{id: w.EngineID}, nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var sink engine.BatchSink
	select {
	case sink = <-sinks:
	case <-time.After(10 * time.Second):
		t.Fatal("the client was not welcomed")
	}
	e.Eventually(5*time.Second, "the client connected", c.Connected)

	evs := make([]engine.Event, 250)
	for i := range evs {
		evs[i] = engine.Event{ID: fmt.Sprintf("c-%d", i), Type: engine.EventAck, Ack: engine.AckDevice,
			Key: engine.Key{FromMe: true, Remote: "15550207777@c.us", ID: fmt.Sprintf("3EB0C%d", i)}}
	}
	evs[7].Key.ID = ""                                  // refused: no id
	evs[180] = engine.Event{ID: "c-180", Type: "shout"} // refused: no such type
	if err := sink.HandleEvents(context.Background(), evs); err != nil {
		t.Fatalf("HandleEvents = %v, want nil (the refused events are carried, not to be reported again)", err)
	}
	mu.Lock()
	want := []string{"c-7: key.id is missing", `c-180: type "shout" is not an event type`}
	if diff := cmp.Diff(want, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
	mu.Unlock()
	ws := mustWorkspace(t, e, key)
	if n, _ := e.App.Client.InboxEvent.Query().Where(inboxevent.WorkspaceID(ws), inboxevent.Type("ack")).Count(systemCtx()); n != 248 {
		t.Errorf("stored %d acks, want 248", n)
	}
}

// hostileHellos are first frames that once could, or still might, trouble the
// engine endpoint: NUL and invalid UTF-8 in every field, wrong types, odd
// shapes, deep nesting, and frames past the hello's limit.
var hostileHellos = [][]byte{
	[]byte(`{"type":"hello","token":"\u0000","kind":"regular"}`),
	[]byte("{\"type\":\"hello\",\"token\":\"sb_engine_\xc0\xaf\",\"kind\":\"regular\"}"),
	[]byte(`{"type":"hello","kind":"regular","capabilities":["\u0000","send","send"]}`),
	[]byte("{\"type\":\"hello\",\"kind\":\"\xff\xfe\",\"capabilities\":[\"\xc0\"]}"),
	[]byte(`{"type":"hello","kind":"regular","capabilities":[1,null,{},[]],"version":1e999}`),
	[]byte(`{"type":"hello","token":5,"kind":"regular"}`),
	[]byte(`{"type":"hello","token":null,"kind":null,"capabilities":null}`),
	[]byte(`{"type":"\u0000hello"}`),
	[]byte(`{"type":5}`), []byte(`{}`), []byte(`null`), []byte(`[]`), []byte(`"hello"`), []byte(``), []byte(`{"type":`),
	[]byte(`{"type":"hello","kind":"regular","kind":"gateway","type":"events"}`),
	[]byte(`{"type":"events","events":[{"type":"message"}]}`),
	[]byte(strings.Repeat(`{"a":`, 5000)),
	[]byte(`{"type":"hello","kind":"regular","capabilities":[` + strings.Repeat(`"send",`, 12000) + `"send"]}`),
	[]byte(`{"type":"hello","token":"` + strings.Repeat("a", 70<<10) + `"}`),
}

// hostileEvents are events (each alone in a frame) of every odd shape.
var hostileEvents = []string{
	`{"type":"message","message":{"key":{"remote":"1@c.us","id":"A"},"type":"\u0000","text":"x"}}`,
	`{"type":"message","message":{"key":{"remote":"\u0000","id":"A"},"type":"text"}}`,
	"{\"type\":\"ack\",\"key\":{\"remote\":\"1@c.us\",\"id\":\"\xc0\xaf\"},\"ack\":3}",
	`{"type":"ack","key":{"remote":"1@c.us","id":"A"},"ack":99999999999999999999}`,
	`{"type":"ack","key":{"remote":"1@c.us","id":"` + strings.Repeat("9", 3000) + `"},"ack":3}`,
	`{"id":"` + strings.Repeat("i", 3000) + `","type":"ack","key":{"remote":"1@c.us","id":"A"},"ack":3}`,
	`{"type":"group","group":{"groupId":"1-2@g.us","action":"added","participants":["",null]}}`,
	`{"type":"group","group":{"groupId":"1-2@g.us","action":"created"}}`,
	`{"type":"chat","chat":{"id":"1@c.us","kind":"room","unreadCount":-5}}`,
	`{"type":"history","history":{"chats":[{"id":""}],"messages":[{"key":{}}]}}`,
	`{"type":"history","history":{"messages":[{"key":{"remote":"1@c.us","id":"H"},"at":"0001-01-01T00:00:00Z","text":"\u0000"}]}}`,
	`{"type":"pin","key":{"remote":"1@c.us","id":"A"},"pinned":-1}`,
	`{"type":"reaction","key":{"remote":"1@c.us","id":"A"},"reaction":"\ud800"}`,
	`{"type":"message","message":null}`, `{"type":"disconnected"}`, `{"type":["ack"]}`, `{"at":"9999-99-99"}`,
	`{"type":"message","at":"0001-01-01T00:00:00Z","message":{"key":{"remote":"1@c.us","id":"Z"},"type":"text"}}`,
	`{"type":"message","at":"9999-12-31T23:59:59Z","message":{"key":{"remote":"1@c.us","id":"Y"},"type":"text"}}`,
	`[]`, `null`, `1e999`, `"\u0000"`,
}

// mutate returns frame with a few random byte edits: flips, deletions,
// insertions of JSON's own characters, and repeated slices.
func mutate(rng *rand.Rand, frame []byte) []byte {
	out := append([]byte(nil), frame...)
	for range 1 + rng.IntN(4) {
		if len(out) == 0 {
			out = append(out, '{')
		}
		i := rng.IntN(len(out))
		switch rng.IntN(5) {
		case 0:
			out[i] ^= byte(1 << rng.IntN(8))
		case 1:
			out = append(out[:i], out[i+1:]...)
		case 2:
			ins := []byte(`{}[]",:0\u0000` + "\xc0\xff")
			out = append(out[:i], append([]byte{ins[rng.IntN(len(ins))]}, out[i:]...)...)
		case 3:
			j := min(len(out), i+1+rng.IntN(32))
			out = append(out[:j], append(append([]byte(nil), out[i:j]...), out[j:]...)...)
		case 4:
			out[i] = byte(rng.IntN(256))
		}
	}
	return out
}

// The fuzz of the engine WebSocket (issue 26, "Done when"): hostile and random
// hellos, with and without a token, and hostile and random events frames from a
// welcomed engine never crash the server nor answer a 500: a socket either gets
// its welcome or ack, or closes with one of the protocol's close codes (1008
// malformed, 1009 too large, 4001 no good token), never an internal error. Every
// event the server accepts is applied at its first attempt: what cannot be
// applied is refused when it is received.
func TestHostileEngineFrames(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	eng := createEngine(e, key, "remote")
	token := eng["token"].(string)
	url := "ws" + strings.TrimPrefix(e.Server.URL, "http") + remote.Path
	rng := rand.New(rand.NewPCG(26, 4))
	protocol := map[websocket.StatusCode]bool{websocket.StatusPolicyViolation: true, websocket.StatusMessageTooBig: true,
		remote.CloseUnauthorized: true}

	// Hostile tokens in the header are answered before the upgrade, never 500.
	for _, tok := range []string{"sb_engine_%00", "sb_engine_" + strings.Repeat("x", 8<<10), "'; DROP TABLE engines; --", "\u202e"} {
		_, resp, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("header token %.20q: %v %v, want 401", tok, err, resp)
		}
	}

	// sendHello sends a first frame and says how the socket ended: "welcome"
	// or its close code.
	n := 0
	sendHello := func(frame []byte, withToken bool) {
		t.Helper()
		n++
		tok := ""
		if withToken {
			tok = token
		}
		s := dialEngine(t, e, tok)
		if err := s.writeRaw(frame); err != nil {
			// The server may close on the frame's first bytes (over the limit).
			if code := websocket.CloseStatus(err); code != -1 && !protocol[code] {
				t.Errorf("hello %.80q: write ended with %d", frame, code)
			}
			return
		}
		f, code := s.read()
		switch {
		case f != nil && f.Type == remote.FrameWelcome && withToken:
			_ = s.ws.Close(websocket.StatusNormalClosure, "")
		case f != nil:
			t.Errorf("hello %.80q (token %v) answered %+v", frame, withToken, f)
		case !protocol[code]:
			t.Errorf("hello %.80q (token %v) closed with %d, want a protocol close code", frame, withToken, code)
		}
	}
	for _, h := range hostileHellos {
		sendHello(h, false)
		sendHello(h, true)
	}
	good := mustJSON(map[string]any{"type": "hello", "kind": "regular", "capabilities": []string{"send", "groups"}, "version": 1})
	for range 150 {
		sendHello(mutate(rng, good), rng.IntN(2) == 0)
	}

	// Events frames of a welcomed engine: each is acked, or the socket closes
	// with a protocol code (then the engine connects again).
	var s *engineSocket
	connect := func() {
		s = dialEngine(t, e, token)
		s.hello()
	}
	connect()
	acked, rejected := 0, 0
	sendEvents := func(frame []byte) {
		t.Helper()
		n++
		if err := s.writeRaw(frame); err != nil {
			t.Fatalf("write: %v", err)
		}
		f, code := s.read()
		switch {
		case f != nil && f.Type == remote.FrameEventsAck:
			acked++
			rejected += len(f.Rejected)
			if f.Error != nil {
				t.Errorf("events %.80q: ack error %+v", frame, f.Error)
			}
		case f != nil:
			t.Errorf("events %.80q answered %+v", frame, f)
		case !protocol[code]:
			t.Errorf("events %.80q closed with %d, want a protocol close code", frame, code)
			connect()
		default:
			connect()
		}
	}
	for i, ev := range hostileEvents {
		sendEvents([]byte(fmt.Sprintf(`{"type":"events","id":"evb_h%d","events":[%s]}`, i, ev)))
	}
	seed := []byte(`{"type":"events","id":"evb_seed","events":[` +
		`{"id":"s1","type":"message","message":{"key":{"remote":"15550209999@c.us","id":"3EB0F1"},"from":"15550209999@c.us","type":"text","text":"fuzz"}},` +
		`{"id":"s2","type":"ack","key":{"fromMe":true,"remote":"15550209999@c.us","id":"3EB0F2"},"ack":3},` +
		`{"id":"s3","type":"group","group":{"groupId":"1203630@g.us","action":"added","participants":["15550209999@c.us"]}},` +
		`{"id":"s4","type":"chat","chat":{"id":"15550209999@c.us","kind":"contact","archived":true}},` +
		`{"id":"s5","type":"history","history":{"chats":[{"id":"15550209998@c.us"}],"messages":[{"key":{"remote":"15550209998@c.us","id":"3EB0F5"},"type":"text","text":"old","at":"2026-01-01T00:00:00Z"}]}},` +
		`{"id":"s6","type":"pin","key":{"remote":"15550209999@c.us","id":"3EB0F1"},"pinned":1000000000},` +
		`{"id":"s7","type":"reaction","key":{"remote":"15550209999@c.us","id":"3EB0F1"},"reaction":"x","message":{"from":"15550209999@c.us"}}]}`)
	sendEvents(seed)
	for range 300 {
		sendEvents(mutate(rng, seed))
	}
	stored, _ := e.App.Client.InboxEvent.Query().Where(inboxevent.TypeNEQ("connected")).Count(systemCtx())
	t.Logf("%d hostile frames; %d events frames acked, %d events refused in them, %d stored", n, acked, rejected, stored)

	// The server is whole, and everything it stored applied at once.
	if r := e.Do("GET", "/v1/ping", key, nil); r.Status != 200 {
		t.Fatalf("ping after the fuzz = %d %s", r.Status, r.Raw)
	}
	e.Eventually(10*time.Second, "the stored events applied", func() bool {
		pending, err := e.App.Client.InboxEvent.Query().Where(inboxevent.AppliedAtIsNil()).All(systemCtx())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pending {
			if p.Attempts > 0 {
				t.Fatalf("a stored event failed to apply: %s %s: %s\n%s", p.Type, p.Subject, p.LastError, p.Payload)
			}
		}
		return len(pending) == 0
	})
}
