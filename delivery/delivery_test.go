package delivery_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/ent/deliveryattempt"
	entwebhook "github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// sender answers every attempt with status and records what it was asked to send.
type sender struct {
	status int
	mu     sync.Mutex
	sent   []wh.Request
}

func (s *sender) Send(_ context.Context, r wh.Request) wh.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, r)
	return wh.Result{StatusCode: s.status, Latency: time.Millisecond}
}

func (s *sender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// queue records the deliveries queued; it has no Redis, so a change of webhooks
// is announced to this process only.
type queue struct {
	mu     sync.Mutex
	queued []string
}

func (q *queue) Deliver(_ context.Context, _, deliveryID string, _ time.Time) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued = append(q.queued, deliveryID)
	return true, nil
}

func (q *queue) Redis() redis.UniversalClient { return nil }

// env is a service over a fresh SQLite database, a fake sender and a fake queue.
type env struct {
	svc    *delivery.Service
	sender *sender
	queue  *queue
	path   string // the database file
}

func newEnv(t *testing.T, status int, schedule ...time.Duration) *env {
	t.Helper()
	client, path := storagetest.SQLite(t)
	e := &env{sender: &sender{status: status}, queue: &queue{}, path: path}
	e.svc = &delivery.Service{Client: client, Queue: e.queue, Sender: e.sender, RetrySchedule: schedule, Dialect: "sqlite3"}
	return e
}

// workspace is a workspace id of its own for each test row: what outbox
// remembers of one row's webhooks never answers for another's.
func workspace(t *testing.T) string {
	return "ws_" + strings.NewReplacer("/", "_", " ", "_", ",", "_").Replace(t.Name())
}

// hook makes a webhook of ws with status and failures consecutive failures.
func (e *env) hook(t *testing.T, ws string, status wh.Status, failures int) *ent.Webhook {
	t.Helper()
	h, err := e.svc.Client.Webhook.Create().SetURL("https://receiver.example/hook").SetEvents([]string{"message.read"}).
		SetSecret("whsec_c2VjcmV0").SetStatus(string(status)).SetConsecutiveFailures(failures).
		Save(viewer.WorkspaceContext(context.Background(), ws))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// delivery makes a pending delivery to hook, due now, after attempts attempts.
func (e *env) delivery(t *testing.T, hook *ent.Webhook, attempts int) *ent.Delivery {
	t.Helper()
	d, err := e.svc.Client.Delivery.Create().SetWebhookID(hook.ID).SetEventID("evt_1").SetEventType("message.read").
		SetPayload([]byte(`{"id":"evt_1"}`)).SetAttempts(attempts).SetNextAttemptAt(time.Now().Add(-time.Second)).
		Save(viewer.WorkspaceContext(context.Background(), hook.WorkspaceID))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// outcome is what an attempt left: the delivery, its attempt log, its webhook,
// the retry the attempt asked for (to the second) and the requests sent.
type outcome struct {
	Status, LastError string
	Attempts          int
	Logged            []int  // attempt numbers
	Successes         []bool // of the logged attempts
	NextIn            time.Duration
	Retry             time.Duration
	HookStatus        string
	Failures          int
	HookDisabled      bool
	Sent              int
}

// attempt makes one attempt of d and reads back what it left.
func (e *env) attempt(t *testing.T, d *ent.Delivery) outcome {
	t.Helper()
	var o outcome
	err := e.svc.Attempt(context.Background(), d.WorkspaceID, d.ID)
	var ra *delivery.RetryAfter
	if errors.As(err, &ra) {
		o.Retry = ra.Delay.Round(time.Second)
	} else if err != nil {
		t.Fatalf("attempt: %v", err)
	}
	sys := viewer.SystemContext(context.Background())
	got, err := e.svc.Client.Delivery.Query().Where(entdelivery.ID(d.ID)).
		WithAttemptLog(func(q *ent.DeliveryAttemptQuery) { q.Order(ent.Asc(deliveryattempt.FieldNumber)) }).Only(sys)
	switch {
	case ent.IsNotFound(err):
		o.Status = "gone"
	case err != nil:
		t.Fatal(err)
	default:
		o.Status, o.LastError, o.Attempts = got.Status, got.LastError, got.Attempts
		for _, a := range got.Edges.AttemptLog {
			o.Logged = append(o.Logged, a.Number)
			o.Successes = append(o.Successes, a.Success)
		}
		if got.NextAttemptAt != nil && got.LastAttemptAt != nil {
			o.NextIn = got.NextAttemptAt.Sub(*got.LastAttemptAt).Round(time.Second)
		}
	}
	hook, err := e.svc.Client.Webhook.Get(sys, d.WebhookID)
	switch {
	case ent.IsNotFound(err):
		o.HookStatus = "gone"
	case err != nil:
		t.Fatal(err)
	default:
		o.HookStatus, o.Failures, o.HookDisabled = hook.Status, hook.ConsecutiveFailures, hook.DisabledAt != nil
	}
	o.Sent = e.sender.count()
	return o
}

// An attempt that fails is tried again after the schedule's delay at its number
// (counted from the end of the attempt); the attempt after the schedule's last
// fails the delivery for good.
func TestRetrySchedule(t *testing.T) {
	schedule := []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}
	fail := func(attempts int, errText string) outcome {
		logged := make([]int, 0, attempts+1)
		for n := 1; n <= attempts+1; n++ {
			logged = append(logged, n)
		}
		return outcome{Status: "failed", LastError: errText, Attempts: attempts + 1, Logged: logged[attempts:],
			Successes: []bool{false}, HookStatus: "enabled", Failures: 1, Sent: 1}
	}
	retry := func(attempts int, delay time.Duration) outcome {
		o := fail(attempts, "HTTP 500")
		o.Status, o.NextIn, o.Retry = "pending", delay, delay
		return o
	}
	for _, tc := range []struct {
		name     string
		attempts int // before this one
		want     outcome
	}{
		{"first attempt", 0, retry(0, time.Minute)},
		{"second attempt", 1, retry(1, 5*time.Minute)},
		{"last retry", 2, retry(2, 15*time.Minute)},
		{"past the schedule", 3, fail(3, "HTTP 500")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 500, schedule...)
			d := e.delivery(t, e.hook(t, workspace(t), wh.StatusEnabled, 0), tc.attempts)
			if diff := cmp.Diff(tc.want, e.attempt(t, d)); diff != "" {
				t.Errorf("after attempt %d (-want +got):\n%s", tc.attempts+1, diff)
			}
		})
	}
}

