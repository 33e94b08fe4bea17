package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// hostile are path segments and query values that once reached the database: NUL,
// invalid UTF-8 (raw or as an overlong escape), huge and odd values.
var hostile = []string{"%00", "a%00b", "%C0%AF", "%FF%FE", "msg_%00", "%2B15551234567%00",
	strings.Repeat("9", 3000), "..%2F..%2Fetc", "%27%20OR%201%3D1%20--", "%F0%9F%98%80", "%E2%80%AE", "%20"}

// hostileBodies are JSON bodies with NUL and odd shapes.
var hostileBodies = []string{`{"type":"text","text":"a\u0000b"}`, `{"type":"text","text":"x","secret":"\u0000"}`,
	`{"url":"https://e.com/\u0000","events":["message.read"]}`, `{"\u0000":1}`, `[]`, `"x"`, `null`, `{"type":`,
	`{"type":"media","mediaUrl":"https://169.254.169.254/latest"}`, `{"events":["\u0000"]}`,
	`{"groupId":"\u0000@g.us","action":"added"}`, strings.Repeat(`{"a":`, 5000)}

// TestHostileInputsOnEveryRoute sends every hostile path parameter, query value and
// body to every route of the router: no answer is a 500, and every error the
// application writes is the error envelope.
func TestHostileInputsOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	type route struct{ method, path string }
	var routes []route
	err := chi.Walk(e.App.Handler.(chi.Routes), func(method, path string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, route{method, strings.ReplaceAll(path, "/*/", "/")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) < 20 {
		t.Fatalf("walked only %d routes", len(routes))
	}
	check := func(method, target, body string, headers ...string) {
		t.Helper()
		var resp *apptest.Response
		if body == "" {
			resp = e.Do(method, target, e.Key, nil, headers...)
		} else {
			resp = e.Do(method, target, e.Key, body, headers...)
		}
		if resp.Status >= 500 {
			t.Errorf("%s %.120s %.60s = %d: %.300s", method, target, body, resp.Status, resp.Raw)
		}
		if resp.Status >= 400 && method != "HEAD" && !strings.HasPrefix(target, "/monitoring") && !strings.HasPrefix(target, "/graphql") &&
			(resp.Body["success"] != false || resp.Error()["code"] == nil || resp.Error()["requestId"] == nil) {
			t.Errorf("%s %.120s = %d without the error envelope: %.300s", method, target, resp.Status, resp.Raw)
		}
	}
	n := 0
	for _, rt := range routes {
		if strings.HasPrefix(rt.path, "/monitoring") {
			continue
		}
		for _, h := range hostile {
			target := strings.NewReplacer("{chatId}", h, "{id}", h, "{deliveryId}", h, "{itemId}", h, "*", h).Replace(rt.path)
			check(rt.method, target+"?chatId="+h+"&status="+h+"&searchToken="+h+"&order="+h+"&limit="+h, "")
			n++
		}
		if rt.method == "POST" || rt.method == "PATCH" {
			target := strings.NewReplacer("{chatId}", "+15551234567", "{id}", "msg_x", "{deliveryId}", "dlv_x", "{itemId}", "itm_x").Replace(rt.path)
			for _, b := range hostileBodies {
				check(rt.method, target, b, "Idempotency-Key", "k\xc0\xaf")
				n++
			}
		}
	}
	t.Logf("%d hostile requests over %d routes", n, len(routes))
}

// TestBadTextIsNamed: NUL bytes and invalid UTF-8 anywhere (path, query, header,
// body, GraphQL argument) answer 400 naming the field, whatever the database.
func TestBadTextIsNamed(t *testing.T) {
	e := newEnv(t)
	sched := e.Do("POST", "/v1/scheduled-messages/+15550007001", e.Key, map[string]any{"type": "text", "text": "ok"})
	if sched.Status != 201 {
		t.Fatalf("schedule = %d %s", sched.Status, sched.Raw)
	}
	tests := []struct {
		name, method, path string
		body               any
		headers            []string
		wantPath           string
	}{
		{"path id NUL", "GET", "/v1/scheduled-messages/msg_%00", nil, nil, "id"},
		{"path id overlong escape", "GET", "/v1/scheduled-messages/msg_%C0%AF", nil, nil, "id"},
		{"message key NUL", "GET", "/v1/messages/true_1%40c.us_%00", nil, nil, "id"},
		{"webhook id", "DELETE", "/v1/webhooks/wh_%FF", nil, nil, "id"},
		{"query value", "GET", "/v1/scheduled-messages?searchToken=a%00b", nil, nil, "searchToken"},
		{"query chatId", "GET", "/v1/messages/x?chatId=%C0%AF", nil, nil, "chatId"},
		{"body text", "POST", "/v1/scheduled-messages/+15550007002", `{"type":"text","text":"a\u0000b"}`, nil, "text"},
		{"body poll option", "POST", "/v1/messages/+15550007002", `{"type":"poll","pollQuestion":"q","pollOptions":["a","b\u0000"]}`, nil, "pollOptions.1"},
		{"body webhook url", "POST", "/v1/webhooks", `{"url":"https://e.com/\u0000","events":["message.read"]}`, nil, "url"},
		{"header", "POST", "/v1/scheduled-messages/+15550007003", map[string]any{"type": "text", "text": "x"}, []string{"Idempotency-Key", "k\xc0\xaf"}, "Idempotency-Key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Do(tt.method, tt.path, e.Key, tt.body, tt.headers...)
			if resp.Status != 400 || resp.Error()["code"] != "invalid_request" || !slices.Contains(resp.DetailPaths(), tt.wantPath) {
				t.Errorf("= %d %s, want 400 invalid_request naming %s", resp.Status, resp.Raw, tt.wantPath)
			}
		})
	}
	res := gql(e, e.Key, `query($id: ID!) { scheduledMessage(id: $id) { id } }`, map[string]any{"id": "msg_\u0000"})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "invalid_request" {
		t.Errorf("GraphQL argument with NUL = %+v", res.Errors)
	}
	res = gql(e, e.Key, `{ messages(first: 5, where: {textContains: "\u0000"}) { totalCount } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "invalid_request" {
		t.Errorf("GraphQL where with NUL = %+v", res.Errors)
	}
	res = gql(e, e.Key, `{ webhooks(first: 5) { edges { node { deliveries(first: 1, where: {eventTypeContains: "\u0000"}) { totalCount } } } } }`, nil)
	if len(res.Errors) > 0 && res.Errors[0].Extensions["code"] != "invalid_request" {
		t.Errorf("nested GraphQL argument with NUL = %+v", res.Errors)
	}
	// Multipart values are raw bytes: invalid UTF-8 is named too.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "text")
	_ = mw.WriteField("text", "bad \xff bytes")
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+"/v1/scheduled-messages/+15550007004", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.Key)
	if resp := e.Send(req); resp.Status != 400 || !slices.Contains(resp.DetailPaths(), "text") {
		t.Errorf("multipart invalid UTF-8 = %d %s", resp.Status, resp.Raw)
	}
}

// TestPathParametersAreDecoded: a client that encodes path segments (the official
// SDK does) reaches the same resources as one that does not.
func TestPathParametersAreDecoded(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/v1/scheduled-messages/%2B15550008001", "/v1/scheduled-messages/15550008001%40c.us"} {
		resp := e.Do("POST", path, e.Key, map[string]any{"type": "text", "text": "encoded"})
		if resp.Status != 201 || resp.Data()["to"] != "15550008001@c.us" {
			t.Fatalf("POST %s = %d %s", path, resp.Status, resp.Raw)
		}
	}
	sent := e.Do("POST", "/v1/messages/%2B15550008002", e.Key, map[string]any{"type": "text", "text": "direct"})
	if sent.Status != 201 {
		t.Fatalf("direct send = %d %s", sent.Status, sent.Raw)
	}
	key := sent.Data()["waMessageKey"].(map[string]any)["_serialized"].(string)
	e.Eventually(5*time.Second, "the message by its encoded key", func() bool {
		return e.Do("GET", "/v1/messages/"+strings.ReplaceAll(key, "@", "%40"), e.Key, nil).Status == 200
	})
	// Decoded exactly once: %2540 is a literal "%40", not "@".
	if r := e.Do("GET", "/v1/messages/"+strings.ReplaceAll(key, "@", "%2540"), e.Key, nil); r.Status != 404 {
		t.Errorf("double-decoded key = %d, want 404", r.Status)
	}
}

// TestEveryAnswerIsTheEnvelope covers answers that used to be plain text.
func TestEveryAnswerIsTheEnvelope(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/media/guess", "/media/", "/media/" + strings.Repeat("x", 100)} {
		resp := e.Do("GET", path, "", nil)
		if resp.Status != 404 || resp.Error()["code"] != "not_found" {
			t.Errorf("GET %s = %d %s, want the 404 envelope", path, resp.Status, resp.Raw)
		}
	}
	resp := e.Do("POST", "/v1/scheduled-messages/+15551234567", e.Key, map[string]any{"type": "text", "text": "x", "to": "y"})
	if msg, _ := resp.Error()["message"].(string); resp.Status != 400 || !strings.Contains(msg, "accepted fields: type, text, mediaUrl") {
		t.Errorf("unknown field = %d %s, want the accepted fields named", resp.Status, resp.Raw)
	}
	resp = e.Do("POST", "/v1/webhooks", e.Key, map[string]any{"url": "https://e.com", "events": []string{"message.read"}, "secret": "x"})
	if msg, _ := resp.Error()["message"].(string); !strings.Contains(msg, "accepted fields: url, events, description, status") {
		t.Errorf("unknown webhook field = %s", resp.Raw)
	}
}

// TestGraphQLLimits: page sizes are capped and counted by the complexity limit,
// and /graphql bounds its body and never echoes it.
func TestGraphQLLimits(t *testing.T) {
	e := newEnv(t)
	reader := e.NewKey("default", "chats:read")
	res := gql(e, reader, `{ messages(first: 100000) { totalCount } }`, nil)
	if len(res.Errors) == 0 || res.Errors[0].Extensions["code"] != "invalid_request" {
		t.Errorf("first: 100000 = %+v", res.Errors)
	}
	var q strings.Builder
	q.WriteString("{")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&q, " a%d: messages(first: 200) { edges { node { id text to status } } }", i)
	}
	q.WriteString(" }")
	res = gql(e, reader, q.String(), nil)
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "complexity") {
		t.Errorf("40 aliased pages = %+v", res.Errors)
	}
	res = gql(e, e.Key, `{ webhooks(first: 200) { edges { node { deliveries(first: 200) { edges { node { id eventType } } } } } } }`, nil)
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "complexity") {
		t.Errorf("nested pages = %+v", res.Errors)
	}
	if res := gql(e, reader, `{ messages(first: 200) { edges { node { id text to status } } } }`, nil); len(res.Errors) > 0 {
		t.Errorf("one full page = %+v", res.Errors)
	}

	big := `{"query":"{ account { id } }","variables":{"x":"` + strings.Repeat("A", 11<<20) + `"}}`
	if resp := e.Do("POST", "/graphql", e.Key, big); resp.Status != 413 || resp.Error()["code"] != "payload_too_large" {
		t.Errorf("11 MB /graphql body = %d %.300s", resp.Status, resp.Raw)
	}
	malformed := `{"query": ` + strings.Repeat("x", 1<<20)
	resp := e.Do("POST", "/graphql", e.Key, malformed)
	if resp.Status >= 500 || len(resp.Raw) > 2048 || !strings.Contains(resp.Text(), "invalid_request") {
		t.Errorf("malformed 1 MB body = %d, %d bytes: %.300s", resp.Status, len(resp.Raw), resp.Raw)
	}
}

// TestMessageScopesAgree: the message store needs chats:read on both transports;
// the queue needs messages:read on both.
func TestMessageScopesAgree(t *testing.T) {
	e := newEnv(t)
	queue := e.NewKey("default", "messages:read")
	store := e.NewKey("default", "chats:read")
	res := gql(e, queue, `{ messages(first: 5) { totalCount } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "insufficient_scope" || !strings.Contains(res.Errors[0].Message, "chats:read") {
		t.Errorf("messages with messages:read = %+v", res.Errors)
	}
	if res := gql(e, store, `{ messages(first: 5) { totalCount } }`, nil); len(res.Errors) > 0 {
		t.Errorf("messages with chats:read = %+v", res.Errors)
	}
	if r := e.Do("GET", "/v1/messages/true_1%40c.us_X", queue, nil); r.Status != 403 {
		t.Errorf("REST message with messages:read = %d", r.Status)
	}
	if r := e.Do("GET", "/v1/scheduled-messages", queue, nil); r.Status != 200 {
		t.Errorf("REST queue with messages:read = %d", r.Status)
	}
	if res := gql(e, queue, `{ scheduledMessages { total } }`, nil); len(res.Errors) > 0 {
		t.Errorf("GraphQL queue with messages:read = %+v", res.Errors)
	}
}

// TestStoredMediaCannotRunScripts: an upload is served so that it can never run on
// the API's origin, and it expires.
func TestStoredMediaCannotRunScripts(t *testing.T) {
	e := newEnv(t)
	upload := func(chatID, dataURL string, extra map[string]any) string {
		body := map[string]any{"type": "media", "mediaBase64": dataURL, "mediaFilename": "x"}
		for k, v := range extra {
			body[k] = v
		}
		resp := e.Do("POST", "/v1/scheduled-messages/"+chatID, e.Key, body)
		if resp.Status != 201 {
			t.Fatalf("upload = %d %s", resp.Status, resp.Raw)
		}
		return resp.Data()["mediaUrl"].(string)
	}
	html := upload("+15550009001", "data:text/html;base64,"+base64.StdEncoding.EncodeToString([]byte("<script>alert(localStorage)</script>")), nil)
	png := upload("+15550009002", "data:image/png;base64,"+base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nrest")),
		map[string]any{"sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	for _, tc := range []struct{ url, disposition string }{{html, "attachment"}, {png, "inline"}} {
		resp, err := http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") ||
			!strings.HasPrefix(h.Get("Content-Disposition"), tc.disposition) {
			t.Errorf("%s served with %v, want nosniff, a sandbox CSP and %s", tc.url, h, tc.disposition)
		}
	}
	// Retention: everything older than the cutoff goes, except what a message still
	// waiting to be sent points at (the deferred png).
	waitStatus(e, strings.TrimPrefix(e.Do("GET", "/v1/scheduled-messages?limit=1&order=asc", e.Key, nil).List()[0]["id"].(string), ""), "read")
	n, err := e.App.Jobs.Media.Prune(context.Background(), time.Now().Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	if r, _ := http.Get(html); r.StatusCode != 404 {
		t.Errorf("pruned media = %d, want 404", r.StatusCode)
	}
	if r, _ := http.Get(png); r.StatusCode != 200 {
		t.Errorf("media of a pending message = %d, want 200", r.StatusCode)
	}
}

// TestGraphQLConsoleIsSelfContained: the console loads nothing from elsewhere and
// keeps the key out of storage.
func TestGraphQLConsoleIsSelfContained(t *testing.T) {
	e := newEnv(t)
	page := e.Do("GET", "/graphql", "", nil, "Accept", "text/html")
	js := e.Do("GET", "/graphql?asset=ide.js", "", nil)
	if page.Status != 200 || js.Status != 200 || !strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("console = %d / %d, CSP %q", page.Status, js.Status, page.Header.Get("Content-Security-Policy"))
	}
	for _, r := range []*apptest.Response{page, js} {
		for _, bad := range []string{"https://", "//cdn", "localStorage.setItem", "sessionStorage", "document.cookie"} {
			if strings.Contains(r.Text(), bad) {
				t.Errorf("console holds %q", bad)
			}
		}
	}
}

// TestMultipartLeavesNothingBehind: the temporary file of a large upload is removed
// once the request is answered.
func TestMultipartLeavesNothingBehind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := newEnv(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "media")
	fw, _ := mw.CreateFormFile("mediaFile", "big.bin")
	_, _ = fw.Write(bytes.Repeat([]byte{7}, 17<<20)) // above the 16 MB kept in memory
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+"/v1/scheduled-messages/+15550009101", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.Key)
	if resp := e.Send(req); resp.Status != 201 {
		t.Fatalf("upload = %d %.300s", resp.Status, resp.Raw)
	}
	entries, _ := os.ReadDir(tmp)
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), "multipart-") {
			t.Errorf("temporary upload left behind: %s", de.Name())
		}
	}
}

