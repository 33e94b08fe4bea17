package rest_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
)

// createdGroup creates a group the account administers and returns its id.
func createdGroup(t *testing.T, e *apptest.Env, name string) string {
	t.Helper()
	r := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": name, "participants": []string{"+15550401001"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	return r.Data()["id"].(string)
}

// Invite links in the sandbox: read (the same code until reset), reset (the
// old code leads nowhere), preview, join (a group left before, and a group
// outside the world behind an SBX code), with the network's rules.
func TestGroupInvitesInTheSandbox(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, groupEvents...)
	id := createdGroup(t, e, "Book club")

	inv := e.Do("GET", "/v1/groups/"+id+"/invite", e.Key, nil)
	if inv.Status != 200 {
		t.Fatalf("invite: %d %s", inv.Status, inv.Raw)
	}
	code := inv.Data()["code"].(string)
	if len(code) != 22 || inv.Data()["link"] != "https://chat.whatsapp.com/"+code || inv.Data()["groupId"] != id {
		t.Errorf("invite %s", inv.Raw)
	}
	if again := e.Do("GET", "/v1/groups/"+id+"/invite", e.Key, nil); again.Data()["code"] != code {
		t.Errorf("the code changed without a reset: %s", again.Raw)
	}
	reset := e.Do("POST", "/v1/groups/"+id+"/invite/reset", e.Key, nil)
	fresh, _ := reset.Data()["code"].(string)
	if reset.Status != 200 || fresh == code || len(fresh) != 22 {
		t.Fatalf("reset: %d %s", reset.Status, reset.Raw)
	}
	if r := e.Do("GET", "/v1/groups/invites/"+code, e.Key, nil); errorOf(r) != "404 not_found code:not_found" {
		t.Errorf("the old code: %s", errorOf(r))
	}
	p := e.Do("GET", "/v1/groups/invites/"+url.PathEscape("https://chat.whatsapp.com/"+fresh), e.Key, nil)
	if p.Status != 200 || p.Data()["groupId"] != id || p.Data()["name"] != "Book club" || p.Data()["participantCount"].(float64) != 2 ||
		p.Data()["code"] != fresh || p.Data()["joinApproval"] != false || p.Data()["isCommunity"] != false {
		t.Errorf("preview by link: %d %s", p.Status, p.Raw)
	}
	me := p.Data()["owner"].(string)
	if r := e.Do("POST", "/v1/groups/join", e.Key, map[string]any{"code": fresh}); errorOf(r) != "409 conflict code:already_a_member" {
		t.Errorf("joining a group of the account's: %s", errorOf(r))
	}
	if r := e.Do("POST", "/v1/groups/join", e.Key, map[string]any{"link": "https://chat.whatsapp.com/" + fresh}); errorOf(r) != "409 conflict link:already_a_member" {
		t.Errorf("joining by link a group of the account's: %s", errorOf(r))
	}

	// Leave, then join again by the code: a plain member now.
	if r := e.Do("DELETE", "/v1/groups/"+id+"/members/me", e.Key, nil); r.Status != 204 {
		t.Fatalf("leave: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/v1/groups/"+id+"/invite", e.Key, nil); errorOf(r) != "409 conflict id:not_a_member" {
		t.Errorf("invite after leaving: %s", errorOf(r))
	}
	j := e.Do("POST", "/v1/groups/join", e.Key, map[string]any{"code": fresh})
	if j.Status != 200 || j.Data()["id"] != id || j.Data()["participants"] == nil {
		t.Fatalf("join: %d %s", j.Status, j.Raw)
	}
	if m := members(t, e, e.Key, id); m[me] == nil || m[me]["isAdmin"] != false || len(m) != 2 {
		t.Errorf("members after joining: %v", m)
	}
	if r := e.Do("GET", "/v1/groups/"+id+"/invite", e.Key, nil); errorOf(r) != "409 conflict id:not_an_admin" {
		t.Errorf("invite as a plain member: %s", errorOf(r))
	}
	e.Eventually(10*time.Second, "the join's event", func() bool {
		for _, ev := range eventsOf(rc, id) {
			if ev.Type == "participant_joined_via_link_webhook" && cmp.Equal(ev.Participants, []string{me}) && ev.By == me {
				return true
			}
		}
		return false
	})

	// A group outside the world.
	p = e.Do("GET", "/v1/groups/invites/SBXbookclub", e.Key, nil)
	if p.Status != 200 || p.Data()["name"] != "Sandbox group SBXbookclub" || p.Data()["participantCount"].(float64) != 3 {
		t.Fatalf("outside preview: %d %s", p.Status, p.Raw)
	}
	outside := p.Data()["groupId"].(string)
	if r := e.Do("GET", "/v1/groups/"+outside, e.Key, nil); r.Status != 404 {
		t.Errorf("an outside group stored before joining: %d", r.Status)
	}
	j = e.Do("POST", "/v1/groups/join", e.Key, map[string]any{"link": "https://chat.whatsapp.com/SBXbookclub"})
	if j.Status != 200 || j.Data()["id"] != outside || j.Data()["participantCount"].(float64) != 4 {
		t.Fatalf("join outside: %d %s", j.Status, j.Raw)
	}
	if r := e.Do("GET", "/v1/groups/"+outside, e.Key, nil); r.Status != 200 || r.Data()["name"] != "Sandbox group SBXbookclub" {
		t.Errorf("the outside group, stored: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/groups/join", e.Key, map[string]any{"code": "SBXbookclub"}); errorOf(r) != "409 conflict code:already_a_member" {
		t.Errorf("joining twice: %s", errorOf(r))
	}
	if r := e.Do("GET", "/v1/groups/invites/NoSuchCode42", e.Key, nil); errorOf(r) != "404 not_found code:not_found" {
		t.Errorf("an unknown code: %s", errorOf(r))
	}
}

// Join requests in the sandbox: turning approval on has two contacts ask
// (group.join_request each); approve and reject answer each participant.
func TestGroupJoinRequestsInTheSandbox(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, append(groupEvents, "group.join_request")...)
	id := createdGroup(t, e, "Choir")
	if r := e.Do("GET", "/v1/groups/"+id+"/requests", e.Key, nil); r.Status != 200 || len(r.List()) != 0 {
		t.Errorf("no requests yet: %d %s", r.Status, r.Raw)
	}
	r := e.Do("PATCH", "/v1/groups/"+id, e.Key, map[string]any{"settings": map[string]any{"joinApproval": true}})
	if r.Status != 200 || r.Data()["joinApproval"] != true {
		t.Fatalf("approval on: %d %s", r.Status, r.Raw)
	}
	if g := e.Do("GET", "/v1/groups/"+id, e.Key, nil); g.Data()["joinApproval"] != true {
		t.Errorf("the stored group: %s", g.Raw)
	}
	var reqs []map[string]any
	e.Eventually(20*time.Second, "two requests", func() bool {
		reqs = e.Do("GET", "/v1/groups/"+id+"/requests", e.Key, nil).List()
		return len(reqs) == 2
	})
	first, second := reqs[0]["chatId"].(string), reqs[1]["chatId"].(string)
	if page := e.Do("GET", "/v1/groups/"+id+"/requests?limit=1&skip=1", e.Key, nil); page.Status != 200 || len(page.List()) != 1 || page.List()[0]["chatId"] != second {
		t.Errorf("a page of requests: %s", page.Raw)
	}
	e.Eventually(10*time.Second, "the request events", func() bool {
		n := 0
		for _, ev := range eventsOf(rc, id) {
			if ev.Type == "group.join_request" {
				n++
			}
		}
		return n == 2
	})

	a := e.Do("POST", "/v1/groups/"+id+"/requests/approve", e.Key, map[string]any{"participants": []string{first, "+15550409999"}})
	if a.Status != 200 {
		t.Fatalf("approve: %d %s", a.Status, a.Raw)
	}
	var got []string
	if a.Data()["groupId"] != id || a.Data()["approve"] != true {
		t.Errorf("approve answer %s", a.Raw)
	}
	for _, x := range a.Data()["results"].([]any) {
		x := x.(map[string]any)
		got = append(got, strings.TrimSpace(fmt.Sprint(x["chatId"], " ", x["done"], " ", x["code"])))
	}
	if diff := cmp.Diff([]string{first + " true <nil>", "15550409999@c.us false not_requested"}, got); diff != "" {
		t.Errorf("approve results (-want +got):\n%s", diff)
	}
	if m := members(t, e, e.Key, id); m[first] == nil {
		t.Errorf("the approved participant is no member: %v", m)
	}
	if r := e.Do("POST", "/v1/groups/"+id+"/requests/reject", e.Key, map[string]any{"participants": []string{second}}); r.Status != 200 {
		t.Errorf("reject: %d %s", r.Status, r.Raw)
	}
	if m := members(t, e, e.Key, id); m[second] != nil {
		t.Errorf("the rejected participant is a member")
	}
	if r := e.Do("GET", "/v1/groups/"+id+"/requests", e.Key, nil); len(r.List()) != 0 {
		t.Errorf("requests left: %s", r.Raw)
	}
}

