package rest_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/viewer"
)

// receiver is a local webhook endpoint that records what it gets.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) int // status for the n-th request (0-based)
	// answerFor, when set, picks the status from the request's envelope instead.
	answerFor func(payload map[string]any) int
}

type received struct {
	at      time.Time
	header  http.Header
	body    []byte
	payload map[string]any
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		rc.got = append(rc.got, received{at: time.Now(), header: r.Header.Clone(), body: body, payload: p})
		rc.mu.Unlock()
		status := 200
		switch {
		case rc.answerFor != nil:
			status = rc.answerFor(p)
		case rc.answer != nil:
			status = rc.answer(n)
		}
		if status >= 300 && status < 400 {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func (rc *receiver) ofType(typ string) []received {
	var out []received
	for _, r := range rc.all() {
		if r.payload["type"] == typ {
			out = append(out, r)
		}
	}
	return out
}

func createWebhook(e *apptest.Env, url string, events ...string) map[string]any {
	e.T.Helper()
	resp := e.Do("POST", "/v1/webhooks", e.Key, map[string]any{"url": url, "events": events, "description": "test"})
	if resp.Status != 201 {
		e.T.Fatalf("create webhook: %d %s", resp.Status, resp.Raw)
	}
	return resp.Data()
}

// verify checks a Standard Webhooks signature header independently of the server:
// HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>" keyed by the base64
// part of the whsec_ secret, compared with each "v1,<sig>" entry.
func verify(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if v, s, ok := strings.Cut(sig, ","); ok && v == "v1" && hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

func TestWebhookManagement(t *testing.T) {
	e := newEnv(t)
	hook := createWebhook(e, "https://hooks.example.com/sb?token=s3cret", "message.read", "message.failed", "message.read")
	id := hook["id"].(string)
	if !strings.HasPrefix(hook["secret"].(string), "whsec_") || hook["status"] != "enabled" || len(hook["events"].([]any)) != 2 || hook["createdAt"] == nil {
		t.Errorf("created = %v", hook)
	}
	got := e.Do("GET", "/v1/webhooks/"+id, e.Key, nil)
	if got.Status != 200 || got.Data()["secret"] != nil || got.Data()["url"] != "https://hooks.example.com/sb?token=s3cret" {
		t.Errorf("get = %d %s (the secret must not be shown again)", got.Status, got.Raw)
	}
	list := e.Do("GET", "/v1/webhooks", e.Key, nil)
	if list.Body["total"] != float64(1) || len(list.List()) != 1 {
		t.Errorf("list = %s", list.Raw)
	}
	patched := e.Do("PATCH", "/v1/webhooks/"+id, e.Key, map[string]any{"events": []string{"session.connected"}, "description": "renamed", "status": "disabled"})
	if patched.Status != 200 || patched.Data()["status"] != "disabled" || patched.Data()["description"] != "renamed" {
		t.Errorf("patch = %d %s", patched.Status, patched.Raw)
	}
	rot := e.Do("POST", "/v1/webhooks/"+id+"/rotate-secret", e.Key, nil)
	if rot.Status != 200 || !strings.HasPrefix(rot.Data()["secret"].(string), "whsec_") || rot.Data()["secret"] == hook["secret"] {
		t.Errorf("rotate = %d %s", rot.Status, rot.Raw)
	}
	reader := e.NewKey("default", "webhooks:read")
	if r := e.Do("GET", "/v1/webhooks", reader, nil); r.Status != 200 {
		t.Errorf("list with webhooks:read = %d", r.Status)
	}
	if r := e.Do("POST", "/v1/webhooks/"+id+"/rotate-secret", reader, nil); r.Status != 403 {
		t.Errorf("rotate with webhooks:read = %d, want 403", r.Status)
	}
	other := e.NewKey("acme", "*")
	if r := e.Do("GET", "/v1/webhooks/"+id, other, nil); r.Status != 404 {
		t.Errorf("get from another workspace = %d, want 404", r.Status)
	}
	del := e.Do("DELETE", "/v1/webhooks/"+id, e.Key, nil)
	if del.Status != 200 || del.Data()["deleted"] != true || del.Data()["id"] != id {
		t.Errorf("delete = %d %s", del.Status, del.Raw)
	}
	if r := e.Do("GET", "/v1/webhooks/"+id, e.Key, nil); r.Status != 404 {
		t.Errorf("get after delete = %d", r.Status)
	}
}

func TestWebhookValidation(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.AllowPrivate = false }})
	tests := []struct {
		name string
		body any
		want int
		path string
	}{
		{"missing url", map[string]any{"events": []string{"message.read"}}, 422, "url"},
		{"http url", map[string]any{"url": "http://hooks.example.com/x", "events": []string{"message.read"}}, 422, "url"},
		{"loopback", map[string]any{"url": "https://127.0.0.1/x", "events": []string{"message.read"}}, 422, "url"},
		{"private", map[string]any{"url": "https://10.0.0.8/x", "events": []string{"message.read"}}, 422, "url"},
		{"metadata", map[string]any{"url": "https://169.254.169.254/latest", "events": []string{"message.read"}}, 422, "url"},
		{"ipv6 loopback", map[string]any{"url": "https://[::1]/x", "events": []string{"message.read"}}, 422, "url"},
		{"localhost", map[string]any{"url": "https://localhost/x", "events": []string{"message.read"}}, 422, "url"},
		{"not a url", map[string]any{"url": "hooks", "events": []string{"message.read"}}, 422, "url"},
		{"url too long", map[string]any{"url": "https://e.com/" + strings.Repeat("a", 2048), "events": []string{"message.read"}}, 422, "url"},
		{"no events", map[string]any{"url": "https://hooks.example.com/x", "events": []string{}}, 422, "events"},
		{"unknown events", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"message.read", "message.exploded"}}, 422, "events"},
		{"long description", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"message.read"}, "description": strings.Repeat("d", 121)}, 422, "description"},
		{"unknown field", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"message.read"}, "secret": "x"}, 400, "secret"},
		{"events not array", map[string]any{"url": "https://hooks.example.com/x", "events": "message.read"}, 400, "events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Do("POST", "/v1/webhooks", e.Key, tt.body)
			if resp.Status != tt.want || !slices.Contains(resp.DetailPaths(), tt.path) {
				t.Errorf("= %d %s, want %d naming %s", resp.Status, resp.Raw, tt.want, tt.path)
			}
		})
	}
	// A refusal that the local-testing switch lifts names it; one it does not lift does not.
	for url, hint := range map[string]bool{"http://127.0.0.1:9000/hook": true, "https://10.0.0.8/x": true, "hooks": false} {
		r := e.Do("POST", "/v1/webhooks", e.Key, map[string]any{"url": url, "events": []string{"message.read"}})
		if got := strings.Contains(r.Text(), "--webhook-allow-private") && strings.Contains(r.Text(), "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE"); got != hint {
			t.Errorf("%s: names the flag = %v, want %v: %s", url, got, hint, r.Raw)
		}
	}
	bad := e.Do("POST", "/v1/webhooks", e.Key, map[string]any{"url": "https://hooks.example.com/x", "events": []string{"nope.one", "message.read"}})
	if !strings.Contains(bad.Text(), "nope.one") {
		t.Errorf("unknown events are not listed: %s", bad.Raw)
	}
	ok := e.Do("POST", "/v1/webhooks", e.Key, map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"message.read"}})
	if ok.Status != 201 {
		t.Errorf("public https url = %d %s", ok.Status, ok.Raw)
	}
	if r := e.Do("PATCH", "/v1/webhooks/"+ok.Data()["id"].(string), e.Key, map[string]any{"status": "paused"}); r.Status != 422 {
		t.Errorf("bad status = %d", r.Status)
	}
}