// TestOneGuardPerPurpose: mediaUrl goes through the guard, and the webhook flag
// does not open link previews to internal pages.
func TestOneGuardPerPurpose(t *testing.T) {
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<title>internal admin</title>`)
	}))
	defer page.Close()
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.AllowPrivate, c.LinkPreviewAllowPrivate, c.MediaAllowPrivate = true, false, false
	}})
	for _, u := range []string{"https://169.254.169.254/latest/meta-data", "https://[::ffff:a9fe:a9fe]/x", "https://LOCALHOST./x", "https://[::a9fe:a9fe]/x"} {
		resp := e.Do("POST", "/v1/scheduled-messages/+15550009201", e.Key, map[string]any{"type": "media", "mediaUrl": u})
		if resp.Status != 422 || !slices.Contains(resp.DetailPaths(), "mediaUrl") {
			t.Errorf("mediaUrl %s = %d %s, want 422 naming mediaUrl", u, resp.Status, resp.Raw)
		}
	}
	m := schedule(e, "+15550009202", map[string]any{"type": "text", "text": "see " + page.URL + "/admin"})
	got := waitStatus(e, m["id"].(string), "read")
	if lp, _ := got["linkPreview"].(map[string]any); hits.Load() != 0 || (lp != nil && lp["title"] != nil) {
		t.Errorf("link preview fetched an internal page (%d hits): %v", hits.Load(), lp)
	}
}