// Communities in the sandbox: every fifth world group is one, with the four
// after it as its sub-groups; a group the account created is in none.
func TestGroupCommunityInTheSandbox(t *testing.T) {
	e := newEnv(t)
	var community map[string]any
	for _, g := range e.Do("GET", "/v1/groups?includeArchive=true&limit=200", e.Key, nil).List() {
		r := e.Do("GET", "/v1/groups/"+g["id"].(string)+"/community", e.Key, nil)
		if r.Status != 200 {
			t.Fatalf("community: %d %s", r.Status, r.Raw)
		}
		if r.Data()["isCommunity"] == true {
			community = r.Data()
			break
		}
	}
	if community == nil {
		t.Fatal("no world group is a community")
	}
	subs := community["subGroups"].([]any)
	if len(subs) != 4 || subs[0].(map[string]any)["isDefault"] != true || subs[1].(map[string]any)["isDefault"] != false {
		t.Fatalf("sub-groups %v", subs)
	}
	for _, s := range subs {
		sub := s.(map[string]any)["groupId"].(string)
		r := e.Do("GET", "/v1/groups/"+sub+"/community", e.Key, nil)
		if r.Data()["parentGroupId"] != community["groupId"] || r.Data()["isCommunity"] != false || len(r.Data()["subGroups"].([]any)) != 0 {
			t.Errorf("sub-group %s: %s", sub, r.Raw)
		}
	}
	id := createdGroup(t, e, "Alone")
	if r := e.Do("GET", "/v1/groups/"+id+"/community", e.Key, nil); r.Status != 200 || r.Data()["isCommunity"] != false || r.Data()["parentGroupId"] != nil {
		t.Errorf("a created group's community: %s", r.Raw)
	}
}