func TestWebhookDeliveryEnvelopeAndSignature(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	hook := createWebhook(e, rc.URL+"/hook?secret=abc", "message.queued", "message.sending", "message.delivered", "message.read")
	m := schedule(e, "+15550302020", map[string]any{"type": "text", "text": "track me"})
	waitStatus(e, m["id"].(string), "read")
	e.Eventually(5*time.Second, "four events", func() bool { return len(rc.all()) >= 4 })
	time.Sleep(100 * time.Millisecond)
	var types []string
	ids := map[string]bool{}
	for _, r := range rc.all() {
		p := r.payload
		types = append(types, p["type"].(string))
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("Service-Webhook-Id") != hook["id"] {
			t.Errorf("headers = %v", r.header)
		}
		if id := p["id"].(string); ids[id] || r.header.Get("webhook-id") != id {
			t.Errorf("envelope id %q repeated or not the webhook-id header", id)
		} else {
			ids[id] = true
		}
		if _, err := time.Parse(time.RFC3339, p["created_at"].(string)); err != nil {
			t.Errorf("created_at = %v", p["created_at"])
		}
		if data := p["data"].(map[string]any); data["id"] != m["id"] {
			t.Errorf("data = %v", data)
		}
		if !verify(hook["secret"].(string), r.header, r.body) {
			t.Errorf("signature does not verify: %v", r.header.Get("webhook-signature"))
		}
		ts, _ := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
		if d := time.Since(time.Unix(ts, 0)); d < 0 || d > time.Minute {
			t.Errorf("webhook-timestamp %d is off by %s", ts, d)
		}
	}
	slices.Sort(types)
	if want := []string{"message.delivered", "message.queued", "message.read", "message.sending"}; !slices.Equal(types, want) {
		t.Errorf("event types = %v, want %v", types, want)
	}
	if got := rc.all()[0].header.Get("Service-Webhook-Id"); got == "" {
		t.Errorf("no Service-Webhook-Id")
	}

	// After rotation both secrets sign for 24 h.
	rot := e.Do("POST", "/v1/webhooks/"+hook["id"].(string)+"/rotate-secret", e.Key, nil).Data()
	before := len(rc.all())
	schedule(e, "+15550302021", map[string]any{"type": "text", "text": "after rotation"})
	e.Eventually(5*time.Second, "an event after rotation", func() bool { return len(rc.all()) > before })
	last := rc.all()[before]
	if !verify(rot["secret"].(string), last.header, last.body) || !verify(hook["secret"].(string), last.header, last.body) {
		t.Errorf("after rotation the new and the old secret must both verify: %s", last.header.Get("webhook-signature"))
	}
}

