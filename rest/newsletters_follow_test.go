package rest_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newsletterState is "<role> <following> <muted>" of a newsletter record.
func newsletterState(d map[string]any) string {
	role, _ := d["role"].(string)
	return role + " " + fmtBool(d["following"]) + " " + fmtBool(d["muted"])
}

func fmtBool(v any) string {
	if b, _ := v.(bool); b {
		return "true"
	}
	return "false"
}

// TestNewsletterFollowSandbox: the sandbox directory's newsletter previewed by
// invite, followed by invite (its welcome post stored as a message of its
// chat), muted, unmuted and unfollowed by id; the record shows role,
// following and muted; each change is a newsletter.* webhook event; GraphQL
// serves the same.
func TestNewsletterFollowSandbox(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "newsletter.joined", "newsletter.left", "newsletter.mute_changed")
	const id = "120363000000000001@newsletter"

	r := e.Do("GET", "/v1/newsletters/invites/SBNEWS1", e.Key, nil)
	if r.Status != 200 || r.Data()["id"] != id || r.Data()["name"] != "Sandbox Weather" || r.Data()["following"] != false || r.Data()["role"] != "guest" {
		t.Fatalf("preview: %d %s", r.Status, r.Raw)
	}
	var got []string
	step := func(method, path string, body any) {
		t.Helper()
		r := e.Do(method, path, e.Key, body)
		if r.Status != 200 || r.Data()["newsletterId"] != id {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
		}
		got = append(got, newsletterState(r.Data()))
	}
	step("POST", "/v1/newsletters/follow", map[string]any{"invite": "https://chat.example.com/channel/SBNEWS1"})
	step("GET", "/v1/newsletters/"+id, nil)
	step("PUT", "/v1/newsletters/"+id+"/mute", map[string]any{"muted": true})
	step("PUT", "/v1/newsletters/"+id+"/mute", map[string]any{"muted": false})
	step("DELETE", "/v1/newsletters/"+id+"/follow", nil)
	step("POST", "/v1/newsletters/"+id+"/follow", nil)
	want := []string{"subscriber true false", "subscriber true false", "subscriber true true", "subscriber true false",
		"guest false false", "subscriber true false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}

	// The welcome posts (one per follow) are messages of the newsletter's chat.
	r = e.Do("GET", "/v1/messages?chatId="+id, e.Key, nil)
	if r.Status != 200 {
		t.Fatalf("messages: %d %s", r.Status, r.Raw)
	}
	if items := r.List(); len(items) != 2 {
		t.Errorf("the newsletter's messages: %s", r.Raw)
	}

	e.Eventually(10*time.Second, "the webhook events", func() bool { return len(rc.all()) == 5 })
	for typ, n := range map[string]int{"newsletter.joined": 2, "newsletter.mute_changed": 2, "newsletter.left": 1} {
		evs := rc.ofType(typ)
		if len(evs) != n {
			t.Errorf("%d %s, want %d", len(evs), typ, n)
			continue
		}
		d := evs[0].payload["data"].(map[string]any)
		if d["newsletterId"] != id || d["engineId"] == nil || d["at"] == nil {
			t.Errorf("%s data %v", typ, d)
		}
	}

	d := gqlData(t, e, `mutation { muteNewsletter(id: "120363000000000002@newsletter", muted: true) { jid role muted following } }`, nil)
	if diff := cmp.Diff(map[string]any{"jid": "120363000000000002@newsletter", "role": "guest", "muted": true, "following": false}, d["muteNewsletter"]); diff != "" {
		t.Errorf("GraphQL mute (-want +got):\n%s", diff)
	}
	d = gqlData(t, e, `mutation { followNewsletter(invite: "SBNEWS2") { jid role following } }`, nil)
	if diff := cmp.Diff(map[string]any{"jid": "120363000000000002@newsletter", "role": "subscriber", "following": true}, d["followNewsletter"]); diff != "" {
		t.Errorf("GraphQL follow (-want +got):\n%s", diff)
	}
	d = gqlData(t, e, `{ newsletterInvite(code: "SBNEWS3") { id name following muted } }`, nil)
	if diff := cmp.Diff(map[string]any{"id": "120363000000000003@newsletter", "name": "Sandbox Releases", "following": false, "muted": false}, d["newsletterInvite"]); diff != "" {
		t.Errorf("GraphQL preview (-want +got):\n%s", diff)
	}
}

