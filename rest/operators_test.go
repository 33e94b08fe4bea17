package rest_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/dashboard"
)

// basicAuth is the Authorization header of HTTP Basic authentication with pass.
func basicAuth(pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("op:"+pass))
}

// monitorCall sends method to the monitor's path on base with a text/plain body
// (what a cross-origin form or fetch may send without a preflight), the cookie
// when not nil and headers (name, value pairs).
func monitorCall(e *apptest.Env, base, method, path string, cookie *http.Cookie, headers ...string) *apptest.Response {
	e.T.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader("x"))
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.Send(req)
}

const (
	pausePath  = "/monitoring/api/queues/messages:pause"
	resumePath = "/monitoring/api/queues/messages:resume"
)

// Row 5 of issue 26: an operator's dashboard session is bound to the operator
// token it was opened with. After a restart with a rotated token (same database,
// same Redis), the old cookie no longer opens the monitor or the session, while
// on a process still holding the old token it does.
func TestOperatorSessionEndsWithItsToken(t *testing.T) {
	const old, rotated = "operator-token-before-rotation-1", "operator-token-after-rotation-22"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.OperatorToken = old
		if c.RedisURL == "" { // the embedded Redis dies with its process: share one instead
			c.RedisURL = "redis://" + miniredis.RunT(t).Addr()
		}
	}})
	cookie, _ := signIn(t, e, old)
	self := e.Server.URL
	if r := monitorCall(e, self, "POST", pausePath, cookie, "Origin", self); r.Status != 204 {
		t.Fatalf("pause with the session before the rotation = %d %s", r.Status, r.Raw)
	}
	if r := monitorCall(e, self, "POST", resumePath, cookie, "Origin", self); r.Status != 204 {
		t.Fatalf("resume with the session before the rotation = %d %s", r.Status, r.Raw)
	}

	// The restart: the same database and Redis, a new token.
	cfg := e.Config
	cfg.OperatorToken = rotated
	restarted, err := app.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(restarted.Handler)
	t.Cleanup(func() { srv.Close(); restarted.Close() })

	if r := monitorCall(e, srv.URL, "POST", pausePath, cookie, "Origin", srv.URL); r.Status != 401 || r.Error()["code"] != "authentication_required" {
		t.Errorf("pause with the old token's session after the rotation = %d %s, want 401", r.Status, r.Raw)
	}
	if r := withSession(e, "GET", "/dashboard/session", cookie, "", ""); r.Status != 200 {
		t.Errorf("the session on the process that still holds its token = %d", r.Status)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/dashboard/session", nil)
	req.AddCookie(cookie)
	if r := e.Send(req); r.Status != 401 {
		t.Errorf("GET /dashboard/session with the old token's session after the rotation = %d %s", r.Status, r.Raw)
	}
	// The new token signs in on the restarted process.
	r := monitorCall(e, srv.URL, "GET", "/monitoring/api/queues", nil, "Authorization", basicAuth(rotated))
	if r.Status != 200 {
		t.Errorf("the rotated token = %d", r.Status)
	}
}