func TestWebhookRetriesAutoDisableAndReenable(t *testing.T) {
	schedule := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.WebhookRetrySchedule = schedule }})
	failing := true
	var mu sync.Mutex
	rc := newReceiver(t, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return 503
		}
		return 204
	})
	hook := createWebhook(e, rc.URL, "message.queued")
	id := hook["id"].(string)
	scheduleMsg(e, "+15550303030")
	e.Eventually(15*time.Second, "the webhook to be disabled", func() bool {
		return e.Do("GET", "/v1/webhooks/"+id, e.Key, nil).Data()["status"] == "disabled"
	})
	time.Sleep(800 * time.Millisecond)
	got := rc.all()
	if len(got) != 8 {
		t.Fatalf("attempts = %d, want 8", len(got))
	}
	for i := 1; i < len(got); i++ {
		gap := got[i].at.Sub(got[i-1].at)
		if gap < schedule[i-1] || gap > schedule[i-1]+2*time.Second {
			t.Errorf("gap before attempt %d = %s, want about %s", i+1, gap, schedule[i-1])
		}
		if got[i].payload["id"] != got[0].payload["id"] {
			t.Errorf("attempt %d has envelope id %v, want the delivery's %v", i+1, got[i].payload["id"], got[0].payload["id"])
		}
	}
	dl := e.Do("GET", "/v1/webhooks/"+id+"/deliveries", e.Key, nil)
	d := dl.List()[0]
	if dl.Body["total"] != float64(1) || d["status"] != "failed" || d["attempts"] != float64(8) || len(d["attemptLog"].([]any)) != 8 {
		t.Fatalf("deliveries = %s", dl.Raw)
	}
	first := d["attemptLog"].([]any)[0].(map[string]any)
	if first["statusCode"] != float64(503) || first["success"] != false || first["responseBody"] != `{"ok":true}` {
		t.Errorf("attempt log entry = %v", first)
	}

	// Disabled: new events are not delivered.
	scheduleMsg(e, "+15550303031")
	time.Sleep(500 * time.Millisecond)
	if n := len(rc.all()); n != 8 {
		t.Errorf("a disabled webhook got %d more requests", n-8)
	}
	// Re-enabled: deliveries resume.
	mu.Lock()
	failing = false
	mu.Unlock()
	if r := e.Do("PATCH", "/v1/webhooks/"+id, e.Key, map[string]any{"status": "enabled"}); r.Status != 200 || r.Data()["status"] != "enabled" {
		t.Fatalf("re-enable = %d %s", r.Status, r.Raw)
	}
	scheduleMsg(e, "+15550303032")
	e.Eventually(5*time.Second, "delivery after re-enable", func() bool { return len(rc.all()) == 9 })

	// Redelivery of the failed one.
	rd := e.Do("POST", "/v1/webhooks/"+id+"/deliveries/"+d["id"].(string)+"/redeliver", e.Key, nil)
	if rd.Status != 201 || rd.Data()["id"] == d["id"] {
		t.Fatalf("redeliver = %d %s", rd.Status, rd.Raw)
	}
	e.Eventually(5*time.Second, "the redelivery", func() bool { return len(rc.all()) == 10 })
	// A redelivery is a new delivery of the same envelope: receivers that store
	// envelope ids recognise the event.
	if last := rc.all()[9]; last.payload["id"] != d["id"] || last.header.Get("webhook-id") != d["id"] || last.payload["type"] != "message.queued" {
		t.Errorf("redelivered envelope id = %v (webhook-id %q), want the original %v: %v", last.payload["id"], last.header.Get("webhook-id"), d["id"], last.payload)
	}
}

