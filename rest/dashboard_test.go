package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/dashboard"
)

// signIn opens a dashboard session with credential and returns its cookie and
// CSRF token.
func signIn(t *testing.T, e *apptest.Env, credential string) (*http.Cookie, string) {
	t.Helper()
	r := e.Do("POST", "/dashboard/session", "", map[string]string{"key": credential})
	if r.Status != http.StatusCreated {
		t.Fatalf("sign in = %d %s", r.Status, r.Raw)
	}
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == dashboard.CookieName {
			return c, r.Body["csrf"].(string)
		}
	}
	t.Fatalf("sign in set no %s cookie: %v", dashboard.CookieName, r.Header)
	return nil, ""
}

// withSession sends a request with the session's cookie and, unless empty, its
// CSRF token.
func withSession(e *apptest.Env, method, path string, c *http.Cookie, csrf string, body string) *apptest.Response {
	e.T.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
	if err != nil {
		e.T.Fatal(err)
	}
	req.AddCookie(c)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if csrf != "" {
		req.Header.Set(dashboard.CSRFHeader, csrf)
	}
	return e.Send(req)
}

// The dashboard is served from the binary: every page path answers the page, its
// assets are files, and a missing asset is the error envelope.
func TestDashboardPages(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/dashboard", "/dashboard/", "/dashboard/engines", "/dashboard/boards/brd_1/items/itm_2"} {
		r := e.Do("GET", path, "", nil)
		if r.Status != 200 || !strings.Contains(string(r.Raw), "/dashboard/assets/app.js") {
			t.Errorf("GET %s = %d %.80s", path, r.Status, r.Raw)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	if r := e.Do("GET", "/dashboard/assets/app.js", "", nil); r.Status != 200 || !strings.Contains(r.Header.Get("Content-Type"), "javascript") {
		t.Errorf("app.js = %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, path := range []string{"/dashboard/assets/nope.js", "/dashboard/assets/../../go.mod", "/dashboard/assets/"} {
		if r := e.Do("GET", path, "", nil); r.Status != 404 || r.Error()["code"] != "not_found" {
			t.Errorf("GET %s = %d %s", path, r.Status, r.Raw)
		}
	}
}

// A key is exchanged for an HttpOnly, SameSite=Strict cookie that GraphQL
// accepts only with the session's CSRF token; REST stays key-only; revoking the
// key ends the session; signing out ends it too.
func TestDashboardSession(t *testing.T) {
	e := newEnv(t)
	admin := e.NewKey("default", "*")

	if r := e.Do("POST", "/dashboard/session", "", map[string]string{"key": "sb_live_unknown"}); r.Status != 401 {
		t.Errorf("unknown key = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/dashboard/session", "", map[string]string{}); r.Status != 422 || !cmp.Equal(r.DetailPaths(), []string{"key"}) {
		t.Errorf("no key = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/dashboard/session", "", `{"key": 7}`); r.Status != 400 {
		t.Errorf("key of the wrong type = %d %s", r.Status, r.Raw)
	}

	key := e.NewKey("default", "account:read", "messages:read")
	r := e.Do("POST", "/dashboard/session", "", map[string]string{"key": key})
	if r.Status != 201 {
		t.Fatalf("sign in = %d %s", r.Status, r.Raw)
	}
	setCookie := r.Header.Get("Set-Cookie")
	for _, want := range []string{dashboard.CookieName + "=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}
	if strings.Contains(string(r.Raw), key) || strings.Contains(setCookie, key) {
		t.Error("the key came back to the browser")
	}
	if got := r.Body["scopes"]; !cmp.Equal(got, []any{"account:read", "messages:read"}) {
		t.Errorf("scopes = %v", got)
	}
	cookie, csrf := signIn(t, e, key)

	const query = `{"query": "{ account { name } }"}`
	if r := withSession(e, "POST", "/graphql", cookie, "", query); r.Status != 403 || r.Error()["code"] != "csrf_required" {
		t.Errorf("GraphQL without the CSRF token = %d %s", r.Status, r.Raw)
	}
	if r := withSession(e, "POST", "/graphql", cookie, "wrong", query); r.Status != 403 || r.Error()["code"] != "csrf_required" {
		t.Errorf("GraphQL with a wrong CSRF token = %d %s", r.Status, r.Raw)
	}
	if r := withSession(e, "POST", "/graphql", cookie, csrf, query); r.Status != 200 || !strings.Contains(string(r.Raw), `"name":"default"`) {
		t.Errorf("GraphQL with the session = %d %s", r.Status, r.Raw)
	}
	if r := withSession(e, "GET", "/v1/account", cookie, csrf, ""); r.Status != 401 {
		t.Errorf("REST with a session = %d: REST takes keys only", r.Status)
	}
	if r := withSession(e, "GET", "/dashboard/session", cookie, "", ""); r.Status != 200 || r.Body["csrf"] != csrf {
		t.Errorf("GET session = %d %s", r.Status, r.Raw)
	}

	// Revoking the key (here through GraphQL, as the Keys page does) ends its sessions.
	id := keyID(t, e, admin, key)
	if res := gql(e, admin, `mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }`, map[string]any{"id": id}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	e.Eventually(3*time.Second, "the revoked key's session to end", func() bool {
		return withSession(e, "POST", "/graphql", cookie, csrf, query).Status == 401
	})
	if r := withSession(e, "GET", "/dashboard/session", cookie, "", ""); r.Status != 401 {
		t.Errorf("session of a revoked key = %d", r.Status)
	}

	// Signing out needs the CSRF token, ends the session and clears the cookie.
	cookie, csrf = signIn(t, e, admin)
	if r := withSession(e, "DELETE", "/dashboard/session", cookie, "", ""); r.Status != 403 {
		t.Errorf("sign out without the CSRF token = %d", r.Status)
	}
	r = withSession(e, "DELETE", "/dashboard/session", cookie, csrf, "")
	if r.Status != 204 || !strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=0") && !strings.Contains(r.Header.Get("Set-Cookie"), "Expires=Thu, 01 Jan 1970") {
		t.Errorf("sign out = %d, Set-Cookie %q", r.Status, r.Header.Get("Set-Cookie"))
	}
	if r := withSession(e, "POST", "/graphql", cookie, csrf, query); r.Status != 401 {
		t.Errorf("GraphQL after sign out = %d", r.Status)
	}
}

// keyID finds the id of key through apiKeyList, by its prefix.
func keyID(t *testing.T, e *apptest.Env, admin, key string) string {
	t.Helper()
	res := gql(e, admin, `query($p: String) { apiKeyList(prefix: $p) { total items { id prefix } } }`, map[string]any{"p": key[:12]})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	items := res.Data["apiKeyList"].(map[string]any)["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("apiKeyList(prefix %s) = %v", key[:12], items)
	}
	return items[0].(map[string]any)["id"].(string)
}

// API keys through GraphQL: a key is created only with scopes its creator holds,
// listed by prefix within its workspace, and another workspace sees none of it.
func TestAPIKeysThroughGraphQL(t *testing.T) {
	e := newEnv(t)
	all := e.NewKey("default", "*")
	limited := e.NewKey("default", "keys:read", "keys:write", "messages:read")
	reader := e.NewKey("default", "messages:read")
	other := e.NewKey("other", "*")
	const create = `mutation($in: APIKeyInput!) { createApiKey(input: $in) { key apiKey { id name prefix scopes revokedAt } } }`

	type outcome struct{ Code, Paths string }
	cases := []struct {
		name   string
		key    string
		scopes []string
		want   outcome
	}{
		{"all may give *", all, []string{"*"}, outcome{}},
		{"all may give workspace scopes", all, []string{"messages:write", "chats:read", "messages:write"}, outcome{}},
		{"* does not give operator", all, []string{"operator"}, outcome{"insufficient_scope", "scopes[0]"}},
		{"limited gives what it holds", limited, []string{"messages:read"}, outcome{}},
		{"limited cannot give more", limited, []string{"messages:read", "chats:read", "*"}, outcome{"insufficient_scope", "scopes[1],scopes[2]"}},
		{"unknown scope", all, []string{"messages:read", "root"}, outcome{"validation_failed", "scopes[1]"}},
		{"no scope", all, []string{}, outcome{"validation_failed", "scopes"}},
		{"keys:write is needed", reader, []string{"messages:read"}, outcome{"insufficient_scope", "scope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := gql(e, tc.key, create, map[string]any{"in": map[string]any{"name": tc.name, "scopes": tc.scopes}})
			var got outcome
			if len(res.Errors) > 0 {
				got.Code, _ = res.Errors[0].Extensions["code"].(string)
				var paths []string
				details, _ := res.Errors[0].Extensions["details"].([]any)
				for _, d := range details {
					paths = append(paths, d.(map[string]any)["path"].(string))
				}
				got.Paths = strings.Join(paths, ",")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("createApiKey(%v) (-want +got):\n%s", tc.scopes, diff)
			}
			if got.Code != "" {
				return
			}
			created := res.Data["createApiKey"].(map[string]any)
			newKey := created["key"].(string)
			if !strings.HasPrefix(newKey, created["apiKey"].(map[string]any)["prefix"].(string)) {
				t.Errorf("prefix %v is not the key's", created["apiKey"])
			}
			if r := e.Do("GET", "/v1/ping", newKey, nil); r.Status != 200 {
				t.Errorf("the new key does not work: %d", r.Status)
			}
		})
	}

	// Listing: by prefix, in the workspace only; keys:read is needed.
	res := gql(e, all, `{ apiKeyList(limit: 200) { total items { id prefix scopes } } }`, nil)
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if total := res.Data["apiKeyList"].(map[string]any)["total"].(float64); total != 7 { // 3 made here + 4 created above
		t.Errorf("default's keys = %v, want 7", total)
	}
	if res := gql(e, all, `{ apiKeyList { items { hash } } }`, nil); len(res.Errors) == 0 {
		t.Error("a key's hash can be queried")
	}
	if res := gql(e, reader, `{ apiKeyList { total } }`, nil); len(res.Errors) == 0 || res.Errors[0].Extensions["code"] != "insufficient_scope" {
		t.Errorf("apiKeyList without keys:read = %+v", res)
	}
	if res := gql(e, all, `{ apiKeyList(prefix: "nope") { total } }`, nil); res.Data["apiKeyList"].(map[string]any)["total"].(float64) != 0 {
		t.Errorf("prefix nope matched keys: %+v", res.Data)
	}
	if res := gql(e, other, `{ apiKeyList { total } }`, nil); res.Data["apiKeyList"].(map[string]any)["total"].(float64) != 1 {
		t.Errorf("other workspace sees %v keys, want its own 1", res.Data)
	}

	// Another workspace cannot revoke default's keys; revoking is idempotent.
	id := keyID(t, e, all, reader)
	if res := gql(e, other, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, map[string]any{"id": id}); len(res.Errors) == 0 || res.Errors[0].Extensions["code"] != "not_found" {
		t.Errorf("cross-workspace revoke = %+v", res)
	}
	if r := e.Do("GET", "/v1/scheduled-messages", reader, nil); r.Status != 200 {
		t.Errorf("a key another workspace tried to revoke = %d", r.Status)
	}
	for range 2 {
		if res := gql(e, all, `mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }`, map[string]any{"id": id}); len(res.Errors) > 0 || res.Data["revokeApiKey"].(map[string]any)["revokedAt"] == nil {
			t.Errorf("revoke = %+v", res)
		}
	}
	e.Eventually(3*time.Second, "the revoked key to be refused", func() bool {
		return e.Do("GET", "/v1/scheduled-messages", reader, nil).Status == 401
	})
	if res := gql(e, limited, `{ grantableScopes }`, nil); !cmp.Equal(res.Data["grantableScopes"], []any{"messages:read", "keys:read", "keys:write"}) {
		t.Errorf("grantableScopes of limited = %v", res.Data["grantableScopes"])
	}
}

// The operator's tools open with a session too: the operator token's session
// opens the read-write monitor, a key with the operator scope the read-only one,
// and a workspace's key none; the operator's session has no workspace for GraphQL.
func TestMonitorWithDashboardSession(t *testing.T) {
	const token = "operator-secret-token-for-sessions"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.OperatorToken = token }})
	cookie, csrf := signIn(t, e, token)
	if r := withSession(e, "GET", "/monitoring/", cookie, "", ""); r.Status != 200 {
		t.Errorf("monitor with the operator's session = %d", r.Status)
	}
	if r := withSession(e, "POST", "/graphql", cookie, csrf, `{"query": "{ account { name } }"}`); r.Status != 403 {
		t.Errorf("GraphQL with the operator's session = %d %s", r.Status, r.Raw)
	}
	cookie, _ = signIn(t, e, e.NewKey("default", "*"))
	if r := withSession(e, "GET", "/monitoring/", cookie, "", ""); r.Status != 403 {
		t.Errorf("monitor with a workspace key's session = %d", r.Status)
	}
	cookie, _ = signIn(t, e, e.NewKey("default", "operator"))
	if r := withSession(e, "GET", "/monitoring/", cookie, "", ""); r.Status != 200 {
		t.Errorf("monitor with an operator key's session = %d", r.Status)
	}
}

// GET / sends a browser to the dashboard; an API client (and every other unknown
// path) keeps the API's 404 envelope.
func TestRootLeadsBrowsersToTheDashboard(t *testing.T) {
	e := newEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method, path, accept string
		status               int
		location             string
	}{
		{"GET", "/", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", http.StatusFound, "/dashboard"},
		{"HEAD", "/", "text/html", http.StatusFound, "/dashboard"},
		{"GET", "/", "application/json", http.StatusNotFound, ""},
		{"GET", "/", "", http.StatusNotFound, ""},
		{"GET", "/", "text/html;q=0, application/json", http.StatusNotFound, ""},
		{"GET", "/nowhere", "text/html", http.StatusNotFound, ""},
	} {
		req, err := http.NewRequest(tc.method, e.Server.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s %s (Accept %q) = %d Location %q, want %d %q", tc.method, tc.path, tc.accept, resp.StatusCode, resp.Header.Get("Location"), tc.status, tc.location)
		}
		if tc.status == http.StatusNotFound && tc.method == "GET" {
			if e, _ := body["error"].(map[string]any); e == nil || e["code"] != "not_found" {
				t.Errorf("%s %s (Accept %q): body %v, want the not_found envelope", tc.method, tc.path, tc.accept, body)
			}
		}
	}
}
