package rest_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/ent/message"
)

// Direct sends through one engine are limited (SWITCHBOARD_ENGINE_SEND_LIMIT):
// past the limit a send is a 429 rate_limited with Retry-After and nothing is
// stored; another workspace's engine has its own budget, and a scheduled send
// through the same engine is queued, never refused.
func TestEngineSendLimit(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.EngineSendLimit = "2/m" }})
	send := func(key, to string) *apptest.Response {
		return e.Do("POST", "/v1/messages/"+to, key, map[string]any{"type": "text", "text": "hi", "withTyping": false})
	}
	type seen struct {
		Status int
		Code   string
		Retry  bool // Retry-After is 1-30 s (one send comes back every 30 s)
	}
	look := func(r *apptest.Response) seen {
		s := seen{Status: r.Status}
		if r.Status >= 400 {
			s.Code, _ = r.Error()["code"].(string)
		}
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		s.Retry = err == nil && retry >= 1 && retry <= 30
		return s
	}
	var got []seen
	for _, to := range []string{"+15550180001", "+15550180002", "+15550180003"} {
		got = append(got, look(send(e.Key, to)))
	}
	other := e.NewKey("other", "*")
	got = append(got, look(send(other, "+15550180004")))
	want := []seen{{201, "", false}, {201, "", false}, {429, "rate_limited", true}, {201, "", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("direct sends (-want +got):\n%s", diff)
	}
	for to, want := range map[string]int{"15550180002@c.us": 1, "15550180003@c.us": 0} {
		if n := e.App.Client.Message.Query().Where(message.To(to)).CountX(systemCtx()); n != want {
			t.Errorf("%d messages stored to %s, want %d", n, to, want)
		}
	}
	if r := e.Do("POST", "/v1/scheduled-messages/+15550180005", e.Key, map[string]any{"type": "text", "text": "later"}); r.Status >= 300 {
		t.Errorf("a scheduled send over the limit: %d %s", r.Status, r.Raw)
	}
}