func scheduleMsg(e *apptest.Env, to string) {
	e.T.Helper()
	schedule(e, to, map[string]any{"type": "text", "text": "event"})
}

func TestWebhookRedirectIsAFailure(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.WebhookRetrySchedule = []time.Duration{time.Hour} }})
	target := newReceiver(t, nil)
	rc := newReceiver(t, func(int) int { return 302 })
	rc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.got = append(rc.got, received{at: time.Now()})
		rc.mu.Unlock()
		http.Redirect(w, r, target.URL, http.StatusFound)
	})
	hook := createWebhook(e, rc.URL, "message.queued")
	scheduleMsg(e, "+15550304040")
	e.Eventually(5*time.Second, "the attempt", func() bool { return len(rc.all()) == 1 })
	time.Sleep(300 * time.Millisecond)
	if len(target.all()) != 0 {
		t.Errorf("the redirect was followed")
	}
	d := e.Do("GET", "/v1/webhooks/"+hook["id"].(string)+"/deliveries", e.Key, nil).List()[0]
	if d["status"] != "pending" || !strings.Contains(d["lastError"].(string), "redirect") || d["nextAttemptAt"] == nil {
		t.Errorf("delivery after a 302 = %v", d)
	}
}

func TestSlowReceiverDoesNotStallOthers(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer func() { close(release); slow.Close() }()
	fast := newReceiver(t, nil)
	for i := 0; i < 3; i++ {
		createWebhook(e, slow.URL, "message.queued")
	}
	createWebhook(e, fast.URL, "message.queued")
	start := time.Now()
	for i := 0; i < 3; i++ {
		scheduleMsg(e, "+1555030505"+strconv.Itoa(i))
	}
	e.Eventually(5*time.Second, "the fast receiver", func() bool { return len(fast.all()) == 3 })
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("fast receiver waited %s behind slow ones", d)
	}
}

