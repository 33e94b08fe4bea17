package rest_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
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
			if tt.want == 403 && (r.Error()["code"] != "insufficient_scope" || len(r.DetailPaths()) == 0) {
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