// Bad input and the network's rules: malformed ids and codes are 400, bad
// bodies 422 naming the field (by index), unknown groups and codes 404, and a
// group the account only belongs to 409 not_an_admin.
func TestGroupInviteInput(t *testing.T) {
	e := newEnv(t)
	id := createdGroup(t, e, "Inputs")
	var memberOf string
	for _, g := range e.Do("GET", "/v1/groups?includeArchive=true&limit=200", e.Key, nil).List() {
		full := e.Do("GET", "/v1/groups/"+g["id"].(string)+"?include=participants", e.Key, nil).Data()
		for _, p := range full["participants"].([]any) {
			if p := p.(map[string]any); strings.HasSuffix(p["chatId"].(string), "9000@c.us") && p["isAdmin"] == false {
				memberOf = full["id"].(string)
			}
		}
		if memberOf != "" {
			break
		}
	}
	if memberOf == "" {
		t.Fatal("no world group the account only belongs to")
	}
	unknown := "120363999999999999@g.us"
	for _, tc := range []struct {
		method, path string
		body         any
		want         string
	}{
		{"GET", "/v1/groups/nope/invite", nil, "400 invalid_request id:invalid_string"},
		{"GET", "/v1/groups/" + unknown + "/invite", nil, "404 not_found id:not_found"},
		{"POST", "/v1/groups/" + unknown + "/invite/reset", nil, "404 not_found id:not_found"},
		{"GET", "/v1/groups/" + memberOf + "/invite", nil, "409 conflict id:not_an_admin"},
		{"POST", "/v1/groups/" + memberOf + "/invite/reset", nil, "409 conflict id:not_an_admin"},
		{"GET", "/v1/groups/" + memberOf + "/requests", nil, "409 conflict id:not_an_admin"},
		{"PATCH", "/v1/groups/" + memberOf, map[string]any{"settings": map[string]any{"joinApproval": true}}, "409 conflict id:not_an_admin"},
		{"GET", "/v1/groups/invites/abc", nil, "400 invalid_request code:invalid_string"},
		{"GET", "/v1/groups/invites/" + url.PathEscape("bad code!"), nil, "400 invalid_request code:invalid_string"},
		{"GET", "/v1/groups/invites/" + url.PathEscape("https://example.com/AAAAAAAAAA"), nil, "400 invalid_request code:invalid_string"},
		{"POST", "/v1/groups/join", map[string]any{}, "422 validation_failed code:invalid_type"},
		{"POST", "/v1/groups/join", map[string]any{"code": "AAAAAAAAAA", "link": "https://chat.whatsapp.com/AAAAAAAAAA"}, "422 validation_failed link:invalid_union"},
		{"POST", "/v1/groups/join", map[string]any{"link": "https://chat.whatsapp.com/a"}, "400 invalid_request link:invalid_string"},
		{"POST", "/v1/groups/join", map[string]any{"code": "AAAAAAAAAAAA"}, "404 not_found code:not_found"},
		{"POST", "/v1/groups/join", map[string]any{"code": "AAAAAAAAAAAA", "extra": 1}, "400 invalid_request extra:unrecognized_keys"},
		{"GET", "/v1/groups/" + unknown + "/requests", nil, "404 not_found id:not_found"},
		{"GET", "/v1/groups/" + id + "/requests?limit=0", nil, "400 invalid_request limit:too_small"},
		{"POST", "/v1/groups/" + id + "/requests/approve", map[string]any{}, "422 validation_failed participants:invalid_type"},
		{"POST", "/v1/groups/" + id + "/requests/approve", map[string]any{"participants": []string{}}, "422 validation_failed participants:too_big"},
		{"POST", "/v1/groups/" + id + "/requests/approve", map[string]any{"participants": []string{"+15550401001", "hello"}}, "422 validation_failed participants.1:invalid_string"},
		{"POST", "/v1/groups/" + id + "/requests/reject", map[string]any{"participants": []string{"+15550401001", "15550401001@c.us"}}, "422 validation_failed participants.1:duplicate"},
		{"POST", "/v1/groups/" + memberOf + "/requests/reject", map[string]any{"participants": []string{"+15550401001"}}, "409 conflict id:not_an_admin"},
		{"GET", "/v1/groups/nope/community", nil, "400 invalid_request id:invalid_string"},
		{"GET", "/v1/groups/" + unknown + "/community", nil, "404 not_found id:not_found"},
		{"PATCH", "/v1/groups/" + id, map[string]any{"settings": map[string]any{"joinApproval": "yes"}}, "400 invalid_request settings.joinApproval:invalid_type"},
	} {
		if r := e.Do(tc.method, tc.path, e.Key, tc.body); errorOf(r) != tc.want {
			t.Errorf("%s %s %v: %s, want %s (%s)", tc.method, tc.path, tc.body, errorOf(r), tc.want, r.Raw)
		}
	}
}

