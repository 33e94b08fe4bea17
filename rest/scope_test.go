package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// badRequest is a request that fails validation, whatever the route.
type badRequest struct {
	name, param, query, contentType, body string
}

var badRequests = []badRequest{
	{name: "no body", param: "x"},
	{name: "malformed JSON", param: "x", contentType: "application/json", body: `{"kind":`},
	{name: "unknown field", param: "x", contentType: "application/json", body: `{"unknownField":1}`},
	{name: "not JSON", param: "x", contentType: "text/plain", body: "hello"},
	{name: "broken multipart", param: "x", contentType: "multipart/form-data; boundary=zz", body: "--zz\r\nbroken"},
	{name: "NUL path parameter and bad query", param: "a%00b", query: "?limit=abc&skip=-1&chatId=%00"},
}

var paramRE = regexp.MustCompile(`\{[^}]+\}`)

// TestEveryRouteChecksItsScopeFirst walks every /v1 route of the router and calls
// it with a key holding every scope but the one the API reference names for it,
// with requests that fail validation (no body, malformed JSON, an unknown field, a
// body that is not JSON, broken multipart, a NUL path parameter and bad query
// values): every answer is 403 insufficient_scope naming the scope, so that
// authorization comes before validation on every route (issue 26, row 13). A key
// holding only that scope is never refused for it.
func TestEveryRouteChecksItsScopeFirst(t *testing.T) {
	e := newEnv(t)
	scopes := documentedScopes(t, e)
	keys := map[string][2]string{} // scope -> key without it, key with only it
	keysFor := func(scope string) (lacking, holding string) {
		if k, ok := keys[scope]; ok {
			return k[0], k[1]
		}
		var others []string
		for _, s := range switchboard.KnownScopes {
			if s != scope {
				others = append(others, s)
			}
		}
		k := [2]string{e.NewKey("default", others...), e.NewKey("default", scope)}
		keys[scope] = k
		return k[0], k[1]
	}
	routes, calls := 0, 0
	err := chi.Walk(e.App.Handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, "/v1/") || route == "/v1/engines/connect" || route == "/v1/engines/uploads/{token}" || route == "/v1/openapi.json" || route == "/v1/engines/protocol.json" {
			return nil
		}
		routes++
		scope, ok := scopes[method+" "+paramRE.ReplaceAllString(route, "{}")]
		if !ok {
			t.Errorf("%s %s has no scope in the API reference", method, route)
			return nil
		}
		if scope == "" {
			return nil // ping: any valid key
		}
		lacking, holding := keysFor(scope)
		for _, br := range badRequests {
			target := paramRE.ReplaceAllString(route, br.param) + br.query
			resp := send(e, method, target, lacking, br)
			calls++
			if resp.Status != 403 || resp.Error()["code"] != "insufficient_scope" || !strings.Contains(resp.Text(), scope) {
				t.Errorf("%s %s (%s) without %s = %d %.200s, want 403 insufficient_scope", method, target, br.name, scope, resp.Status, resp.Raw)
			}
			if resp := send(e, method, target, holding, br); resp.Status == 403 {
				t.Errorf("%s %s (%s) with only %s = 403 %.200s", method, target, br.name, scope, resp.Raw)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if routes < 80 {
		t.Errorf("walked only %d routes", routes)
	}
	t.Logf("%d routes, %d requests without the scope", routes, calls)
}

// documentedScopes maps "METHOD /v1/path" (parameters blanked to {}) of the API
// reference to the scope it names ("" for any valid key).
func documentedScopes(t *testing.T, e *apptest.Env) map[string]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Security []map[string][]string `json:"security"`
		} `json:"paths"`
	}
	resp := e.Do("GET", "/v1/openapi.json", "", nil)
	if err := json.Unmarshal(resp.Raw, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	out := map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range item {
			scope := ""
			for _, s := range op.Security {
				if len(s["bearerAuth"]) > 0 {
					scope = s["bearerAuth"][0]
				}
			}
			out[strings.ToUpper(method)+" "+paramRE.ReplaceAllString(path, "{}")] = scope
		}
	}
	if !slices.Contains(mapValues(out), "messages:write") {
		t.Fatalf("no scopes in the API reference: %v", out)
	}
	return out
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func send(e *apptest.Env, method, target, key string, br badRequest) *apptest.Response {
	e.T.Helper()
	req, err := http.NewRequest(method, e.Server.URL+target, bytes.NewReader([]byte(br.body)))
	if err != nil {
		e.T.Fatal(err)
	}
	if br.body == "" {
		req.Body, req.ContentLength = nil, 0
	}
	if br.contentType != "" {
		req.Header.Set("Content-Type", br.contentType)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return e.Send(req)
}