// TestNewsletterFollowBadInput: a bad id 400, an unknown newsletter or invite
// 404, a malformed invite 400, neither or both of id and invite 422, no muted
// 422; scopes newsletters:read and newsletters:write; an engine without the
// capability 501.
func TestNewsletterFollowBadInput(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	const nl = "/v1/newsletters/120363000000000001@newsletter"
	cases := []struct {
		name, method, path string
		key                string
		body               any
		want               string
	}{
		{"bad id", "POST", "/v1/newsletters/hello/follow", e.Key, nil, "400 invalid_request id:invalid_string"},
		{"a group id", "PUT", "/v1/newsletters/120363000000000001@g.us/mute", e.Key, map[string]any{"muted": true}, "400 invalid_request id:invalid_string"},
		{"letters", "DELETE", "/v1/newsletters/abc@newsletter/follow", e.Key, nil, "400 invalid_request id:invalid_string"},
		{"unknown", "POST", "/v1/newsletters/120363999999999999@newsletter/follow", e.Key, nil, "404 not_found id:not_found"},
		{"unknown mute", "PUT", "/v1/newsletters/120363999999999999@newsletter/mute", e.Key, map[string]any{"muted": true}, "404 not_found id:not_found"},
		{"unknown invite", "GET", "/v1/newsletters/invites/NOPE", e.Key, nil, "404 not_found code:not_found"},
		{"unknown invite follow", "POST", "/v1/newsletters/follow", e.Key, map[string]any{"invite": "NOPE"}, "404 not_found invite:not_found"},
		{"bad invite", "GET", "/v1/newsletters/invites/a%20b", e.Key, nil, "400 invalid_request code:invalid_string"},
		{"bad invite follow", "POST", "/v1/newsletters/follow", e.Key, map[string]any{"invite": "no way!"}, "400 invalid_request invite:invalid_string"},
		{"neither", "POST", "/v1/newsletters/follow", e.Key, map[string]any{}, "422 validation_failed invite:invalid_type"},
		{"both", "POST", "/v1/newsletters/follow", e.Key, map[string]any{"invite": "SBNEWS1", "id": "120363000000000001@newsletter"}, "422 validation_failed id:invalid_union"},
		{"no muted", "PUT", nl + "/mute", e.Key, map[string]any{}, "422 validation_failed muted:invalid_type"},
		{"muted a string", "PUT", nl + "/mute", e.Key, map[string]any{"muted": "yes"}, "400 invalid_request"},
		{"malformed engine", "POST", nl + "/follow?engineId=x", e.Key, nil, "400 invalid_request engineId:invalid_string"},
		{"unknown engine", "POST", nl + "/follow?engineId=eng_nope", e.Key, nil, "404 not_found engineId:not_found"},
		{"preview without newsletters:read", "GET", "/v1/newsletters/invites/SBNEWS1", e.NewKey("default", "chats:read"), nil, "403 insufficient_scope scope:missing_scope"},
		{"follow with newsletters:read", "POST", nl + "/follow", e.NewKey("default", "newsletters:read"), nil, "403 insufficient_scope scope:missing_scope"},
		{"not served", "POST", nl + "/follow?engineId=eng_bare", e.Key, nil, "501 not_supported engineId:not_supported"},
		{"preview not served", "GET", "/v1/newsletters/invites/SBNEWS1?engineId=eng_bare", e.Key, nil, "501 not_supported engineId:not_supported"},
	}
	for i, c := range cases {
		if i == len(cases)-2 { // the default engine is the sandbox's until now
			attach(e, ws, bareEngine{e.App.Sandbox.EngineFor(ws, "eng_bare")})
		}
		r := e.Do(c.method, c.path, c.key, c.body)
		got := errorOf(r)
		if c.want == "400 invalid_request" && len(got) > len(c.want) {
			got = got[:len(c.want)]
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, got, c.want, r.Raw)
		}
	}
}