// TestGroupInvitesNotSupported: an engine without the capability answers 501
// not_supported naming it, and changes nothing.
func TestGroupInvitesNotSupported(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	id := createdGroup(t, e, "Bare")
	attach(e, ws, bareEngine{e.App.Sandbox.EngineFor(ws, "eng_bare")})
	q := "?engineId=eng_bare"
	for _, c := range []struct {
		method, path string
		body         any
		capability   string
	}{
		{"GET", "/v1/groups/" + id + "/invite" + q, nil, "group_invites"},
		{"POST", "/v1/groups/" + id + "/invite/reset" + q, nil, "group_invites"},
		{"GET", "/v1/groups/invites/SBXbookclub" + q, nil, "group_invites"},
		{"POST", "/v1/groups/join" + q, map[string]any{"code": "SBXbookclub"}, "group_invites"},
		{"GET", "/v1/groups/" + id + "/requests" + q, nil, "group_requests"},
		{"POST", "/v1/groups/" + id + "/requests/approve" + q, map[string]any{"participants": []string{"+15550401001"}}, "group_requests"},
		{"GET", "/v1/groups/" + id + "/community" + q, nil, "communities"},
	} {
		r := e.Do(c.method, c.path, e.Key, c.body)
		d, _ := r.Error()["details"].([]any)
		if r.Status != 501 || r.Error()["code"] != "not_supported" || len(d) != 1 || d[0].(map[string]any)["message"] != "capability "+c.capability {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
}