// The DisableAfter-th consecutive failure of an endpoint disables it and fails
// the delivery, whatever is left of the schedule; one fewer only counts.
func TestAutoDisable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int // before this attempt
		want     outcome
	}{
		{"one short", delivery.DisableAfter - 2, outcome{Status: "pending", LastError: "HTTP 503", Attempts: 1,
			Logged: []int{1}, Successes: []bool{false}, NextIn: time.Minute, Retry: time.Minute,
			HookStatus: "enabled", Failures: delivery.DisableAfter - 1, Sent: 1}},
		{"the last straw", delivery.DisableAfter - 1, outcome{Status: "failed",
			LastError: "HTTP 503; webhook disabled after 8 consecutive failures", Attempts: 1,
			Logged: []int{1}, Successes: []bool{false},
			HookStatus: "disabled", Failures: delivery.DisableAfter, HookDisabled: true, Sent: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 503, time.Minute)
			d := e.delivery(t, e.hook(t, workspace(t), wh.StatusEnabled, tc.failures), 0)
			if diff := cmp.Diff(tc.want, e.attempt(t, d)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A success finishes the delivery and resets its endpoint's count of
// consecutive failures, recorded alone or with the others of its moment.
func TestSuccessResetsFailures(t *testing.T) {
	want := outcome{Status: "succeeded", Attempts: 3, Logged: []int{3}, Successes: []bool{true},
		HookStatus: "enabled", Sent: 1}
	for _, tc := range []struct {
		name    string
		batched bool // the recorder and loader run
	}{
		{"recorded alone", false},
		{"recorded in a batch", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 204, time.Minute)
			if tc.batched {
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); e.svc.RunRecorder(ctx, 1) }()
				go func() { defer wg.Done(); e.svc.RunLoader(ctx, 1) }()
				t.Cleanup(func() { cancel(); wg.Wait() })
			}
			d := e.delivery(t, e.hook(t, workspace(t), wh.StatusEnabled, delivery.DisableAfter-1), 2)
			if diff := cmp.Diff(want, e.attempt(t, d)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// An attempt asks the database about a webhook that what this process
// remembers of the workspace's webhooks lacks (made a moment ago on another
// replica, disabled, or deleted): an enabled one is delivered to, and then
// remembered; a disabled or deleted one ends the delivery without an attempt.
func TestWebhookUnknownToMemory(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     wh.Status
		deleted    bool // the row goes, its delivery stays (a delete racing the attempt)
		want       outcome
		remembered bool
	}{
		{"made elsewhere", wh.StatusEnabled, false, outcome{Status: "succeeded", Attempts: 1,
			Logged: []int{1}, Successes: []bool{true}, HookStatus: "enabled", Sent: 1}, true},
		{"disabled", wh.StatusDisabled, false, outcome{Status: "failed", LastError: "webhook disabled",
			HookStatus: "disabled"}, false},
		{"deleted", wh.StatusEnabled, true, outcome{Status: "failed", LastError: "webhook deleted",
			HookStatus: "gone"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 200, time.Minute)
			ws := workspace(t)
			ctx := viewer.WorkspaceContext(context.Background(), ws)
			// This process now remembers the workspace has no webhooks.
			if wants, err := outbox.Wants(ctx, e.svc.Client.Webhook, ws, "message.read"); err != nil || wants {
				t.Fatalf("wants = %v, %v before any webhook", wants, err)
			}
			hook := e.hook(t, ws, tc.status, 0)
			d := e.delivery(t, hook, 0)
			if tc.deleted {
				deleteWithoutCascade(t, e.path, hook.ID)
			}
			if diff := cmp.Diff(tc.want, e.attempt(t, d)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if _, ok, err := outbox.Enabled(ctx, e.svc.Client.Webhook, ws, hook.ID); err != nil || ok != tc.remembered {
				t.Errorf("remembered as enabled = %v, %v; want %v", ok, err, tc.remembered)
			}
		})
	}
}

// deleteWithoutCascade deletes a webhook's row and leaves its deliveries, as a
// delete that commits between an attempt's read of its delivery and of its
// webhook looks to the attempt.
func deleteWithoutCascade(t *testing.T, path, id string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(0)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DELETE FROM "+entwebhook.Table+" WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
}

// Fan-out turns each recorded event into a delivery to every enabled webhook
// of its workspace that subscribes to its type, and queues them.
func TestFanOutOnce(t *testing.T) {
	e := newEnv(t, 200, time.Minute)
	ws := workspace(t)
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	wants := e.hook(t, ws, wh.StatusEnabled, 0)
	e.hook(t, ws, wh.StatusDisabled, 0)
	other := e.hook(t, "ws_other", wh.StatusEnabled, 0)
	for _, ev := range []struct{ ws, typ string }{{ws, "message.read"}, {ws, "message.sent"}, {"ws_other", "message.read"}} {
		if err := e.svc.Client.Event.Create().SetWorkspaceID(ev.ws).SetType(ev.typ).SetData([]byte(`{}`)).
			Exec(viewer.SystemContext(ctx)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := e.svc.FanOutOnce(ctx)
	if err != nil || n != 3 {
		t.Fatalf("fan-out claimed %d events (%v), want 3", n, err)
	}
	ds, err := e.svc.Client.Delivery.Query().Order(ent.Asc(entdelivery.FieldWebhookID)).All(viewer.SystemContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Webhook, Type, Status string }
	var got []row
	var ids []string
	for _, d := range ds {
		got = append(got, row{d.WebhookID, d.EventType, d.Status})
		ids = append(ids, d.ID)
	}
	want := []row{{wants.ID, "message.read", "pending"}, {other.ID, "message.read", "pending"}}
	if want[0].Webhook > want[1].Webhook {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ids, e.queue.queued, cmpSorted); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
	if n, err := e.svc.FanOutOnce(ctx); err != nil || n != 0 {
		t.Errorf("a second fan-out claimed %d events (%v), want none", n, err)
	}
}
