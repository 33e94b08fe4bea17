package rest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/jobs/jobstest"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/webhook"
)

// A Redis flush loses every queued task; the database still knows, and the
// reconciler rebuilds the queue: every accepted message is delivered, once.
func TestRedisFlushLosesNothing(t *testing.T) {
	e := newEnv(t)
	e.App.Resolver.Now = func() time.Time { return time.Now().Add(-15 * time.Second) }
	sendAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, schedule(e, fmt.Sprintf("+1555010%04d", 5000+i), map[string]any{"type": "text", "text": "deferred", "sendAt": sendAt})["id"].(string))
	}
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	for _, id := range ids {
		if s := e.Do("GET", "/v1/scheduled-messages/"+id, e.Key, nil).Data()["status"]; s != "pending" {
			t.Fatalf("%s is %v after the flush, before reconciling; the test proves nothing", id, s)
		}
	}
	n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0)
	if err != nil || n != len(ids) {
		t.Fatalf("ReconcileOnce = %d, %v; want %d", n, err, len(ids))
	}
	for _, id := range ids {
		waitStatus(e, id, "read")
	}
	// A second pass finds nothing to do.
	if n, _ := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); n != 0 {
		t.Errorf("second pass re-queued %d", n)
	}
}

// Messages due in the same second share one task: Redis holds it and no task of
// their own. After a Redis flush the reconciler puts back that one task, and each
// message goes out once, not before its sendAt.
func TestMessagesOfOneSecondShareATask(t *testing.T) {
	e := newEnv(t)
	e.App.Resolver.Now = func() time.Time { return time.Now().Add(-15 * time.Second) }
	at := time.Now().Truncate(time.Second).Add(7 * time.Second) // room before DueLead, on a busy machine
	var ids []string
	for i := range 3 {
		sendAt := at.Add(time.Duration(i) * 300 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		ids = append(ids, schedule(e, fmt.Sprintf("+1555010%04d", 6000+i), map[string]any{"type": "text", "text": "together", "sendAt": sendAt})["id"].(string))
	}
	inspector := asynq.NewInspectorFromRedisClient(e.App.Redis)
	held := func() []string {
		var out []string
		for _, id := range append([]string{jobs.DueTaskID(at)}, ids...) {
			for _, task := range []string{id, jobs.DispatchTaskID(id)} {
				if _, err := inspector.GetTaskInfo(jobs.QueueMessages, task); err == nil {
					out = append(out, task)
				}
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{jobs.DueTaskID(at)}, held()); diff != "" {
		t.Fatalf("tasks in Redis (-want +got):\n%s", diff)
	}
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || n != 1 {
		t.Fatalf("ReconcileOnce = %d, %v; want the one task of the second", n, err)
	}
	if n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || n != 0 {
		t.Fatalf("second ReconcileOnce = %d, %v; want nothing to do", n, err)
	}
	if diff := cmp.Diff([]string{jobs.DueTaskID(at)}, held()); diff != "" {
		t.Fatalf("tasks in Redis after the reconciler (-want +got):\n%s", diff)
	}
	for _, id := range ids {
		waitStatus(e, id, "read")
		m, err := e.App.Client.Message.Get(systemCtx(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.ConfirmedAt.Before(*m.SendAt) {
			t.Errorf("%s confirmed at %s, before its sendAt %s", id, m.ConfirmedAt, m.SendAt)
		}
	}
	sends, err := e.App.Client.SandboxSend.Query().All(systemCtx())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sends {
		if s.Resends != 0 {
			t.Errorf("the network carried %s %d more times", s.WireID, s.Resends)
		}
	}
	if len(sends) != len(ids) {
		t.Errorf("the network carried %d messages, want %d", len(sends), len(ids))
	}
}

// The embedded default loses its in-process Redis on restart; messages accepted
// before the restart go out after it.
func TestRestartOfEmbeddedDefault(t *testing.T) {
	dbURL := "sqlite://" + t.TempDir() + "/sb.db"
	cfg := func(c *app.Config) { c.DatabaseURL = dbURL; c.RedisURL = "" }
	first := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg, NoStart: true})
	m := schedule(first, "+15550103030", map[string]any{"type": "text", "text": "survives"})
	first.Server.Close()
	first.App.Close()

	second := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	second.Key = first.Key
	waitStatus(second, m["id"].(string), "read")
}

// A worker that died between claiming a message and recording the send leaves it
// in sending; the reconciler releases it and the resend carries the same wire id.
func TestStaleClaimIsRetried(t *testing.T) {
	e := newEnv(t)
	ctx := systemCtx()
	m := schedule(e, "+15550104040", map[string]any{"type": "text", "text": "x"})
	id := m["id"].(string)
	waitStatus(e, id, "read")
	key := e.Do("GET", "/v1/scheduled-messages/"+id, e.Key, nil).Data()["waMessageKey"].(map[string]any)["_serialized"]

	// Simulate the crash: back to sending, claimed longer ago than a run may last.
	old := time.Now().Add(-e.App.Queue.StaleAfter() - time.Minute)
	if err := e.App.Client.Message.UpdateOneID(id).SetStatus(string(messaging.StatusSending)).
		ClearConfirmedAt().ClearReceivedAt().ClearReadAt().SetUpdatedAt(old).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// ent's UpdateDefault bumps updated_at; put it back in the past.
	if _, err := e.App.Client.Message.Update().Where(message.ID(id)).SetUpdatedAt(old).Save(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	got := waitStatus(e, id, "confirmed")
	if got["waMessageKey"].(map[string]any)["_serialized"] != key {
		t.Errorf("resend changed the key: %v != %v", got["waMessageKey"], key)
	}
}

// A message of the account's history that the phone still had pending (ack 0)
// is stored pending, but it is not the queue's: the reconciler leaves it, and
// nothing sends it a second time.
func TestReconcilerLeavesHistoryPending(t *testing.T) {
	e := newEnv(t)
	ctx := systemCtx()
	engines := e.Do("GET", "/v1/engines", e.Key, nil).List()
	if len(engines) == 0 {
		t.Fatal("no engine")
	}
	ws, err := e.App.Client.APIKey.Query().Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	key := engine.Key{FromMe: true, Remote: "15550108080@c.us", ID: "3EB0HISTORYPENDING"}
	ev := engine.Event{ID: "hist-pending", Type: engine.EventHistory, At: at, WorkspaceID: ws.WorkspaceID, EngineID: engines[0]["id"].(string),
		History: &engine.History{Messages: []engine.HistoryMessage{{Incoming: engine.Incoming{Key: key, From: "15550108080@c.us", Type: "text", Text: "on its way"}, At: at, FromMe: true, Ack: engine.AckPending}}}}
	if err := e.App.Inbox.HandleEvents(ctx, []engine.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if err := e.App.Inbox.WaitApplied(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	m, err := e.App.Client.Message.Query().Where(message.WaID(key.ID)).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != string(messaging.StatusPending) {
		t.Fatalf("the history message is %s; the test proves nothing", m.Status)
	}
	if _, err := e.App.Client.Message.Update().Where(message.ID(m.ID)).SetUpdatedAt(at).Save(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || n != 0 {
		t.Fatalf("ReconcileOnce = %d, %v; want 0 (the history message is not the queue's)", n, err)
	}
	if got, _ := e.App.Client.Message.Get(ctx, m.ID); got.Status != string(messaging.StatusPending) || got.DispatchAttempts != 0 {
		t.Errorf("the history message is %s after %d dispatches; want pending, never dispatched", got.Status, got.DispatchAttempts)
	}
}

// The worker schedules two maintenance tasks: the reconciler every 15 s, and the
// pruning of records past their retention every 10 minutes (each pass reads the
// tables it prunes, so it does not run with every reconciliation).
func TestMaintenanceIsScheduled(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB})
	inspector := asynq.NewInspectorFromRedisClient(e.App.Redis)
	want := map[string]string{jobs.TypeReconcile: "@every 15s", jobs.TypePrune: "@every 10m0s"}
	var got map[string]string
	e.Eventually(15*time.Second, "the scheduler to record its entries", func() bool {
		entries, err := inspector.SchedulerEntries()
		if err != nil {
			return false
		}
		got = map[string]string{}
		for _, entry := range entries {
			got[entry.Task.Type()] = entry.Spec
		}
		return len(got) >= len(want)
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("periodic tasks (-want +got):\n%s", diff)
	}
}

// Finished records go after their retention; pending work stays.
func TestPruneKeepsPendingWork(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.WebhookRetrySchedule = []time.Duration{time.Hour} }})
	ok := newReceiver(t, nil)
	bad := newReceiver(t, func(int) int { return 500 })
	good := createWebhook(e, ok.URL, "message.queued")
	failing := createWebhook(e, bad.URL, "message.queued")
	first := e.Do("POST", "/v1/scheduled-messages/+15550107070", e.Key, map[string]any{"type": "text", "text": "a"}, "Idempotency-Key", "k-1")
	attempted := func(hook map[string]any, status string) func() bool {
		return func() bool {
			list := e.Do("GET", "/v1/webhooks/"+hook["id"].(string)+"/deliveries", e.Key, nil).List()
			return len(list) == 1 && list[0]["status"] == status && list[0]["attempts"] == float64(1)
		}
	}
	e.Eventually(5*time.Second, "the good delivery to succeed", attempted(good, "succeeded"))
	e.Eventually(5*time.Second, "the failing delivery to wait for its retry", attempted(failing, "pending"))

	p, err := e.App.Jobs.Prune(context.Background(), time.Now().Add(31*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if p.IdempotencyKeys != 1 || p.Events < 1 || p.Deliveries != 1 {
		t.Errorf("pruned %+v, want 1 key, the events, 1 finished delivery", p)
	}
	if n := e.App.Client.DeliveryAttempt.Query().CountX(systemCtx()); n != 1 {
		t.Errorf("%d attempts left, want the pending delivery's 1", n)
	}
	if n := len(e.Do("GET", "/v1/webhooks/"+good["id"].(string)+"/deliveries", e.Key, nil).List()); n != 0 {
		t.Errorf("finished delivery kept: %d", n)
	}
	if n := len(e.Do("GET", "/v1/webhooks/"+failing["id"].(string)+"/deliveries", e.Key, nil).List()); n != 1 {
		t.Errorf("pending delivery removed: %d left", n)
	}
	// The message itself is kept; only the key's replay window ended.
	if r := e.Do("GET", "/v1/scheduled-messages/"+first.Data()["id"].(string), e.Key, nil); r.Status != 200 {
		t.Errorf("message pruned: %d", r.Status)
	}
	if r := e.Do("POST", "/v1/scheduled-messages/+15550107070", e.Key, map[string]any{"type": "text", "text": "b"}, "Idempotency-Key", "k-1"); r.Status != 201 {
		t.Errorf("expired key reused = %d, want 201", r.Status)
	}
}

// A backlog past its retention goes a chunk at a time, through ties at the
// chunks' edges, and nothing within its retention goes with it.
func TestPruneGoesThroughABacklog(t *testing.T) {
	e := newEnv(t)
	ctx, c := systemCtx(), e.App.Client
	now := time.Now() // with its monotonic reading, as the server's times have
	ws := mustWorkspace(t, e, e.Key)
	hook := c.Webhook.Create().SetWorkspaceID(ws).SetURL("https://example.com/hook").SetEvents([]string{"*"}).
		SetSecret("whsec_test").SaveX(ctx)
	// 1,200 expired records share one time, more than a chunk (1,000) holds,
	// and a chunk of the 1,300 older ones ends inside them. Each kind keeps 100
	// that are not due.
	const tied, older, kept = 1200, 1300, 100
	stamp := func(i int, keep time.Duration) time.Time {
		switch {
		case i < tied:
			return now.Add(-keep - time.Hour)
		case i < tied+older:
			return now.Add(-keep - 2*time.Hour - time.Duration(i)*time.Second)
		}
		return now.Add(-keep + time.Hour)
	}
	if err := jobstest.SeedRetained(ctx, c, ws, hook.ID, tied+older+kept, stamp); err != nil {
		t.Fatal(err)
	}
	// A pending delivery as old as any is work, not history.
	c.Delivery.Create().SetWorkspaceID(ws).SetWebhookID(hook.ID).SetEventID("e").SetEventType(webhook.EventMessageDelivered).
		SetPayload([]byte("{}")).SetCreatedAt(stamp(0, jobs.KeepDeliveries)).SetUpdatedAt(stamp(0, jobs.KeepDeliveries)).SaveX(ctx)

	p, err := e.App.Jobs.Prune(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	due := tied + older
	want := jobs.Pruned{IdempotencyKeys: due, Events: due, InboxEvents: due, Deliveries: due}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("pruned (-want +got):\n%s", diff)
	}
	left := map[string]int{
		"keys":       c.IdempotencyKey.Query().CountX(ctx),
		"events":     c.Event.Query().CountX(ctx),
		"inbox":      c.InboxEvent.Query().Where(inboxevent.Subject("seeded")).CountX(ctx),
		"deliveries": c.Delivery.Query().CountX(ctx),
		"attempts":   c.DeliveryAttempt.Query().CountX(ctx),
	}
	if diff := cmp.Diff(map[string]int{"keys": kept, "events": kept, "inbox": kept, "deliveries": kept + 1, "attempts": 2 * kept}, left); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}
