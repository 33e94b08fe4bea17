package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
)

// loadOpenAPI fetches /v1/openapi.json without a key and loads and validates it.
func loadOpenAPI(t *testing.T, e *apptest.Env) (*openapi3.T, []byte) {
	t.Helper()
	resp := e.Do("GET", "/v1/openapi.json", "", nil)
	if resp.Status != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1/openapi.json = %d %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(resp.Raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	return doc, resp.Raw
}

var templateParam = regexp.MustCompile(`\{[^}]+\}`)

// normalize blanks the parameter names of a path template: chi routes
// /v1/messages/{chatId} beside /v1/messages/{id}, which the document (as OpenAPI
// requires) names alike.
func normalize(path string) string { return templateParam.ReplaceAllString(path, "{}") }

// TestOpenAPIDocument checks that the document validates and that its operations
// are exactly the routed /v1 operations, each with an id, summary, tag, the error
// envelope and (but ping's) a scope.
func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	doc, _ := loadOpenAPI(t, e)

	exempt := map[string]string{
		"GET /v1/engines/connect":         "the engine WebSocket protocol, authenticated by engine token",
		"PUT /v1/engines/uploads/{token}": "the engine protocol's upload slots, authenticated by engine token",
	}
	var routed []string
	err := chi.Walk(e.App.Handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, "/v1/") {
			return nil
		}
		key := method + " " + strings.TrimSuffix(route, "/")
		if _, ok := exempt[key]; !ok {
			routed = append(routed, method+" "+normalize(key[len(method)+1:]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented = append(documented, method+" "+normalize(path))
			where := method + " " + path
			if op.OperationID == "" || op.Summary == "" || len(op.Tags) != 1 {
				t.Errorf("%s: operationId %q, summary %q, tags %v", where, op.OperationID, op.Summary, op.Tags)
			}
			if ids[op.OperationID] {
				t.Errorf("%s: operationId %q used twice", where, op.OperationID)
			}
			ids[op.OperationID] = true
			if op.OperationID == "getOpenAPI" || op.OperationID == "getEngineProtocol" {
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s: security = %v, want none", where, op.Security)
				}
				continue
			}
			if op.OperationID != "ping" {
				if op.Security == nil || len(*op.Security) != 1 || len((*op.Security)[0]["bearerAuth"]) != 1 {
					t.Errorf("%s: security = %v, want one bearerAuth scope", where, op.Security)
				}
			}
			for _, status := range []string{"401", "429", "500"} {
				r := op.Responses.Value(status)
				if r == nil || r.Value == nil || r.Value.Content.Get("application/json") == nil {
					t.Errorf("%s: no %s error envelope", where, status)
				}
			}
		}
	}
	sort.Strings(routed)
	sort.Strings(documented)
	if diff := cmp.Diff(routed, documented); diff != "" {
		t.Errorf("routed (-) and documented (+) /v1 operations differ:\n%s", diff)
	}
	if len(routed) < 80 {
		t.Errorf("chi.Walk found only %d /v1 operations", len(routed))
	}

	// The bounds the code enforces.
	listEngines := doc.Paths.Find("/v1/engines").Get
	limit := listEngines.Parameters.GetByInAndName("query", "limit").Schema.Value
	if limit.Min == nil || *limit.Min != 1 || limit.Max == nil || *limit.Max != 200 {
		t.Errorf("limit bounds = %v..%v, want 1..200", limit.Min, limit.Max)
	}
}