func TestWebhookDeliveriesSurviveRedisFlush(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.WebhookRetrySchedule = []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}
	}})
	var mu sync.Mutex
	seen := map[string]int{}
	rc := newReceiver(t, nil)
	rc.answerFor = func(payload map[string]any) int {
		mu.Lock()
		defer mu.Unlock()
		id := payload["id"].(string)
		seen[id]++
		if seen[id] == 1 {
			return 500 // every delivery fails once, then waits for its retry
		}
		return 200
	}
	hook := createWebhook(e, rc.URL, "message.queued")
	for i := 0; i < 4; i++ {
		scheduleMsg(e, "+1555030606"+strconv.Itoa(i))
	}
	e.Eventually(5*time.Second, "first attempts recorded", func() bool {
		page := e.Do("GET", "/v1/webhooks/"+hook["id"].(string)+"/deliveries?status=pending", e.Key, nil).List()
		n := 0
		for _, d := range page {
			if d["attempts"] == float64(1) {
				n++
			}
		}
		return n == 4
	})
	time.Sleep(100 * time.Millisecond) // let the workers hand their retries to Redis
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := len(rc.all()); n != 4 {
		t.Fatalf("%d requests after the flush before reconciling; the test proves nothing", n)
	}
	if _, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	e.Eventually(5*time.Second, "every delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		done := 0
		for _, n := range seen {
			if n >= 2 {
				done++
			}
		}
		return done == 4
	})
}

// Two runs of one delivery's task at once (a task Redis handed out twice) both
// make their attempt, but the delivery records one: the run that records second
// finds the delivery finished and stores nothing.
func TestConcurrentRunsOfADeliveryRecordOnce(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB})
	var deliveries atomic.Value // the list's path, once the webhook exists
	first := make(chan struct{})
	rc := newReceiver(t, nil)
	rc.answerFor = func(map[string]any) int {
		if len(rc.all()) == 1 { // the worker's run: wait for the second
			select {
			case <-first:
			case <-time.After(10 * time.Second):
			}
			return 200
		}
		// The second run answers once the first has recorded its attempt.
		close(first)
		e.Eventually(5*time.Second, "the first run recorded", func() bool {
			return e.Do("GET", deliveries.Load().(string), e.Key, nil).List()[0]["status"] == "succeeded"
		})
		return 200
	}
	hook := createWebhook(e, rc.URL, "message.queued")
	deliveries.Store("/v1/webhooks/" + hook["id"].(string) + "/deliveries")
	scheduleMsg(e, "+15550307070")
	e.Eventually(5*time.Second, "the worker's attempt in flight", func() bool { return len(rc.all()) == 1 })
	id := e.Do("GET", deliveries.Load().(string), e.Key, nil).List()[0]["id"].(string)
	d, err := e.App.Client.Delivery.Get(viewer.SystemContext(context.Background()), id)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]string{"deliveryId": id, "workspaceId": d.WorkspaceID})
	if err := e.App.Jobs.Deliver(context.Background(), asynq.NewTask(jobs.TypeDeliver, payload)); err != nil {
		t.Fatalf("the second run: %v", err)
	}
	got := e.Do("GET", deliveries.Load().(string), e.Key, nil).List()[0]
	if n := len(rc.all()); n != 2 {
		t.Fatalf("%d requests, want the 2 attempts in flight", n)
	}
	if got["status"] != "succeeded" || got["attempts"] != float64(1) || len(got["attemptLog"].([]any)) != 1 {
		t.Errorf("status %v, attempts %v, attempt log %v: want one recorded success", got["status"], got["attempts"], got["attemptLog"])
	}
}

