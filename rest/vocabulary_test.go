package rest_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOneErrorVocabulary: the answers that used to leave the vocabulary (issue 26,
// row 13) carry a code of docs/errors.md, lowercase, with the HTTP status it
// maps to and, outside GraphQL's own errors, the error envelope: a GraphQL node
// that does not exist, a query that does not parse or validate, a POST /graphql
// that is not JSON, another method on /graphql, a 100 KB query string, 100 KB of
// headers, and a dashboard-session call without its CSRF header.
func TestOneErrorVocabulary(t *testing.T) {
	e := newEnv(t)
	doc, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := func(code string) bool { return strings.Contains(string(doc), "| `"+code+"` |") }

	type answer struct {
		Status int
		Code   string
	}
	graphQL := []struct {
		name, query string
		want        string
	}{
		{"node not found", `{ node(id: "wh_06h1cg97bb2aej4b6ckay5ndw0") { id } }`, "not_found"},
		{"node of no table", `{ node(id: "zzz") { id } }`, "not_found"},
		{"parse error", `{ account {`, "invalid_request"},
		{"validation error", `{ noSuchField }`, "invalid_request"},
	}
	for _, tt := range graphQL {
		t.Run(tt.name, func(t *testing.T) {
			res := gql(e, e.Key, tt.query, nil)
			if len(res.Errors) == 0 {
				t.Fatalf("no error: %+v", res.Data)
			}
			if got := res.Errors[0].Extensions["code"]; got != tt.want || !documented(tt.want) {
				t.Errorf("code = %v, want %s: %+v", got, tt.want, res.Errors)
			}
		})
	}

	cookie, _ := signIn(t, e, e.Key)
	long := strings.Repeat("a", 100<<10)
	envelope := []struct {
		name   string
		req    func() *http.Request
		want   answer
		header string
	}{
		{"POST /graphql as text/plain", func() *http.Request {
			r, _ := http.NewRequest("POST", e.Server.URL+"/graphql", strings.NewReader(`{ account { id } }`))
			r.Header.Set("Content-Type", "text/plain")
			return r
		}, answer{415, "unsupported_media_type"}, ""},
		{"PUT /graphql", func() *http.Request {
			r, _ := http.NewRequest("PUT", e.Server.URL+"/graphql", strings.NewReader(`{"query":"{ account { id } }"}`))
			r.Header.Set("Content-Type", "application/json")
			return r
		}, answer{405, "method_not_allowed"}, "Allow"},
		{"100 KB query string on /v1", func() *http.Request {
			r, _ := http.NewRequest("GET", e.Server.URL+"/v1/ping?x="+long, nil)
			return r
		}, answer{414, "uri_too_long"}, ""},
		{"100 KB query string on /graphql", func() *http.Request {
			r, _ := http.NewRequest("GET", e.Server.URL+"/graphql?query="+long, nil)
			return r
		}, answer{414, "uri_too_long"}, ""},
		{"100 KB of headers", func() *http.Request {
			r, _ := http.NewRequest("GET", e.Server.URL+"/v1/ping", nil)
			r.Header.Set("X-Padding", long)
			return r
		}, answer{431, "headers_too_large"}, ""},
		{"dashboard session without its CSRF header", func() *http.Request {
			r, _ := http.NewRequest("POST", e.Server.URL+"/graphql", strings.NewReader(`{"query":"{ account { id } }"}`))
			r.Header.Set("Content-Type", "application/json")
			r.AddCookie(cookie)
			return r
		}, answer{403, "csrf_required"}, ""},
	}
	for _, tt := range envelope {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req()
			if req.Header.Get("Cookie") == "" {
				req.Header.Set("Authorization", "Bearer "+e.Key)
			}
			resp := e.Send(req)
			got := answer{resp.Status, ""}
			if code, _ := resp.Error()["code"].(string); resp.Body["success"] == false && resp.Error()["requestId"] != nil {
				got.Code = code
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s%.300s", diff, resp.Raw)
			}
			if !documented(tt.want.Code) {
				t.Errorf("%s is not in docs/errors.md", tt.want.Code)
			}
			if tt.header != "" && resp.Header.Get(tt.header) == "" {
				t.Errorf("no %s header", tt.header)
			}
		})
	}
}
