package rest_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDisappearingTimerSandbox: a chat never set reads 0; a set timer reads
// back (by phone or chat id, a contact's or a group's chat), per engine; 0
// turns it off; GraphQL serves the same.
func TestDisappearingTimerSandbox(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	attach(e, ws, e.App.Sandbox.EngineFor(ws, "eng_second"))
	timer := func(method, path string, body any) string {
		t.Helper()
		r := e.Do(method, path, e.Key, body)
		if r.Status != 200 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
		}
		d := r.Data()
		return d["chatId"].(string) + " " + strings.TrimPrefix(d["engineId"].(string), "eng_") + " " + jsonNumber(d["seconds"])
	}
	var got []string
	got = append(got, timer("GET", "/v1/chats/+15551230001/disappearing?engineId=eng_second", nil))
	got = append(got, timer("PUT", "/v1/chats/+15551230001/disappearing?engineId=eng_second", map[string]any{"seconds": 604800}))
	got = append(got, timer("GET", "/v1/chats/15551230001@c.us/disappearing?engineId=eng_second", nil))
	got = append(got, timer("PUT", "/v1/chats/120363000000000001@g.us/disappearing?engineId=eng_second", map[string]any{"seconds": 86400}))
	got = append(got, timer("GET", "/v1/chats/120363000000000001@g.us/disappearing?engineId=eng_second", nil))
	got = append(got, timer("PUT", "/v1/chats/+15551230001/disappearing?engineId=eng_second", map[string]any{"seconds": 0}))
	got = append(got, timer("GET", "/v1/chats/+15551230001/disappearing?engineId=eng_second", nil))
	want := []string{
		"15551230001@c.us second 0",
		"15551230001@c.us second 604800",
		"15551230001@c.us second 604800",
		"120363000000000001@g.us second 86400",
		"120363000000000001@g.us second 86400",
		"15551230001@c.us second 0",
		"15551230001@c.us second 0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timers (-want +got):\n%s", diff)
	}

	d := gqlData(t, e, `mutation { setDisappearingTimer(chatId: "+15551230002", seconds: 7776000, engineId: "eng_second") { seconds } }`, nil)
	if s := d["setDisappearingTimer"].(map[string]any)["seconds"]; jsonNumber(s) != "7776000" {
		t.Errorf("GraphQL set: %v", d)
	}
	d = gqlData(t, e, `{ disappearingTimer(chatId: "15551230002@c.us", engineId: "eng_second") { chatId seconds engineId } }`, nil)
	if diff := cmp.Diff(map[string]any{"chatId": "15551230002@c.us", "seconds": float64(7776000), "engineId": "eng_second"}, d["disappearingTimer"]); diff != "" {
		t.Errorf("GraphQL read (-want +got):\n%s", diff)
	}
	// Another engine of the workspace keeps its own timers.
	attach(e, ws, e.App.Sandbox.EngineFor(ws, "eng_third"))
	if r := e.Do("GET", "/v1/chats/15551230002@c.us/disappearing?engineId=eng_third", e.Key, nil); r.Status != 200 || jsonNumber(r.Data()["seconds"]) != "0" {
		t.Errorf("a third engine: %d %s", r.Status, r.Raw)
	}
}

// TestDisappearingTimerBadInput: a timer WhatsApp does not allow is 422 naming
// the allowed ones; no seconds 422; a chat id that is not a contact's or a
// group's 400; a malformed engineId 400, an unknown one 404; reading needs
// chats:read, setting chats:write; an engine without the capability 501.
func TestDisappearingTimerBadInput(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	attach(e, ws, bareEngine{e.App.Sandbox.EngineFor(ws, "eng_bare")})
	const path = "/v1/chats/+15551230001/disappearing"
	cases := []struct {
		name, method, path string
		key                string
		body               any
		want               string
	}{
		{"an hour", "PUT", path, e.Key, map[string]any{"seconds": 3600}, "422 validation_failed seconds:invalid_enum_value"},
		{"negative", "PUT", path, e.Key, map[string]any{"seconds": -1}, "422 validation_failed seconds:invalid_enum_value"},
		{"no seconds", "PUT", path, e.Key, map[string]any{}, "422 validation_failed seconds:invalid_type"},
		{"not a chat", "PUT", "/v1/chats/hello/disappearing", e.Key, map[string]any{"seconds": 0}, "400 invalid_request chatId:invalid_string"},
		{"a channel", "GET", "/v1/chats/120363000000000009@newsletter/disappearing", e.Key, nil, "400 invalid_request chatId:invalid_string"},
		{"malformed engine", "GET", path + "?engineId=x", e.Key, nil, "400 invalid_request engineId:invalid_string"},
		{"unknown engine", "GET", path + "?engineId=eng_nope", e.Key, nil, "404 not_found engineId:not_found"},
		{"read without chats:read", "GET", path, e.NewKey("default", "contacts:read"), nil, "403 insufficient_scope scope:missing_scope"},
		{"set with chats:read", "PUT", path, e.NewKey("default", "chats:read"), map[string]any{"seconds": 0}, "403 insufficient_scope scope:missing_scope"},
		{"read, not served", "GET", path + "?engineId=eng_bare", e.Key, nil, "501 not_supported engineId:not_supported"},
		{"set, not served", "PUT", path + "?engineId=eng_bare", e.Key, map[string]any{"seconds": 0}, "501 not_supported engineId:not_supported"},
	}
	for _, c := range cases {
		r := e.Do(c.method, c.path, c.key, c.body)
		if got := errorOf(r); got != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, got, c.want, r.Raw)
		}
		if c.name == "an hour" && !strings.Contains(string(r.Raw), "0, 86400, 604800, 7776000") {
			t.Errorf("the 422 does not name the allowed timers: %s", r.Raw)
		}
		if strings.HasPrefix(c.want, "501") && !strings.Contains(string(r.Raw), "capability disappearing") {
			t.Errorf("%s: does not name the capability: %s", c.name, r.Raw)
		}
	}
}

// jsonNumber prints a JSON number as its digits.
func jsonNumber(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}
