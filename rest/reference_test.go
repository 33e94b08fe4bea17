package rest_test

import (
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The reference's contract, compared mechanically with the served document.
// testdata/reference-fields.json lists, for each operation of the reference
// (reference/upstream-openapi.json beside the repository, not part of it), the
// names of its query and header parameters, of its JSON request body fields and of
// its answer's data fields: names only, no text of the reference. Regenerate it
// when the reference changes:
//
//	go test ./rest -run TestReferenceFields -reference ../shared/reference/upstream-openapi.json
//
// (the path is relative to rest/ when go test runs there: ../../shared/… from the
// repository's root). TestReferenceFields fails for any of them that
// /v1/openapi.json lacks, unless referenceGaps says why the spec wins.

var referenceDoc = flag.String("reference", "", "regenerate testdata/reference-fields.json from this reference OpenAPI document")

const referenceFields = "testdata/reference-fields.json"

// opFields are the names an operation's contract is made of. Nested fields are
// dotted paths, array items marked with [] (clips[].audioUrl), to fieldDepth.
type opFields struct {
	Params   []string `json:"params"`   // in:name, e.g. query:limit, header:Idempotency-Key
	Request  []string `json:"request"`  // JSON (and form) body fields
	Response []string `json:"response"` // fields of the success answer's data
}

// fieldDepth bounds how deep nested fields are listed.
const fieldDepth = 3

// referenceGaps are the reference's names Switchboard deliberately does not
// serve, each with the reason (the spec wins, or the reference's name is another
// operation's). Keys are "<METHOD> <path with {}> <params|request|response> <name>".
var referenceGaps = map[string]string{}

var pathParams = regexp.MustCompile(`\{[^}]+\}`)

// contractOf lists the operations of an OpenAPI document by "<METHOD> <path>",
// path parameters blanked ({}), with their opFields.
func contractOf(t *testing.T, raw []byte) map[string]opFields {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("decode OpenAPI document: %v", err)
	}
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		for seen := 0; m != nil && seen < 16; seen++ {
			ref, ok := m["$ref"].(string)
			if !ok {
				break
			}
			var cur any = doc
			for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				next, _ := cur.(map[string]any)
				cur = next[part]
			}
			m, _ = cur.(map[string]any)
		}
		return m
	}
	var fields func(schema any, prefix string, depth int, out map[string]bool)
	fields = func(schema any, prefix string, depth int, out map[string]bool) {
		s := resolve(schema)
		if s == nil || depth > fieldDepth {
			return
		}
		for _, k := range []string{"allOf", "oneOf", "anyOf"} {
			subs, _ := s[k].([]any)
			for _, sub := range subs {
				fields(sub, prefix, depth, out)
			}
		}
		if items, ok := s["items"]; ok {
			fields(items, prefix+"[]", depth, out)
			return
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			out[path] = true
			fields(p, path, depth+1, out)
		}
	}
	sorted := func(set map[string]bool) []string {
		out := make([]string, 0, len(set))
		for k := range set {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	ops := map[string]opFields{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		item, _ := item.(map[string]any)
		for method, op := range item {
			op, ok := op.(map[string]any)
			if !ok || !slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				continue
			}
			params, req, resp := map[string]bool{}, map[string]bool{}, map[string]bool{}
			list, _ := op["parameters"].([]any)
			shared, _ := item["parameters"].([]any)
			for _, p := range append(list, shared...) {
				p := resolve(p)
				if in, _ := p["in"].(string); in == "query" || in == "header" {
					params[in+":"+p["name"].(string)] = true
				}
			}
			if body := resolve(op["requestBody"]); body != nil {
				content, _ := body["content"].(map[string]any)
				for ct, c := range content {
					if strings.Contains(ct, "json") || strings.Contains(ct, "form") {
						fields(c.(map[string]any)["schema"], "", 0, req)
					}
				}
			}
			answers, _ := op["responses"].(map[string]any)
			for status, a := range answers {
				if !strings.HasPrefix(status, "2") {
					continue
				}
				content, _ := resolve(a)["content"].(map[string]any)
				for ct, c := range content {
					if !strings.Contains(ct, "json") {
						continue
					}
					env := resolve(c.(map[string]any)["schema"])
					props, _ := env["properties"].(map[string]any)
					if data, ok := props["data"]; ok {
						fields(data, "", 0, resp)
					}
				}
			}
			key := strings.ToUpper(method) + " " + pathParams.ReplaceAllString(path, "{}")
			ops[key] = opFields{Params: sorted(params), Request: sorted(req), Response: sorted(resp)}
		}
	}
	return ops
}

