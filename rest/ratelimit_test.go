package rest_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// Each API key has its own budget, shared by REST and GraphQL: the requests
// within it carry the X-RateLimit headers counting down, the one past it is a
// 429 rate_limited with Retry-After, and another key is not affected.
func TestRateLimitPerKey(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.RateLimit, c.RateBurst = "5/m", 3
	}})
	type seen struct {
		Status                  int
		Limit, Remaining, Retry string
		Code                    string
	}
	look := func(r *apptest.Response) seen {
		s := seen{Status: r.Status, Limit: r.Header.Get("X-RateLimit-Limit"),
			Remaining: r.Header.Get("X-RateLimit-Remaining"), Retry: r.Header.Get("Retry-After")}
		if r.Status >= 400 {
			s.Code, _ = r.Error()["code"].(string)
		}
		if reset, err := strconv.Atoi(r.Header.Get("X-RateLimit-Reset")); err != nil || reset < 0 || reset > 60 {
			t.Errorf("X-RateLimit-Reset = %q", r.Header.Get("X-RateLimit-Reset"))
		}
		return s
	}
	var got []seen
	for range 3 {
		got = append(got, look(e.Do("GET", "/v1/ping", e.Key, nil)))
	}
	over := e.Do("POST", "/graphql", e.Key, map[string]any{"query": "{ ping { ok } }"})
	got = append(got, look(over))
	// One request comes back every 12 s: Retry-After is at most that.
	if retry, err := strconv.Atoi(got[3].Retry); err != nil || retry < 1 || retry > 12 {
		t.Errorf("Retry-After = %q, want 1-12", got[3].Retry)
	}
	got[3].Retry = "checked"
	want := []seen{
		{200, "5", "2", "", ""},
		{200, "5", "1", "", ""},
		{200, "5", "0", "", ""},
		{429, "5", "0", "checked", "rate_limited"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if msg, _ := over.Error()["message"].(string); msg == "" {
		t.Errorf("429 without a message: %s", over.Raw)
	}
	// Another key has its own budget; no key at all is still a 401.
	other := e.NewKey("default", "*")
	if r := e.Do("GET", "/v1/ping", other, nil); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("another key: %d remaining %q", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
	if r := e.Do("GET", "/v1/ping", "", nil); r.Status != 401 {
		t.Errorf("no key: %d", r.Status)
	}
}
