package rest_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// /metrics is for operators (the token, or a key with the operator scope) and
// counts what the process did: requests by route pattern, messages handed to
// the engine, webhook deliveries, and the depth of the queues.
func TestMetrics(t *testing.T) {
	const token = "operator-metrics-token-of-the-test"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.OperatorToken = token }})
	for _, tc := range []struct {
		name, cred string
		want       int
	}{
		{"no credential", "", 401},
		{"a workspace key, even *", e.Key, 403},
		{"an operator key", e.NewKey("default", "operator"), 200},
		{"the operator token", token, 200},
	} {
		if r := e.Do("GET", "/metrics", tc.cred, nil); r.Status != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, r.Status, tc.want)
		}
	}

	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "message.delivered")
	m := schedule(e, "+15550007777", map[string]any{"type": "text", "text": "count me"})
	waitStatus(e, m["id"].(string), "read")
	e.Eventually(10*time.Second, "the delivery is recorded", func() bool { return len(rc.all()) > 0 })

	// value is the sum of a metric's samples whose labels match.
	value := func(text, metric, labels string) float64 {
		sum := 0.0
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `\{[^}]*` + labels + `[^}]*\} (\S+)$`)
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			sum += v
		}
		return sum
	}
	var text string
	e.Eventually(10*time.Second, "the counters", func() bool {
		text = e.Do("GET", "/metrics", token, nil).Text()
		return value(text, "switchboard_webhook_deliveries_total", `outcome="succeeded"`) >= 1
	})
	for _, c := range []struct{ metric, labels string }{
		{"switchboard_http_requests_total", `method="POST",route="/v1/scheduled-messages/\{chatId\}",status="201"`},
		{"switchboard_http_request_duration_seconds_count", `method="GET",route="/v1/scheduled-messages/\{id\}"`},
		{"switchboard_http_requests_total", `method="GET",route="/metrics",status="401"`},
		{"switchboard_message_dispatches_total", `outcome="sent"`},
		{"switchboard_webhook_deliveries_total", `outcome="succeeded"`},
	} {
		if value(text, c.metric, c.labels) < 1 {
			t.Errorf("%s{%s} missing or zero", c.metric, c.labels)
		}
	}
	if !regexp.MustCompile(`(?m)^switchboard_engines\{state="CONNECTED"\} [1-9]\d*$`).MatchString(text) {
		t.Errorf("no connected engine counted in:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^switchboard_campaigns\{status="running"\} \d+$`).MatchString(text) {
		t.Errorf("no campaign gauge in:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^switchboard_queue_tasks\{queue="[^"]+",state="pending"\} `).MatchString(text) ||
		!regexp.MustCompile(`(?m)^switchboard_queue_latency_seconds\{queue="[^"]+"\} `).MatchString(text) {
		t.Errorf("no queue metrics in:\n%s", text)
	}
}
