package rest_test

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/music"
)

// seenLimit is what a test reads of an answer of a limited route.
type seenLimit struct {
	Status           int
	Code             string
	Limit, Remaining string
	Retry            bool // Retry-After is a positive number of seconds
}

func lookLimit(t *testing.T, r *apptest.Response, maxRetry int) seenLimit {
	t.Helper()
	s := seenLimit{Status: r.Status, Limit: r.Header.Get("X-RateLimit-Limit"), Remaining: r.Header.Get("X-RateLimit-Remaining")}
	if r.Status >= 400 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.Code, _ = r.Error()["code"].(string)
		if r.Error()["requestId"] == nil {
			t.Errorf("%d without the error envelope: %s", r.Status, r.Raw)
		}
	}
	if h := r.Header.Get("Retry-After"); h != "" {
		n, err := strconv.Atoi(h)
		s.Retry = err == nil && n >= 1 && n <= maxRetry
		if !s.Retry {
			t.Errorf("Retry-After = %q, want 1-%d", h, maxRetry)
		}
	}
	return s
}

// Row 7 of issue 26: wrong credentials are counted per client address. Past
// the limit (here 4 an hour, so one comes back every 15 minutes), the operator
// token is refused outright, the right one included, on the monitor and at the
// dashboard's sign-in alike; wrong API keys are counted apart and answered 429,
// while right keys from the address still work. X-Forwarded-For is believed
// only from a trusted proxy.
func TestWrongCredentialsAreThrottled(t *testing.T) {
	const token = "operator-token-under-guessing"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.OperatorToken, c.AuthFailureLimit = token, "4/h"
	}})
	const maxRetry = 15 * 60
	basic := func(pass string, headers ...string) seenLimit {
		return lookLimit(t, monitorCall(e, e.Server.URL, "GET", "/monitoring/api/queues", nil, append([]string{"Authorization", basicAuth(pass)}, headers...)...), maxRetry)
	}
	signIn := func(cred string) seenLimit {
		return lookLimit(t, e.Do("POST", "/dashboard/session", "", map[string]string{"key": cred}), maxRetry)
	}
	unauthorized := seenLimit{Status: 401, Code: "authentication_required"}
	limited := seenLimit{Status: 429, Code: "rate_limited", Retry: true}

	var got, want []seenLimit
	got = append(got, basic(token)) // a right credential spends nothing
	want = append(want, seenLimit{Status: 200})
	for i := range 4 {
		if i%2 == 0 {
			got = append(got, basic("guess-"+strconv.Itoa(i)))
		} else {
			got = append(got, signIn("guess-"+strconv.Itoa(i)))
		}
		want = append(want, unauthorized)
	}
	got = append(got, basic("guess-5"), basic(token), signIn(token), signIn(e.NewKey("default", "*")))
	want = append(want, limited, limited, limited, limited)
	// No credential at all is not a guess: the browser's prompt still comes.
	got = append(got, lookLimit(t, e.Do("GET", "/monitoring/api/queues", "", nil), maxRetry))
	want = append(want, unauthorized)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operator credentials from one address (-want +got):\n%s", diff)
	}

	// API keys are counted apart: the operator's lock does not touch them,
	// and right keys keep working past the keys' own limit.
	got, want = nil, nil
	for i := range 4 {
		if i%2 == 0 {
			got = append(got, lookLimit(t, e.Do("GET", "/v1/ping", "sb_live_wrong"+strconv.Itoa(i), nil), maxRetry))
		} else {
			got = append(got, lookLimit(t, e.Do("POST", "/graphql", "sb_live_wrong"+strconv.Itoa(i), map[string]any{"query": "{ ping { ok } }"}), maxRetry))
		}
		want = append(want, unauthorized)
	}
	got = append(got, lookLimit(t, e.Do("GET", "/v1/ping", "sb_live_wrong5", nil), maxRetry),
		lookLimit(t, e.Do("POST", "/graphql", "not-even-a-key", map[string]any{"query": "{ ping { ok } }"}), maxRetry),
		lookLimit(t, e.Do("GET", "/v1/ping", e.Key, nil), maxRetry),
		lookLimit(t, e.Do("GET", "/v1/ping", "", nil), maxRetry))
	want = append(want, limited, limited, seenLimit{Status: 200}, unauthorized)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("API keys from one address (-want +got):\n%s", diff)
	}

	// Without a trusted proxy, X-Forwarded-For is the client's to write and is
	// ignored: it opens no fresh budget.
	if s := basic("guess-6", "X-Forwarded-For", "203.0.113.50"); s != limited {
		t.Errorf("a forged X-Forwarded-For = %+v, want still limited", s)
	}
}