// TestOpenAPIResponses calls the API and validates each answer's status and body
// against the document.
func TestOpenAPIResponses(t *testing.T) {
	e := newEnv(t)
	doc, _ := loadOpenAPI(t, e)
	doc.Servers = openapi3.Servers{{URL: e.Server.URL}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	reader := e.NewKey("default", "chats:read")

	ids := map[string]string{}
	sub := func(s string) string {
		for k, v := range ids {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	sendAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name, method, path, key string
		body                    any
		status                  int
		// save stores data.id (data.<field> for "name:field") under name for
		// later paths.
		save string
	}{
		{"document", "GET", "/v1/openapi.json", "none", nil, 200, ""},
		{"engine protocol schema", "GET", "/v1/engines/protocol.json", "none", nil, 200, ""},
		{"ping", "GET", "/v1/ping", "", nil, 200, ""},
		{"account", "GET", "/v1/account", "", nil, 200, ""},
		{"send message", "POST", "/v1/messages/+15550001515", "", map[string]any{"type": "text", "text": "hello"}, 201, ""},
		{"schedule", "POST", "/v1/scheduled-messages/+15550001516", "", map[string]any{"type": "text", "text": "later", "sendAt": sendAt}, 201, "msg"},
		{"list scheduled", "GET", "/v1/scheduled-messages?limit=10", "", nil, 200, ""},
		{"get scheduled", "GET", "/v1/scheduled-messages/{msg}", "", nil, 200, ""},
		{"update scheduled", "PATCH", "/v1/scheduled-messages/{msg}", "", map[string]any{"text": "later still"}, 200, ""},
		{"cancel scheduled", "DELETE", "/v1/scheduled-messages/{msg}", "", nil, 200, ""},
		{"create webhook", "POST", "/v1/webhooks", "", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"message.read"}, "description": "test"}, 201, "hook"},
		{"list webhooks", "GET", "/v1/webhooks", "", nil, 200, ""},
		{"get webhook", "GET", "/v1/webhooks/{hook}", "", nil, 200, ""},
		{"update webhook", "PATCH", "/v1/webhooks/{hook}", "", map[string]any{"description": "renamed"}, 200, ""},
		{"webhook deliveries", "GET", "/v1/webhooks/{hook}/deliveries", "", nil, 200, ""},
		{"rotate secret", "POST", "/v1/webhooks/{hook}/rotate-secret", "", nil, 200, ""},
		{"delete webhook", "DELETE", "/v1/webhooks/{hook}", "", nil, 200, ""},
		{"list engines", "GET", "/v1/engines", "", nil, 200, "engine"},
		{"get engine", "GET", "/v1/engines/{engine}", "", nil, 200, ""},
		{"list chats", "GET", "/v1/chats", "", nil, 200, ""},
		{"latest chats", "GET", "/v1/latest-chats?numberOfChats=5&numberOfMessages=2", "", nil, 200, ""},
		{"list contacts", "GET", "/v1/contacts", "", nil, 200, ""},
		{"list audiences", "GET", "/v1/audiences", "", nil, 200, ""},
		{"list campaigns", "GET", "/v1/campaigns", "", nil, 200, ""},
		{"open board", "POST", "/v1/boards", "", map[string]any{"domain": "tasks", "agent_id": "bot:openapi"}, 200, "board:board_id"},
		{"list boards", "GET", "/v1/boards", "", nil, 200, ""},
		{"get board", "GET", "/v1/boards/{board}", "", nil, 200, ""},
		{"create item", "POST", "/v1/boards/{board}/items", "", map[string]any{"text": "write the reference"}, 201, "item:item_id"},
		{"list items", "GET", "/v1/boards/{board}/items", "", nil, 200, ""},
		{"update item", "PATCH", "/v1/boards/{board}/items/{item}", "", map[string]any{"text": "write the API reference"}, 200, ""},
		{"create audience", "POST", "/v1/audiences", "", map[string]any{"name": "Friends", "contacts": []map[string]any{{"to": "+15550101001"}}}, 200, "aud"},
		{"list audiences (one)", "GET", "/v1/audiences", "", nil, 200, ""},
		{"get audience", "GET", "/v1/audiences/{aud}", "", nil, 200, ""},
		{"update audience", "PATCH", "/v1/audiences/{aud}", "", map[string]any{"name": "Old friends"}, 200, ""},
		{"add contacts", "POST", "/v1/audiences/{aud}/contacts", "", map[string]any{"contacts": []map[string]any{{"to": "+15550101002", "variables": map[string]string{"name": "Ann"}}}}, 200, ""},
		{"create group", "POST", "/v1/groups", "", map[string]any{"name": "Reference", "participants": []string{"+15550401001"}}, 200, "group"},
		{"get group", "GET", "/v1/groups/{group}", "", nil, 200, ""},
		{"list groups", "GET", "/v1/groups", "", nil, 200, ""},
		{"create newsletter", "POST", "/v1/newsletters", "", map[string]any{"name": "Switchboard news"}, 201, ""},
		{"list newsletters", "GET", "/v1/newsletters", "", nil, 200, ""},
		{"delete audience", "DELETE", "/v1/audiences/{aud}", "", nil, 200, ""},
		{"404 audience", "GET", "/v1/audiences/nope", "", nil, 404, ""},
		{"404 webhook", "GET", "/v1/webhooks/nope", "", nil, 404, ""},
		{"404 engine", "GET", "/v1/engines/nope", "", nil, 404, ""},
		{"422 engine kind", "POST", "/v1/engines", "", map[string]any{"kind": "phone"}, 422, ""},
		{"400 bad limit", "GET", "/v1/engines?limit=0", "", nil, 400, ""},
		{"401 bad key", "GET", "/v1/account", "sb_nope", nil, 401, ""},
		{"403 scope", "GET", "/v1/engines", "reader", nil, 403, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := e.Key
			switch c.key {
			case "reader":
				key = reader
			case "none":
				key = ""
			case "":
			default:
				key = c.key
			}
			path := sub(c.path)
			resp := e.Do(c.method, path, key, c.body)
			if resp.Status != c.status {
				t.Fatalf("%s %s = %d %s, want %d", c.method, path, resp.Status, resp.Raw, c.status)
			}
			if c.save != "" {
				name, field, ok := strings.Cut(c.save, ":")
				if !ok {
					field = "id"
				}
				if d := resp.Data(); d != nil {
					ids[name], _ = d[field].(string)
				} else if l := resp.List(); len(l) > 0 {
					ids[name], _ = l[0][field].(string)
				}
			}
			if resp.Status < 300 { // the request, too, is one the document allows
				if err := validateRequest(router, e.Server.URL, c.method, path, c.body); err != nil {
					t.Errorf("request %s %s: %v", c.method, path, err)
				}
			}
			if err := validateResponse(router, e.Server.URL, c.method, path, resp); err != nil {
				t.Errorf("%s %s: %v\n%s", c.method, path, err, resp.Raw)
			}
		})
	}

	// A status the document does not name for the operation fails validation.
	resp := &apptest.Response{Status: 418, Header: http.Header{"Content-Type": {"application/json"}},
		Raw: []byte(`{"success":false,"error":{"code":"teapot","message":"no"}}`)}
	if err := validateResponse(router, e.Server.URL, "GET", "/v1/ping", resp); err == nil {
		t.Error("an undocumented status validated")
	}
	// So does a body of the wrong shape.
	resp = &apptest.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Raw: []byte(`{"success":true,"data":{"api":1}}`)}
	if err := validateResponse(router, e.Server.URL, "GET", "/v1/ping", resp); err == nil {
		t.Error("a malformed ping validated")
	}
}