// Successes recorded together each keep their own attempt: one attempt logged,
// and the delivery's last attempt at that attempt's time.
func TestDeliveriesRecordedTogetherKeepTheirAttempts(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB})
	rc := newReceiver(t, nil)
	hook := createWebhook(e, rc.URL, "message.queued")
	const n = 40
	for i := range n {
		scheduleMsg(e, fmt.Sprintf("+1555031%04d", i))
	}
	path := "/v1/webhooks/" + hook["id"].(string) + "/deliveries?limit=100"
	var list []map[string]any
	e.Eventually(10*time.Second, "every delivery recorded", func() bool {
		list = e.Do("GET", path, e.Key, nil).List()
		if len(list) != n {
			return false
		}
		for _, d := range list {
			if d["status"] != "succeeded" {
				return false
			}
		}
		return true
	})
	for _, d := range list {
		log := d["attemptLog"].([]any)
		if d["attempts"] != float64(1) || len(log) != 1 {
			t.Fatalf("delivery %v: %v attempts, %d logged; want 1 and 1", d["id"], d["attempts"], len(log))
		}
		last, err1 := time.Parse(time.RFC3339Nano, d["lastAttemptAt"].(string))
		at, err2 := time.Parse(time.RFC3339Nano, log[0].(map[string]any)["at"].(string))
		if err1 != nil || err2 != nil || !last.Equal(at) {
			t.Errorf("delivery %v: last attempt at %v, its attempt at %v", d["id"], d["lastAttemptAt"], log[0].(map[string]any)["at"])
		}
	}
}

// Attempts read their deliveries together, and a task that names another
// workspace than its delivery's finds none: it sends nothing.
func TestDeliveriesReadTogetherStayInTheirWorkspace(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.App.Delivery.RunLoader(ctx, 1)
	rc := newReceiver(t, nil)
	hook := createWebhook(e, rc.URL, "message.queued")
	scheduleMsg(e, "+15550308080")
	if _, err := e.App.Delivery.FanOutOnce(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := e.App.Client.Delivery.Query().Only(viewer.SystemContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(workspaceID string) {
		payload, _ := json.Marshal(map[string]string{"deliveryId": d.ID, "workspaceId": workspaceID})
		if err := e.App.Jobs.Deliver(ctx, asynq.NewTask(jobs.TypeDeliver, payload)); err != nil {
			t.Fatal(err)
		}
	}
	deliver("ws_someoneelse")
	if n := len(rc.all()); n != 0 {
		t.Fatalf("a task naming another workspace sent %d requests", n)
	}
	deliver(d.WorkspaceID)
	got := e.Do("GET", "/v1/webhooks/"+hook["id"].(string)+"/deliveries", e.Key, nil).List()
	if n := len(rc.all()); n != 1 || got[0]["status"] != "succeeded" {
		t.Fatalf("%d requests, delivery %v; want one, succeeded", n, got[0]["status"])
	}
}

// A webhook another replica made a moment ago is delivered to, not taken for a
// disabled one: what this process remembers of the workspace's webhooks predates
// it, and the database decides.
func TestWebhookMadeElsewhereIsDelivered(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ws := mustWorkspace(t, e, e.Key)
	scheduleMsg(e, "+15550001234") // this process now remembers: no webhooks
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	hook, err := e.App.Client.Webhook.Create().SetURL(rc.URL).SetEvents([]string{"message.read"}).
		SetSecret("whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The other replica recorded an event for it.
	if err := e.App.Client.Event.Create().SetType("message.read").SetData([]byte(`{"id":"msg_elsewhere"}`)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	e.Eventually(30*time.Second, "the delivery ended", func() bool {
		d, err := e.App.Client.Delivery.Query().All(ctx)
		return err == nil && len(d) == 1 && d[0].Status != string(delivery.Pending)
	})
	d := e.App.Client.Delivery.Query().OnlyX(ctx)
	if d.Status != string(delivery.Succeeded) || len(rc.ofType("message.read")) != 1 {
		t.Fatalf("delivery to %s = %s (%q), received %d", hook.ID, d.Status, d.LastError, len(rc.all()))
	}
}