// Row 6 of issue 26: no state-changing monitor call is taken from another
// origin, whatever the credential (the session cookie or Basic credentials a
// browser replays by itself), and a cookie call must prove its origin; the
// monitor and the dashboard cannot be framed.
func TestMonitorRefusesCrossOriginCalls(t *testing.T) {
	const token = "operator-token-for-origin-check"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.OperatorToken = token }})
	cookie, _ := signIn(t, e, token)
	self := e.Server.URL
	const evil = "https://evil.example"
	basic := basicAuth(token)
	tests := []struct {
		name    string
		cookie  bool
		headers []string
		want    int
	}{
		{"cookie, cross-origin text/plain POST", true, []string{"Origin", evil}, 403},
		{"Basic, cross-origin text/plain POST", false, []string{"Authorization", basic, "Origin", evil}, 403},
		{"Bearer, cross-origin", false, []string{"Authorization", "Bearer " + token, "Origin", evil}, 403},
		{"cookie, Sec-Fetch-Site cross-site", true, []string{"Sec-Fetch-Site", "cross-site", "Origin", evil}, 403},
		{"cookie, Sec-Fetch-Site same-site", true, []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"Basic, Sec-Fetch-Site cross-site only", false, []string{"Authorization", basic, "Sec-Fetch-Site", "cross-site"}, 403},
		{"cookie, Origin null", true, []string{"Origin", "null"}, 403},
		{"cookie, cross-origin Referer only", true, []string{"Referer", evil + "/page"}, 403},
		{"cookie, no Origin, Sec-Fetch-Site or Referer", true, nil, 403},
		{"cookie, same origin", true, []string{"Origin", self}, 204},
		{"cookie, Sec-Fetch-Site same-origin", true, []string{"Sec-Fetch-Site", "same-origin", "Origin", self}, 204},
		{"cookie, same-origin Referer only", true, []string{"Referer", self + "/monitoring/queues"}, 204},
		{"Basic, same origin", false, []string{"Authorization", basic, "Origin", self}, 204},
		{"Basic without browser headers (curl)", false, []string{"Authorization", basic}, 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *http.Cookie
			if tt.cookie {
				c = cookie
			}
			r := monitorCall(e, self, "POST", pausePath, c, tt.headers...)
			if r.Status != tt.want {
				t.Errorf("pause = %d %s, want %d", r.Status, r.Raw, tt.want)
			}
			if tt.want == 403 && (r.Error()["code"] != "csrf_required" || len(r.DetailPaths()) == 0) {
				t.Errorf("refusal is not the error envelope with details: %s", r.Raw)
			}
			// The queue is paused exactly when the call was taken: the operator's
			// own pause succeeds only on a running queue.
			if r.Status != 204 {
				if r := monitorCall(e, self, "POST", pausePath, nil, "Authorization", basic); r.Status != 204 {
					t.Errorf("the refused call paused the queue: the operator's pause = %d %s", r.Status, r.Raw)
				}
			}
			if r := monitorCall(e, self, "POST", resumePath, nil, "Authorization", basic); r.Status != 204 {
				t.Fatalf("resume = %d %s", r.Status, r.Raw)
			}
		})
	}
	// Reads stay open cross-origin (they change nothing, and the cookie is SameSite=Strict).
	if r := monitorCall(e, self, "GET", "/monitoring/api/queues", cookie, "Origin", evil); r.Status != 200 {
		t.Errorf("cross-origin read = %d", r.Status)
	}

	// Not framable: the monitor's page and API, the dashboard's pages and session.
	for _, tc := range []struct {
		path   string
		cookie *http.Cookie
	}{{"/monitoring/", cookie}, {"/monitoring/api/queues", cookie}, {"/monitoring/", nil}, {"/dashboard/", nil}, {"/dashboard/session", cookie}, {"/dashboard/session", nil}} {
		r := monitorCall(e, self, "GET", tc.path, tc.cookie)
		if r.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("GET %s (%d): X-Frame-Options %q, Content-Security-Policy %q", tc.path, r.Status,
				r.Header.Get("X-Frame-Options"), r.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestHostileInputsOnOperatorRoutes sends hostile paths, methods, bodies,
// credentials and headers to the dashboard's and the monitor's routes, with
// every kind of credential they take: no answer is a 500, every answer is not
// framable, and every error of ours (the dashboard's, and the monitor's guard:
// 401, 403, 429) is the error envelope. The limits per address are on, with a
// trusted proxy, so that hostile X-Forwarded-For values are read too.
func TestHostileInputsOnOperatorRoutes(t *testing.T) {
	const token = "operator-token-of-the-hostile-test"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.OperatorToken = token
		c.AuthFailureLimit, c.AddressRateLimit, c.AddressRateBurst = "100000/s", "100000/s", 100000
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	}})
	self := e.Server.URL
	opCookie, opCSRF := signIn(t, e, token)
	keyCookie, keyCSRF := signIn(t, e, e.NewKey("default", "*"))
	opKey := e.NewKey("ops", "operator")

	// Credentials, as header pairs (a cookie is sent as a Cookie header).
	cookie := func(v string) string { return dashboard.CookieName + "=" + v }
	basicRaw := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	creds := [][]string{
		nil,
		{"Authorization", basicAuth(token)},
		{"Authorization", "Bearer " + token},
		{"Cookie", cookie(opCookie.Value), dashboard.CSRFHeader, opCSRF},
		{"Cookie", cookie(opCookie.Value)},
		{"Cookie", cookie(keyCookie.Value), dashboard.CSRFHeader, keyCSRF},
		{"Authorization", "Bearer " + opKey},
		{"Authorization", basicAuth(opKey)},
		{"Authorization", "Bearer " + e.Key},
		{"Authorization", "Basic %%%"},
		{"Authorization", basicRaw("no colon at all")},
		{"Authorization", basicRaw("\xff\xfe:\x00\x01")},
		{"Authorization", "Bearer sb_live_\xff\xfe" + strings.Repeat("x", 5000)},
		{"Cookie", cookie("")},
		{"Cookie", cookie("%00%FF")},
		{"Cookie", cookie("\xff\xfe")},
		{"Cookie", cookie(strings.Repeat("a", 5000))},
		{"Cookie", cookie(opCookie.Value) + "; " + cookie("second")},
		{"Authorization", basicAuth("guess"), "Cookie", cookie(opCookie.Value)},
	}
	// Browser headers, hostile and not.
	browser := [][]string{
		nil,
		{"Origin", self},
		{"Origin", "null"},
		{"Origin", "http://[::1"},
		{"Origin", "\xff\xfe://x"},
		{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "\xff"},
		{"Referer", "%zz"},
		{"Referer", "http://["},
		{"Referer", self + "/monitoring/"},
		{"X-Forwarded-For", "not an ip"},
		{"X-Forwarded-For", "203.0.113.1, [::1], ::ffff:1.2.3.4, fe80::1%eth0"},
		{"X-Forwarded-For", strings.Repeat("198.51.100.1,", 2000)},
		{"Content-Type", "text/plain", "Origin", "https://evil.example"},
		{"Content-Type", "application/json; charset=\xff"},
	}
	var paths []string
	for _, p := range []string{"/monitoring", "/monitoring/", "/monitoring/api/queues", "/monitoring/api/queue_stats",
		"/monitoring/api/servers", "/monitoring/api/scheduler_entries", "/monitoring/api/redis_info",
		"/metrics", "/dashboard", "/dashboard/", "/dashboard/session", "/dashboard/engines"} {
		paths = append(paths, p)
	}
	for _, h := range hostile {
		paths = append(paths, "/monitoring/"+h, "/monitoring/api/queues/"+h, "/monitoring/api/queues/"+h+":pause",
			"/monitoring/api/queues/messages/pending_tasks/"+h, "/monitoring/api/queues/"+h+"/archived_tasks:delete_all",
			"/monitoring/api/queues/messages/scheduled_tasks/"+h+":run", "/monitoring/api/queues/messages/tasks/"+h,
			"/monitoring/api/scheduler_entries/"+h+"/enqueue_events", "/monitoring/api/queues/messages/groups/"+h+"/aggregating_tasks",
			"/dashboard/"+h, "/dashboard/assets/"+h, "/dashboard/session?x="+h, "/monitoring/api/queues?page="+h+"&size="+h)
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND"}
	bodies := append([]string{"", `{"task_ids":["\u0000","` + strings.Repeat("x", 3000) + `"]}`, `{"key":"` + token + `"}`,
		`{"key":"\u0000"}`, `{"key":["x"]}`}, hostileBodies...)

	n := 0
	check := func(method, path, body string, headers []string) {
		t.Helper()
		n++
		req, err := http.NewRequest(method, self+path, strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Add(headers[i], headers[i+1])
		}
		r := e.Send(req)
		if r.Status >= 500 {
			t.Errorf("%s %.100s %v %.40s = %d: %.200s", method, path, redactHeaders(headers), body, r.Status, r.Raw)
		}
		ours := strings.HasPrefix(path, "/dashboard") || strings.HasPrefix(path, "/metrics") ||
			r.Status == 401 || r.Status == 403 || r.Status == 429
		if r.Status >= 400 && method != "HEAD" && ours && (r.Body["success"] != false || r.Error()["code"] == nil || r.Error()["requestId"] == nil) {
			t.Errorf("%s %.100s %v = %d without the error envelope: %.200s", method, path, redactHeaders(headers), r.Status, r.Raw)
		}
		if (strings.HasPrefix(path, "/dashboard") || strings.HasPrefix(path, "/monitoring")) && r.Status != 404 && r.Status != 405 &&
			r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %.100s = %d without X-Frame-Options", method, path, r.Status)
		}
	}
	for i, p := range paths {
		for j, m := range methods {
			headers := append(append([]string{}, creds[(i+j)%len(creds)]...), browser[(i*3+j)%len(browser)]...)
			body := ""
			if m != "GET" && m != "HEAD" {
				body = bodies[(i+j)%len(bodies)]
			}
			check(m, p, body, headers)
		}
	}
	// Every credential and browser header on the calls that change state.
	for _, c := range creds {
		for _, b := range browser {
			headers := append(append([]string{}, c...), b...)
			check("POST", "/monitoring/api/queues/hostile:pause", "", headers)
			check("POST", "/monitoring/api/queues/hostile:resume", "x", headers)
			check("DELETE", "/monitoring/api/queues/hostile/archived_tasks:delete_all", "", headers)
			check("POST", "/dashboard/session", `{"key":"`+token+`"}`, b)
			check("DELETE", "/dashboard/session", "", headers)
		}
	}
	t.Logf("%d hostile requests to the dashboard and the monitor", n)

	// asynqmon's own 500s for what does not exist or cannot be done now are
	// answered with the status they mean.
	op := []string{"Authorization", basicAuth(token)}
	for _, tc := range []struct {
		method, path string
		want         int
		code         string
	}{
		{"GET", "/monitoring/api/queues/no-such-queue", 404, "not_found"},
		{"GET", "/monitoring/api/queues/messages/tasks/no-such-task", 404, ""}, // asynqmon's own 404
		{"POST", "/monitoring/api/queues/messages:pause", 204, ""},
		{"POST", "/monitoring/api/queues/messages:pause", 409, "conflict"},
		{"POST", "/monitoring/api/queues/messages:resume", 204, ""},
		{"POST", "/monitoring/api/queues/messages:resume", 409, "conflict"},
	} {
		r := monitorCall(e, self, tc.method, tc.path, nil, op...)
		if r.Status != tc.want || tc.code != "" && r.Error()["code"] != tc.code {
			t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, r.Status, r.Raw, tc.want, tc.code)
		}
	}
}

// redactHeaders shortens header values for a failure's message.
func redactHeaders(h []string) []string {
	out := make([]string, len(h))
	for i, v := range h {
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		out[i] = v
	}
	return out
}
