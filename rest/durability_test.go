package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/deliveryattempt"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/sandboxevent"
	"github.com/switchboardhq/switchboard/ent/sandboxsend"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

func workspaceOf(e *apptest.Env) string {
	e.T.Helper()
	return e.Do("GET", "/v1/account", e.Key, nil).Data()["id"].(string)
}

// More due messages than one reconciler batch are lost from Redis, sent at once
// and scheduled (many due at the same moment, so that pages end among equal
// times): one pass queues every one of them, and a second pass finds nothing
// left to do.
func TestReconcilerPagesThroughTheBacklog(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	ctx := viewer.WorkspaceContext(context.Background(), workspaceOf(e))
	const n = 3300 // more than two batches of 500 of each kind
	due := []time.Time{time.Now().Add(-time.Minute).Truncate(time.Second), time.Now().Add(-time.Second).Truncate(time.Second)}
	creates := make([]*ent.MessageCreate, n)
	for i := range creates {
		creates[i] = e.App.Client.Message.Create().SetOrigin(message.OriginScheduled).
			SetTo("15550109999@c.us").SetType("text").SetText("backlog")
		if i%3 > 0 {
			creates[i].SetSendAt(due[i%3-1])
		}
	}
	for chunk := range slices.Chunk(creates, 500) { // within SQLite's bound on a statement's arguments
		if err := e.App.Client.Message.CreateBulk(chunk...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || got != n {
		t.Fatalf("first pass queued %d, %v; want %d", got, err, n)
	}
	if got, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || got != 0 {
		t.Errorf("second pass queued %d, %v; want 0", got, err)
	}
}

// A claim is released only by the one that holds it: a reconciler acting on a
// stale read cannot take back a claim made since.
func TestStaleReleaseKeepsAFreshClaim(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	ctx := viewer.WorkspaceContext(context.Background(), workspaceOf(e))
	m, err := e.App.Client.Message.Create().SetOrigin(message.OriginScheduled).
		SetTo("15550108888@c.us").SetType("text").SetText("x").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claim := func(m *ent.Message) *ent.Message {
		t.Helper()
		var out *ent.Message
		if err := storage.WithTx(ctx, e.App.Client, func(tx *ent.Tx) error {
			var moved bool
			out, moved, err = messaging.Move(ctx, tx, m, messaging.StatusSending, time.Now())
			if err == nil && !moved {
				t.Fatalf("claim of %s did not move it", m.Status)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := claim(m)
	// The first run is taken for dead and its claim released; a new run claims.
	released := false
	_ = storage.WithTx(ctx, e.App.Client, func(tx *ent.Tx) error {
		_, released, err = messaging.Move(ctx, tx, first, messaging.StatusPending, time.Now())
		return err
	})
	if !released {
		t.Fatal("the holder could not release its own claim")
	}
	fresh, _ := e.App.Client.Message.Get(ctx, m.ID)
	second := claim(fresh)
	// A release based on the first claim (read before) must miss.
	_ = storage.WithTx(ctx, e.App.Client, func(tx *ent.Tx) error {
		_, released, err = messaging.Move(ctx, tx, first, messaging.StatusPending, time.Now())
		return err
	})
	now, _ := e.App.Client.Message.Get(ctx, m.ID)
	if released || messaging.StatusOf(now) != messaging.StatusSending || now.ClaimToken != second.ClaimToken {
		t.Errorf("stale release: moved=%v status=%s token=%q, want the second claim %q kept",
			released, now.Status, now.ClaimToken, second.ClaimToken)
	}
}

// What the network will still report survives a restart of Switchboard, and the
// network remembers the wire ids it carried: a resend after the restart is not
// delivered again.
func TestSandboxNetworkOutlivesARestart(t *testing.T) {
	dbURL := "sqlite://" + t.TempDir() + "/sb.db"
	cfg := func(c *app.Config) {
		c.DatabaseURL, c.RedisURL = dbURL, ""
		c.SandboxAckDelay = 400 * time.Millisecond
	}
	first := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	m := schedule(first, "+15550106060", map[string]any{"type": "text", "text": "across a restart"})
	id := m["id"].(string)
	confirmed := waitStatus(first, id, "confirmed")
	ctx := viewer.SystemContext(context.Background())
	if n, err := first.App.Client.SandboxEvent.Query().Count(ctx); err != nil || n == 0 {
		t.Fatalf("%d acks to come (%v); the test proves nothing", n, err)
	}
	first.Server.Close()
	first.App.Close() // before the acks were reported
	second := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	second.Key = first.Key
	waitStatus(second, id, "read")

	wire := confirmed["waMessageKey"].(map[string]any)["id"].(string)
	ws := workspaceOf(second)
	key, err := second.App.Sandbox.Engine(ws).Send(context.Background(),
		engine.Outgoing{WireID: wire, To: "15550106060@c.us", Type: "text", Text: "again"})
	if err != nil || key.ID != wire {
		t.Fatalf("resend = %v, %v", key, err)
	}
	sends, err := second.App.Client.SandboxSend.Query().Where(sandboxsend.WireID(wire)).All(ctx)
	if err != nil || len(sends) != 1 || sends[0].Resends != 1 {
		t.Fatalf("network memory = %v, %v; want one send with one resend", sends, err)
	}
	if n, _ := second.App.Client.SandboxEvent.Query().Where(sandboxevent.DueAtGT(time.Now().Add(-time.Second))).Count(ctx); n != 0 {
		t.Errorf("the resend scheduled %d new events", n)
	}
}

// The inbox stores an event once per engine id, retries an event whose apply
// fails with backoff, keeps later events of the same subject waiting behind it,
// and gives up after inbox.MaxAttempts, saying why.
func TestInboxRetriesInOrderAndGivesUp(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	ws := workspaceOf(e)
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	sys := viewer.SystemContext(context.Background())
	key := engine.Key{FromMe: true, Remote: "15550105050@c.us", ID: "3EB0DEADBEEF"}
	t0 := time.Now().Add(-time.Minute)
	// An event the applier cannot decode stands in for one that keeps failing.
	bad := e.App.Client.InboxEvent.Create().SetDedupeKey("bad").SetType("ack").
		SetSubject(engine.Event{WorkspaceID: ws, Key: key}.OrderKey()).SetPayload(json.RawMessage(`{"at":"not a time"}`)).
		SetAt(t0).SetNextAttemptAt(t0)
	if err := bad.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	later := engine.Event{ID: "later", Type: engine.EventAck, WorkspaceID: ws, Key: key, Ack: engine.AckRead, At: t0.Add(time.Second)}
	for range 2 { // reported twice, stored once
		if err := e.App.Inbox.HandleEvent(ctx, later); err != nil {
			t.Fatal(err)
		}
	}
	other := engine.Event{ID: "other", Type: engine.EventAck, WorkspaceID: ws,
		Key: engine.Key{FromMe: true, Remote: "15550105050@c.us", ID: "3EB0OTHER"}, Ack: engine.AckRead, At: t0.Add(2 * time.Second)}
	if err := e.App.Inbox.HandleEvent(ctx, other); err != nil {
		t.Fatal(err)
	}
	get := func(dedupe string) *ent.InboxEvent {
		row, err := e.App.Client.InboxEvent.Query().Where(inboxevent.DedupeKey(dedupe)).Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	if n, _ := e.App.Client.InboxEvent.Query().Count(sys); n != 3 {
		t.Fatalf("inbox holds %d events, want 3", n)
	}

	now := time.Now()
	if _, err := e.App.Inbox.ApplyOnce(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if b, l, o := get("bad"), get("later"), get("other"); b.Attempts != 1 || b.LastError == "" ||
		l.AppliedAt != nil || o.AppliedAt == nil {
		t.Fatalf("after one pass: bad %d attempts (%q), later applied %v, other applied %v; want the failure retried, "+
			"the later event of its subject waiting, the other subject applied", b.Attempts, b.LastError, l.AppliedAt, o.AppliedAt)
	}
	// Before the retry is due nothing of that subject moves.
	if n, _ := e.App.Inbox.ApplyOnce(context.Background(), now); n != 0 {
		t.Errorf("claimed %d events before the retry was due", n)
	}
	for i := 0; i < inbox.MaxAttempts && get("bad").DeadAt == nil; i++ {
		now = now.Add(time.Hour)
		if _, err := e.App.Inbox.ApplyOnce(context.Background(), now); err != nil {
			t.Fatal(err)
		}
	}
	b := get("bad")
	if b.DeadAt == nil || b.Attempts != inbox.MaxAttempts || !strings.Contains(b.LastError, "decode") {
		t.Fatalf("bad event: dead %v after %d attempts (%q); want dead after %d, with the cause", b.DeadAt, b.Attempts, b.LastError, inbox.MaxAttempts)
	}
	if _, err := e.App.Inbox.ApplyOnce(context.Background(), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if get("later").AppliedAt == nil {
		t.Error("the later event stays behind a dead one")
	}
}

// The same incoming message reported twice, under two event ids, is stored once
// and announced once.
func TestIncomingMessageStoredOnce(t *testing.T) {
	e := newEnv(t)
	createWebhook(e, newReceiver(t, nil).URL, "new_message_received_webhook")
	ws := workspaceOf(e)
	in := &engine.Incoming{Key: engine.Key{Remote: "15550107777@c.us", ID: "3EB1ONCE"}, From: "15550107777@c.us", Type: "text", Text: "hi"}
	for _, id := range []string{"first-report", "second-report"} {
		if err := e.App.Inbox.HandleEvent(context.Background(), engine.Event{ID: id, Type: engine.EventMessage, WorkspaceID: ws, Message: in}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := systemCtx()
	e.Eventually(5*time.Second, "both reports applied", func() bool {
		n, _ := e.App.Client.InboxEvent.Query().Where(inboxevent.AppliedAtNotNil(), inboxevent.DedupeKeyIn("first-report", "second-report")).Count(ctx)
		return n == 2
	})
	if n, _ := e.App.Client.Message.Query().Where(message.WaSerialized(in.Key.Serialized())).Count(ctx); n != 1 {
		t.Errorf("%d messages stored, want 1", n)
	}
	if n := countEvents(e, "new_message_received_webhook"); n != 1 {
		t.Errorf("%d new_message_received_webhook events, want 1", n)
	}
}

// A database that cannot be reached answers 503 "unavailable" with Retry-After,
// never 500.
func TestDatabaseOutageIsA503(t *testing.T) {
	e := newEnv(t)
	if err := e.App.Client.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/ping", "/v1/scheduled-messages"} {
		r := e.Do("GET", path, e.Key, nil)
		if r.Status != http.StatusServiceUnavailable || r.Error()["code"] != "unavailable" || r.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s with the database gone = %d %s (Retry-After %q), want 503 unavailable",
				path, r.Status, r.Raw, r.Header.Get("Retry-After"))
		}
	}
}

// A retry with the same Idempotency-Key is answered from the first result even
// when its input would no longer pass validation (sendAt came too close).
func TestIdempotentRetryIsReplayedBeforeValidation(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"type": "text", "text": "soon", "sendAt": time.Now().Add(12 * time.Second).UTC().Format(time.RFC3339)}
	first := e.Do("POST", "/v1/scheduled-messages/+15550103131", e.Key, body, "Idempotency-Key", "retry-late")
	if first.Status != 201 {
		t.Fatalf("first = %d %s", first.Status, first.Raw)
	}
	e.App.Resolver.Now = func() time.Time { return time.Now().Add(5 * time.Second) }
	again := e.Do("POST", "/v1/scheduled-messages/+15550103131", e.Key, body, "Idempotency-Key", "retry-late")
	if again.Status != 200 || again.Data()["id"] != first.Data()["id"] {
		t.Errorf("retry = %d %s, want 200 with the first message", again.Status, again.Raw)
	}
}

// After Redis lost everything, moving a message to an earlier time works at once
// and the queue reports no conflicts for work the reconciler put back.
func TestRescheduleAfterRedisFlush(t *testing.T) {
	e := newEnv(t)
	e.App.Resolver.Now = func() time.Time { return time.Now().Add(-15 * time.Second) }
	m := schedule(e, "+15550102020", map[string]any{"type": "text", "text": "later", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	id := m["id"].(string)
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(time.Second)
	r := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"sendAt": soon.UTC().Format(time.RFC3339Nano)})
	if r.Status != 200 {
		t.Fatalf("reschedule = %d %s", r.Status, r.Raw)
	}
	waitStatus(e, id, "read")
	// The queue knows its queues again: inspecting a queued task is no error.
	if _, err := e.App.Queue.Dispatch(context.Background(), workspaceOf(e), id, time.Now().Add(time.Hour)); err != nil {
		t.Errorf("dispatch after the flush: %v", err)
	}
}

// A receiver may answer anything: a body whose 4 KiB cut splits a character, or
// one with NUL bytes, is stored as valid text and the delivery succeeds once.
func TestOddWebhookAnswersAreStored(t *testing.T) {
	e := newEnv(t)
	bodies := []string{strings.Repeat("a", 4095) + "é and more", "nul\x00inside", "\xff\xfe not utf-8"}
	hits := make(chan int, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			Data struct {
				Text string `json:"text"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		i := int(env.Data.Text[len(env.Data.Text)-1] - '0')
		hits <- i
		w.WriteHeader(200)
		_, _ = w.Write([]byte(bodies[i]))
	}))
	t.Cleanup(srv.Close)
	createWebhook(e, srv.URL, "message.queued")
	for i := range bodies {
		schedule(e, "+15550103232", map[string]any{"type": "text", "text": "odd " + string(rune('0'+i))})
	}
	ctx := systemCtx()
	e.Eventually(10*time.Second, "three successful attempts", func() bool {
		n, _ := e.App.Client.DeliveryAttempt.Query().Where(deliveryattempt.Success(true)).Count(ctx)
		return n == len(bodies)
	})
	attempts, err := e.App.Client.DeliveryAttempt.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attempts {
		if strings.ContainsRune(a.ResponseBody, 0) || !utf8.ValidString(a.ResponseBody) {
			t.Errorf("stored body %q", a.ResponseBody)
		}
	}
	if len(attempts) != len(bodies) || len(hits) != len(bodies) {
		t.Errorf("%d attempts, %d requests; want %d each (no resend of a success)", len(attempts), len(hits), len(bodies))
	}
}

// Events no webhook wants are not recorded at all; once a webhook subscribes, they
// are.
func TestOnlyWantedEventsAreRecorded(t *testing.T) {
	e := newEnv(t)
	m := schedule(e, "+15550101212", map[string]any{"type": "text", "text": "unwatched"})
	waitStatus(e, m["id"].(string), "read")
	if n, _ := e.App.Client.Event.Query().Count(systemCtx()); n != 0 {
		t.Errorf("%d events recorded with no webhook", n)
	}
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "message.read")
	m = schedule(e, "+15550101213", map[string]any{"type": "text", "text": "watched"})
	waitStatus(e, m["id"].(string), "read")
	e.Eventually(5*time.Second, "the read event delivered", func() bool { return len(rc.ofType("message.read")) == 1 })
	if n := countEvents(e, "message.queued"); n != 0 {
		t.Errorf("%d message.queued events recorded; no webhook wants them", n)
	}
}