// TestReferenceFields checks that every parameter, request field and answer data
// field of every reference operation is in the served /v1/openapi.json (so that
// the response validation of TestOpenAPIResponses can catch a missing one), but
// for the deliberate gaps of referenceGaps; the next gap fails here.
func TestReferenceFields(t *testing.T) {
	if *referenceDoc != "" {
		raw, err := os.ReadFile(*referenceDoc)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.MarshalIndent(contractOf(t, raw), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referenceFields, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", referenceFields)
	}
	raw, err := os.ReadFile(referenceFields)
	if err != nil {
		t.Fatal(err)
	}
	var reference map[string]opFields
	if err := json.Unmarshal(raw, &reference); err != nil {
		t.Fatal(err)
	}
	if len(reference) < 70 {
		t.Fatalf("%s lists %d operations; the reference has 72", referenceFields, len(reference))
	}
	e := newEnv(t)
	_, served := loadOpenAPI(t, e)
	ours := contractOf(t, served)

	used := map[string]bool{}
	var missing []string
	for op, want := range reference {
		have, ok := ours[op]
		if !ok {
			if _, gap := referenceGaps[op]; gap {
				used[op] = true
			} else {
				missing = append(missing, op+": the operation")
			}
			continue
		}
		for _, part := range []struct {
			name       string
			want, have []string
		}{{"params", want.Params, have.Params}, {"request", want.Request, have.Request}, {"response", want.Response, have.Response}} {
			for _, f := range part.want {
				if slices.Contains(part.have, f) {
					continue
				}
				key := op + " " + part.name + " " + f
				if _, gap := referenceGaps[key]; gap {
					used[key] = true
					continue
				}
				missing = append(missing, key)
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the reference has %s; /v1/openapi.json does not (serve and document it, or say in referenceGaps why not)", m)
	}
	for gap := range referenceGaps {
		if !used[gap] {
			t.Errorf("referenceGaps names %q, which is no gap (any more): remove it", gap)
		}
	}
}

// TestContractAnswersValidate validates, against the served document, the
// requests and answers of the operations issue 26 brought to the reference's
// contract: what TestReferenceFields says is documented is also what is served.
func TestContractAnswersValidate(t *testing.T) {
	e := newMusicEnv(t, nil)
	doc, _ := loadOpenAPI(t, e)
	doc.Servers = openapi3.Servers{{URL: e.Server.URL}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	img := e.Do("GET", "/v1/messages?messageTypes=image&limit=1", e.Key, nil).List()[0]
	imgKey := img["waMessageKey"].(map[string]any)["_serialized"].(string)
	text := e.Do("GET", "/v1/messages?messageTypes=chat&limit=1", e.Key, nil).List()[0]
	textKey := text["waMessageKey"].(map[string]any)["_serialized"].(string)
	board := e.Do("POST", "/v1/boards", e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:reference"}).Data()["board_id"].(string)
	e.Do("POST", "/v1/boards/"+board+"/items", e.Key, map[string]any{"text": "call the plumber about the leak"})
	aud := createAudience(e, e.Key, map[string]any{"name": "Reference", "contacts": phones(900, 1)})
	ids := map[string]string{}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		save               string
	}{
		{"media url", "GET", "/v1/messages/media/" + imgKey + "?maxAttempts=1", nil, 200, ""},
		{"media unavailable", "GET", "/v1/messages/media/" + textKey, nil, 200, ""},
		{"send with typing and a secret", "POST", "/v1/messages/+15550200001", map[string]any{"type": "text", "text": "hi", "withTyping": true, "typingSeconds": 0.5, "secret": "order-1"}, 201, ""},
		{"schedule with a secret", "POST", "/v1/scheduled-messages/+15550200002", map[string]any{"type": "text", "text": "later", "secret": "order-2", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, 201, "msg"},
		{"scheduled with its secret", "GET", "/v1/scheduled-messages/{msg}", nil, 200, ""},
		{"latest chats", "GET", "/v1/latest-chats?numberOfChats=2&numberOfMessages=1", nil, 200, ""},
		{"chats with their last message", "GET", "/v1/chats?limit=2&includeLastMessage=true", nil, 200, ""},
		{"every contact", "GET", "/v1/contacts?limit=-1", nil, 200, ""},
		{"newsletter with a description", "POST", "/v1/newsletters", map[string]any{"name": "Reference news", "description": "All of it"}, 201, ""},
		{"find similar", "POST", "/v1/boards/" + board + "/items/find-similar", map[string]any{"candidates": []any{map[string]any{"text": "call the plumber about the leak"}, map[string]any{"text": "zebra"}}}, 200, ""},
		{"campaign without content", "POST", "/v1/campaigns", map[string]any{"name": "Bare", "audienceId": aud["id"]}, 200, "cmp:cmpId"},
		{"campaign given content", "PATCH", "/v1/campaigns/{cmp}", map[string]any{"text": "Hello"}, 200, ""},
		{"webhooks oldest first", "GET", "/v1/webhooks?order=asc", nil, 200, ""},
		{"song with a captcha token", "POST", "/v1/music/songs", map[string]any{"lyrics": "[Verse]\nla", "style": "pop", "captchaToken": "t"}, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			for k, v := range ids {
				path = strings.ReplaceAll(path, "{"+k+"}", v)
			}
			resp := e.Do(c.method, path, e.Key, c.body)
			if resp.Status != c.status {
				t.Fatalf("%s %s = %d %s", c.method, path, resp.Status, resp.Raw)
			}
			if c.save != "" {
				name, field, ok := strings.Cut(c.save, ":")
				if !ok {
					field = "id"
				}
				ids[name], _ = resp.Data()[field].(string)
			}
			if err := validateRequest(router, e.Server.URL, c.method, path, c.body); err != nil {
				t.Errorf("request: %v", err)
			}
			if err := validateResponse(router, e.Server.URL, c.method, path, resp); err != nil {
				t.Errorf("answer: %v\n%s", err, resp.Raw)
			}
		})
	}
}