// Behind a trusted proxy each client has its own budget, named by the nearest
// untrusted address of X-Forwarded-For (what the client wrote further left is
// not believed), and an IPv6 client by its /64.
func TestWrongCredentialsBehindATrustedProxy(t *testing.T) {
	const token = "operator-token-behind-proxies"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.OperatorToken, c.AuthFailureLimit = token, "2/h"
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	}})
	guess := func(xff ...string) int {
		req, _ := http.NewRequest("GET", e.Server.URL+"/monitoring/api/queues", nil)
		req.Header.Set("Authorization", basicAuth("guess"))
		for _, v := range xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		return e.Send(req).Status
	}
	type step struct {
		xff  []string
		want int
	}
	for i, s := range []step{
		{[]string{"203.0.113.1"}, 401},
		{[]string{"203.0.113.1, 10.1.2.3"}, 401}, // through a second trusted proxy: still 203.0.113.1
		{[]string{"203.0.113.1"}, 429},
		{[]string{"198.51.100.9, 203.0.113.1"}, 429},   // a forged hop further left is not believed
		{[]string{"198.51.100.9", "203.0.113.1"}, 429}, // nor in a header of its own
		{[]string{"203.0.113.2"}, 401},                 // another client
		{[]string{"2001:db8:1:2::1"}, 401},
		{[]string{"2001:db8:1:2::ffff"}, 401},
		{[]string{"2001:db8:1:2:abcd::7"}, 429}, // the same /64
		{[]string{"2001:db8:1:3::1"}, 401},      // another /64
		{nil, 401},                              // the proxy's own requests
		{[]string{"not an address"}, 401},       // taken for the proxy's own: 2 in that budget now
		{[]string{"also bad"}, 429},
	} {
		if got := guess(s.xff...); got != s.want {
			t.Errorf("step %d, X-Forwarded-For %q = %d, want %d", i, s.xff, got, s.want)
		}
	}
}

// Row 12 of issue 26: the keys of one workspace share its allowance, beside
// each key's own; another workspace is not touched. The headers show whichever
// limit allows fewer requests now.
func TestRateLimitPerWorkspace(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.RateLimit, c.RateBurst = "5/m", 3
		c.WorkspaceRateLimit, c.WorkspaceRateBurst = "6/m", 4
	}})
	a, b := e.NewKey("default", "*"), e.NewKey("default", "*")
	other := e.NewKey("other", "*")
	ping := func(key string) seenLimit { return lookLimit(t, e.Do("GET", "/v1/ping", key, nil), 12) }
	got := []seenLimit{ping(a), ping(a), ping(a), ping(b),
		lookLimit(t, e.Do("POST", "/graphql", b, map[string]any{"query": "{ ping { ok } }"}), 12), ping(other)}
	want := []seenLimit{
		{200, "", "5", "2", false}, // the key: 2 left; the workspace: 3
		{200, "", "5", "1", false},
		{200, "", "5", "0", false},
		{200, "", "6", "0", false}, // b has 2 left, the workspace none
		{429, "rate_limited", "6", "0", true},
		{200, "", "5", "2", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	r := e.Do("GET", "/v1/ping", b, nil)
	if msg, _ := r.Error()["message"].(string); r.Status != 429 || !strings.Contains(msg, "workspace") {
		t.Errorf("the workspace's 429 does not say so: %d %s", r.Status, r.Raw)
	}
}

// Row 12 of issue 26: the routes that take no key are limited per client
// address, each group on its own: public media and music files, the dashboard's
// sign-in, the engine upgrade. Routes with a key are not counted there.
func TestRateLimitPerAddressOnOpenRoutes(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.AddressRateLimit, c.AddressRateBurst = "3/m", 3
	}})
	status := func(method, path string, body any) int { return e.Do(method, path, "", body).Status }
	type seen struct{ Media, Music, SignIn, Connect []int }
	var got seen
	for range 3 {
		got.Media = append(got.Media, status("GET", "/media/nope", nil))
	}
	got.Music = append(got.Music, status("HEAD", music.FilesPrefix+"nope.mp3", nil)) // the same group as media
	for range 4 {
		got.SignIn = append(got.SignIn, status("POST", "/dashboard/session", map[string]string{"key": e.Key}))
		got.Connect = append(got.Connect, status("GET", "/v1/engines/connect", nil))
	}
	want := seen{Media: []int{404, 404, 404}, Music: []int{429}, SignIn: []int{201, 201, 201, 429}}
	want.Connect = append(got.Connect[:3:3], 429)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	for _, c := range got.Connect[:3] {
		if c == 429 || c >= 500 {
			t.Errorf("engine upgrades within the limit: %v", got.Connect)
		}
	}
	r := e.Do("GET", "/media/nope", "", nil)
	if s := lookLimit(t, r, 20); s.Status != 429 || s.Code != "rate_limited" || !s.Retry {
		t.Errorf("media past the limit = %+v", s)
	}
	for range 5 {
		if r := e.Do("GET", "/v1/ping", e.Key, nil); r.Status != 200 {
			t.Fatalf("a route with a key = %d: counted per address", r.Status)
		}
	}
}
