package rest_test

import (
	"context"
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
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
)

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
		remote.CloseUnauthorized: true, remote.CloseUnsupportedVersion: true}

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
		case f != nil && f.Type == remote.FrameUnsupported:
			// a mutated type: answered unsupported, the connection stays
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