func validateRequest(router routers.Router, base, method, path string, body any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, base+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}

func validateResponse(router routers.Router, base, method, path string, resp *apptest.Response) error {
	req := httptest.NewRequest(method, base+path, nil)
	route, params, err := router.FindRoute(req)
	if err != nil {
		return err
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.Status,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(resp.Raw)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

var externalURL = regexp.MustCompile(`(?i)(?:https?:)?//([a-z0-9][a-z0-9.-]*\.[a-z]{2,})`)

// TestOpenAPIDocsPage checks that /docs serves Swagger UI from the binary: HTML
// naming the document, with no URL of another host, and its assets answer.
func TestOpenAPIDocsPage(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/docs", "/docs/"} {
		resp := e.Do("GET", path, "", nil)
		if resp.Status != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s = %d %s", path, resp.Status, resp.Header.Get("Content-Type"))
		}
		page := resp.Text()
		if !strings.Contains(page, "/v1/openapi.json") {
			t.Errorf("%s does not name /v1/openapi.json", path)
		}
		if m := externalURL.FindAllString(page, -1); len(m) > 0 {
			t.Errorf("%s references other hosts: %v", path, m)
		}
		for _, asset := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if strings.HasPrefix(asset[1], "/docs/") {
				res, err := http.Get(e.Server.URL + asset[1])
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || len(body) == 0 {
					t.Errorf("asset %s = %d (%d bytes)", asset[1], res.StatusCode, len(body))
				}
			}
		}
	}
}
