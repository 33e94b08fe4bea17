package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
)

// groupEvents are the webhook events of group changes.
var groupEvents = []string{"participant_joined_via_link_webhook", "participant_added_by_admin_webhook",
	"participant_left_group_webhook", "participant_kicked_from_group_webhook", "group_admin_changed_webhook",
	"group_name_changed_webhook", "group_description_changed_webhook", "group_message_pinned_webhook"}

// groupEvent is the part of a group event's data a test compares.
type groupEvent struct {
	Type, Action, By, Value string
	Participants            []string
}

// eventsOf returns the group events the receiver got about group, in the order
// of their timestamps (deliveries may arrive in any order).
func eventsOf(rc *receiver, group string) []groupEvent {
	var out []groupEvent
	all := rc.all()
	at := func(r received) string {
		d, _ := r.payload["data"].(map[string]any)
		ts, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(d["timestamp"]))
		return ts.UTC().Format("2006-01-02T15:04:05.000000000")
	}
	slices.SortStableFunc(all, func(a, b received) int { return strings.Compare(at(a), at(b)) })
	for _, r := range all {
		d, _ := r.payload["data"].(map[string]any)
		if d == nil || d["groupId"] != group {
			continue
		}
		ev := groupEvent{Type: fmt.Sprint(r.payload["type"]), Action: fmt.Sprint(d["action"]), By: fmt.Sprint(d["by"])}
		if v, ok := d["value"].(string); ok {
			ev.Value = v
		}
		ps, _ := d["participants"].([]any)
		for _, p := range ps {
			ev.Participants = append(ev.Participants, p.(string))
		}
		if _, ok := d["timestamp"].(string); !ok {
			ev.Type += " (no timestamp)"
		}
		out = append(out, ev)
	}
	return out
}

// members returns a group's participants by chat id, as GET include=participants answers.
func members(t *testing.T, e *apptest.Env, key, group string) map[string]map[string]any {
	t.Helper()
	r := e.Do("GET", "/v1/groups/"+group+"?include=participants", key, nil)
	if r.Status != 200 {
		t.Fatalf("get group %s: %d %s", group, r.Status, r.Raw)
	}
	out := map[string]map[string]any{}
	for _, p := range r.Data()["participants"].([]any) {
		out[p.(map[string]any)["chatId"].(string)] = p.(map[string]any)
	}
	if n := int(r.Data()["participantCount"].(float64)); n != len(out) {
		t.Errorf("participantCount %d, participants %d", n, len(out))
	}
	return out
}

func commonGroupIDs(e *apptest.Env, contact string) []string {
	var out []string
	for _, g := range e.Do("GET", "/v1/contacts/"+contact+"/common_groups?limit=200", e.Key, nil).List() {
		out = append(out, g["id"].(string))
	}
	return out
}

// errorOf is the status, code and first detail of an error answer.
func errorOf(r *apptest.Response) string {
	if r.Status < 300 {
		return fmt.Sprint(r.Status)
	}
	s := fmt.Sprintf("%d %s", r.Status, r.Error()["code"])
	if d, _ := r.Error()["details"].([]any); len(d) > 0 {
		s += fmt.Sprintf(" %s:%s", d[0].(map[string]any)["path"], d[0].(map[string]any)["code"])
	}
	return s
}

func pngDataURL(t *testing.T, w, h int) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes()), b.Bytes()
}

// The whole life of a group made through the API: create (with the participants
// the network refuses), the members' own moves, rename, settings, members in and
// out, admins up and down, the picture, leaving; each change answers the group as
// the store holds it at once, emits its event, and common groups follow.
func TestGroupLifecycle(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, groupEvents...)

	r := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Q4 Planning", "participants": []string{
		"+15550401001", "+15550400000", "+15550403333", "+15550404444", "15550402222@c.us"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	g := r.Data()
	id, me := g["id"].(string), g["owner"].(string)
	if !strings.HasSuffix(id, "@g.us") || g["name"] != "Q4 Planning" || g["participantCount"].(float64) != 4 {
		t.Fatalf("created group: %s", r.Raw)
	}
	var failed []string
	for _, f := range g["failedParticipants"].([]any) {
		f := f.(map[string]any)
		failed = append(failed, fmt.Sprintf("%s %s %s", f["participant"], f["chatId"], f["code"]))
	}
	if diff := cmp.Diff([]string{"+15550400000 15550400000@c.us not_on_network", "+15550403333 15550403333@c.us privacy_restricted"}, failed); diff != "" {
		t.Errorf("failed participants (-want +got):\n%s", diff)
	}
	var roles []string
	for _, p := range g["participants"].([]any) {
		p := p.(map[string]any)
		roles = append(roles, fmt.Sprintf("%s %v %v", p["chatId"], p["isAdmin"], p["isSuperAdmin"]))
	}
	if diff := cmp.Diff([]string{me + " true true", "15550401001@c.us false false", "15550402222@c.us false false", "15550404444@c.us false false"}, roles); diff != "" {
		t.Errorf("participants (-want +got):\n%s", diff)
	}
	if !slices.Contains(commonGroupIDs(e, "15550401001@c.us"), id) {
		t.Errorf("common groups of a new participant miss %s", id)
	}

	// The members' own moves: 3333 joins through the invite, 4444 leaves.
	e.Eventually(10*time.Second, "3333 joins and 4444 leaves", func() bool {
		m := members(t, e, e.Key, id)
		return m["15550403333@c.us"] != nil && m["15550404444@c.us"] == nil
	})

	// Get and list.
	if r := e.Do("GET", "/v1/groups/"+id, e.Key, nil); r.Status != 200 || r.Data()["participants"] != nil || r.Data()["announce"] != false {
		t.Errorf("get without include: %d %s", r.Status, r.Raw)
	}
	if list := e.Do("GET", "/v1/groups?searchToken=q4%20plan", e.Key, nil); total(t, list) != 1 || list.List()[0]["id"] != id {
		t.Errorf("list by search: %s", list.Raw)
	} else if _, ok := list.List()[0]["announce"]; ok {
		t.Errorf("list items carry the full shape: %s", list.Raw)
	}

	// Rename, describe, settings: one event each (settings have none).
	r = e.Do("PATCH", "/v1/groups/"+id, e.Key, map[string]any{"name": "Q4 Plans", "settings": map[string]any{
		"description": "Budget and hiring", "announce": true}})
	if r.Status != 200 || r.Data()["name"] != "Q4 Plans" || r.Data()["description"] != "Budget and hiring" || r.Data()["announce"] != true {
		t.Fatalf("update: %d %s", r.Status, r.Raw)
	}
	r = e.Do("PATCH", "/v1/groups/"+id, e.Key, map[string]any{"settings": map[string]any{"editInfoAdminsOnly": true}})
	if r.Status != 200 || r.Data()["restrict"] != true {
		t.Errorf("editInfoAdminsOnly: %d %s", r.Status, r.Raw)
	}

	// Members in; an existing member is a conflict that adds nobody.
	r = e.Do("POST", "/v1/groups/"+id+"/members", e.Key, map[string]any{"participants": []string{"+15550401002"}})
	if r.Status != 200 || r.Data()["participantCount"].(float64) != 5 || r.Data()["failedParticipants"] != nil {
		t.Fatalf("add member: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/groups/"+id+"/members", e.Key, map[string]any{"participants": []string{"+15550401003", "+15550401002"}}); errorOf(r) != "409 conflict participants:already_a_member" {
		t.Errorf("add existing member: %s %s", errorOf(r), r.Raw)
	}
	if r := e.Do("POST", "/v1/groups/"+id+"/members", e.Key, map[string]any{"chatId": "15550401002@c.us"}); errorOf(r) != "409 conflict chatId:already_a_member" {
		t.Errorf("add existing member by chatId: %s", errorOf(r))
	}
	if m := members(t, e, e.Key, id); m["15550401003@c.us"] != nil {
		t.Errorf("a refused add half-happened: %v", m)
	}

	// Admins up and down.
	r = e.Do("POST", "/v1/groups/"+id+"/members/+15550401001/admin", e.Key, nil)
	if r.Status != 200 || members(t, e, e.Key, id)["15550401001@c.us"]["isAdmin"] != true {
		t.Fatalf("promote: %d %s", r.Status, r.Raw)
	}
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/members/15550401001@c.us/admin", "409 conflict chatId:already_an_admin"},
		{"DELETE", "/members/15550401002@c.us/admin", "409 conflict chatId:participant_not_an_admin"},
		{"DELETE", "/members/" + me + "/admin", "409 conflict chatId:self"},
		{"DELETE", "/members/15550409999@c.us", "409 conflict chatId:not_a_participant"},
		{"POST", "/members/15550409999@c.us/admin", "409 conflict chatId:not_a_participant"},
	} {
		if r := e.Do(tc.method, "/v1/groups/"+id+tc.path, e.Key, nil); errorOf(r) != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.path, errorOf(r), tc.want)
		}
	}
	if r := e.Do("DELETE", "/v1/groups/"+id+"/members/15550401001@c.us/admin", e.Key, nil); r.Status != 200 {
		t.Errorf("demote: %d %s", r.Status, r.Raw)
	}

	// Out: common groups follow at once.
	if r := e.Do("DELETE", "/v1/groups/"+id+"/members/%2B15550401001", e.Key, nil); r.Status != 200 || r.Data()["participantCount"].(float64) != 4 {
		t.Fatalf("remove: %d %s", r.Status, r.Raw)
	}
	if slices.Contains(commonGroupIDs(e, "15550401001@c.us"), id) {
		t.Errorf("common groups of a removed participant still hold %s", id)
	}

	// The picture: a real PNG; anything else is refused.
	pic, _ := pngDataURL(t, 64, 64)
	if r := e.Do("PUT", "/v1/groups/"+id+"/picture", e.Key, map[string]any{"fileDataUrl": pic}); r.Status != 200 {
		t.Errorf("picture: %d %s", r.Status, r.Raw)
	}

	// 2222 made admin renames the group, describes it and pins its latest message.
	sent := e.Do("POST", "/v1/messages/"+id, e.Key, map[string]any{"type": "text", "text": "agenda attached"})
	if sent.Status != 200 && sent.Status != 201 {
		t.Fatalf("send to group: %d %s", sent.Status, sent.Raw)
	}
	key := sent.Data()["id"].(string)
	if r := e.Do("POST", "/v1/groups/"+id+"/members/15550402222@c.us/admin", e.Key, nil); r.Status != 200 {
		t.Fatalf("promote 2222: %d %s", r.Status, r.Raw)
	}
	e.Eventually(10*time.Second, "2222 pins the latest message", func() bool {
		return len(e.Do("GET", "/v1/messages/pinned/"+id, e.Key, nil).List()) == 1
	})
	if r := e.Do("GET", "/v1/groups/"+id, e.Key, nil); r.Data()["name"] != "Q4 Plans ✨" || !strings.Contains(r.Data()["description"].(string), "15550402222") {
		t.Errorf("after 2222's moves: %s", r.Raw)
	}

	// Leaving: idempotent, and then the account changes nothing.
	if r := e.Do("DELETE", "/v1/groups/"+id+"/members/me", e.Key, nil); r.Status != 204 || len(r.Raw) != 0 {
		t.Fatalf("leave: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("DELETE", "/v1/groups/"+id+"/members/me", e.Key, nil); r.Status != 204 {
		t.Errorf("leave again: %d %s", r.Status, r.Raw)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "", map[string]any{"name": "Mine again"}},
		{"POST", "/members", map[string]any{"participants": []string{"+15550401001"}}},
		{"DELETE", "/members/15550401002@c.us", nil},
		{"POST", "/members/15550401002@c.us/admin", nil},
		{"PUT", "/picture", map[string]any{"fileDataUrl": pic}},
	} {
		if r := e.Do(tc.method, "/v1/groups/"+id+tc.path, e.Key, tc.body); errorOf(r) != "409 conflict id:not_a_member" {
			t.Errorf("%s %s after leaving: %s", tc.method, tc.path, errorOf(r))
		}
	}
	if m := members(t, e, e.Key, id); len(m) != 0 {
		t.Errorf("participants after leaving: %v", m)
	}
	if slices.Contains(commonGroupIDs(e, "15550401002@c.us"), id) {
		t.Errorf("a group the account left is still a common group")
	}

	// Every change emitted its event, in order, with its data.
	want := []groupEvent{
		{"participant_added_by_admin_webhook", "added", me, "", []string{"15550401001@c.us", "15550404444@c.us", "15550402222@c.us"}},
		{"participant_joined_via_link_webhook", "joined_via_link", "15550403333@c.us", "", []string{"15550403333@c.us"}},
		{"participant_left_group_webhook", "left", "15550404444@c.us", "", []string{"15550404444@c.us"}},
		{"group_name_changed_webhook", "name_changed", me, "Q4 Plans", nil},
		{"group_description_changed_webhook", "description_changed", me, "Budget and hiring", nil},
		{"participant_added_by_admin_webhook", "added", me, "", []string{"15550401002@c.us"}},
		{"group_admin_changed_webhook", "admin_changed", me, "promoted", []string{"15550401001@c.us"}},
		{"group_admin_changed_webhook", "admin_changed", me, "demoted", []string{"15550401001@c.us"}},
		{"participant_kicked_from_group_webhook", "kicked", me, "", []string{"15550401001@c.us"}},
		{"group_admin_changed_webhook", "admin_changed", me, "promoted", []string{"15550402222@c.us"}},
		{"group_name_changed_webhook", "name_changed", "15550402222@c.us", "Q4 Plans ✨", nil},
		{"group_description_changed_webhook", "description_changed", "15550402222@c.us", "Be kind and stay on topic. (15550402222)", nil},
		{"group_message_pinned_webhook", "message_pinned", "15550402222@c.us", key, nil},
		{"participant_left_group_webhook", "left", me, "", []string{me}},
	}
	e.Eventually(10*time.Second, "every group event", func() bool { return len(eventsOf(rc, id)) >= len(want) })
	if diff := cmp.Diff(want, eventsOf(rc, id)); diff != "" {
		t.Errorf("group events (-want +got):\n%s", diff)
	}
}

// The network's rules for groups the account did not create: only admins change
// settings and members, the creator is never demoted or removed, and a plain
// member may rename an unrestricted group but not a restricted one.
func TestGroupRulesInTheWorld(t *testing.T) {
	e := newEnv(t)
	var adminOf, memberOf map[string]any
	for _, g := range e.Do("GET", "/v1/groups?includeArchive=true&limit=200", e.Key, nil).List() {
		full := e.Do("GET", "/v1/groups/"+g["id"].(string)+"?include=participants", e.Key, nil).Data()
		for _, p := range full["participants"].([]any) {
			p := p.(map[string]any)
			if p["isSuperAdmin"] == true || !strings.HasSuffix(p["chatId"].(string), "9000@c.us") {
				continue
			}
			if p["isAdmin"] == true && adminOf == nil {
				adminOf = full
			} else if p["isAdmin"] == false && memberOf == nil {
				memberOf = full
			}
		}
	}
	if adminOf == nil || memberOf == nil {
		t.Fatalf("the world has no group the account administers (%v) or only belongs to (%v)", adminOf != nil, memberOf != nil)
	}
	creator := adminOf["owner"].(string)
	id := adminOf["id"].(string)
	for _, tc := range []struct{ method, path, want string }{
		{"DELETE", "/members/" + creator + "/admin", "409 conflict chatId:group_creator"},
		{"DELETE", "/members/" + creator, "409 conflict chatId:group_creator"},
	} {
		if r := e.Do(tc.method, "/v1/groups/"+id+tc.path, e.Key, nil); errorOf(r) != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.path, errorOf(r), tc.want)
		}
	}
	if r := e.Do("PATCH", "/v1/groups/"+id, e.Key, map[string]any{"settings": map[string]any{"announce": true}}); r.Status != 200 || r.Data()["announce"] != true {
		t.Errorf("an admin changes settings: %d %s", r.Status, r.Raw)
	}
	// A change the sandbox is told to simulate is the network's too.
	var leaver string
	for _, p := range adminOf["participants"].([]any) {
		if p := p.(map[string]any); p["isAdmin"] == false {
			leaver = p["chatId"].(string)
		}
	}
	if r := e.Do("POST", "/v1/sandbox/group-changes", e.Key, map[string]any{"groupId": id, "action": "left",
		"participants": []string{leaver}, "by": leaver}); r.Status != 202 {
		t.Fatalf("simulate: %d %s", r.Status, r.Raw)
	}
	e.Eventually(10*time.Second, "the simulated leave is stored", func() bool { return members(t, e, e.Key, id)[leaver] == nil })
	if r := e.Do("DELETE", "/v1/groups/"+id+"/members/"+leaver, e.Key, nil); errorOf(r) != "409 conflict chatId:not_a_participant" {
		t.Errorf("remove a member who left: %s", errorOf(r))
	}

	id = memberOf["id"].(string)
	var plain string
	for _, p := range memberOf["participants"].([]any) {
		if p := p.(map[string]any); p["isAdmin"] == false && !strings.HasSuffix(p["chatId"].(string), "9000@c.us") {
			plain = p["chatId"].(string)
		}
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "", map[string]any{"settings": map[string]any{"announce": true}}},
		{"POST", "/members", map[string]any{"participants": []string{"+15550401001"}}},
		{"DELETE", "/members/" + plain, nil},
		{"POST", "/members/" + plain + "/admin", nil},
	} {
		if r := e.Do(tc.method, "/v1/groups/"+id+tc.path, e.Key, tc.body); errorOf(r) != "409 conflict id:not_an_admin" {
			t.Errorf("%s %s as a plain member: %s", tc.method, tc.path, errorOf(r))
		}
	}
	rename := e.Do("PATCH", "/v1/groups/"+id, e.Key, map[string]any{"name": "Renamed by a member"})
	if memberOf["restrict"] == true && errorOf(rename) != "409 conflict id:not_an_admin" {
		t.Errorf("a member renames a restricted group: %s", errorOf(rename))
	} else if memberOf["restrict"] == false && (rename.Status != 200 || rename.Data()["name"] != "Renamed by a member") {
		t.Errorf("a member renames an unrestricted group: %s", errorOf(rename))
	}
}

// The world's groups act on their own, one turn at a time: each turn is an event,
// and the store holds its outcome.
func TestWorldGroupsTakeTurns(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, groupEvents...)
	groups := e.Do("GET", "/v1/groups?includeArchive=true&limit=200", e.Key, nil).List() // syncs the world
	if len(groups) != sandbox.WorldGroups {
		t.Fatalf("world groups: %d", len(groups))
	}
	// Six hours on: the turns of the last hour are taken.
	if _, err := e.App.Sandbox.SettleGroups(context.Background(), time.Now().Add(sandbox.WorldTurnEvery+59*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var got []received
	e.Eventually(10*time.Second, "turns of the world's groups", func() bool {
		got = nil
		for _, typ := range groupEvents {
			got = append(got, rc.ofType(typ)...)
		}
		return len(got) >= 3
	})
	for _, ev := range got {
		d := ev.payload["data"].(map[string]any)
		id, action := d["groupId"].(string), d["action"].(string)
		var who string
		if ps, _ := d["participants"].([]any); len(ps) > 0 {
			who = ps[0].(string)
		}
		m := members(t, e, e.Key, id)
		g := e.Do("GET", "/v1/groups/"+id, e.Key, nil).Data()
		ok := true
		switch action {
		case "joined_via_link", "added":
			ok = m[who] != nil
		case "left", "kicked":
			ok = m[who] == nil
		case "admin_changed":
			ok = m[who]["isAdmin"] == true
		case "name_changed":
			ok = g["name"] == d["value"]
		case "description_changed":
			ok = g["description"] == d["value"]
		case "message_pinned":
			ok = len(e.Do("GET", "/v1/messages/pinned/"+id, e.Key, nil).List()) > 0
		}
		if !ok || d["by"] == "" {
			t.Errorf("%s in %s (by %v, %v): the store does not show it", action, id, d["by"], who)
		}
	}
}

// Bad input is a 400, 404, 409 or 422 naming the field, never a 500, and changes
// nothing; keys need the groups scopes; a workspace sees only its own groups.
func TestGroupBadInputScopesAndTenants(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Mine", "participants": []string{"+15550401001"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	id := r.Data()["id"].(string)
	before := total(t, e.Do("GET", "/v1/groups?includeArchive=true&limit=1", e.Key, nil))
	long := strings.Repeat("n", 101)
	bigImage := make([]byte, 20<<20+1)
	copy(bigImage, "\x89PNG\r\n\x1a\n")
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.png":
			_, _ = w.Write(bigImage)
		case "/ok.png":
			_, raw := pngDataURL(t, 8, 8)
			_, _ = w.Write(raw)
		default:
			http.NotFound(w, r)
		}
	}))
	defer images.Close()
	pic, raw := pngDataURL(t, 8, 8)
	for _, tc := range []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"group id of a contact", "GET", "/v1/groups/123@c.us", nil, "400 invalid_request id:invalid_string"},
		{"group id of nothing", "GET", "/v1/groups/abc", nil, "400 invalid_request id:invalid_string"},
		{"unknown group", "GET", "/v1/groups/120363999999999999@g.us", nil, "404 not_found id:not_found"},
		{"unknown include", "GET", "/v1/groups/" + id + "?include=members", nil, "400 invalid_request include:invalid_enum_value"},
		{"search too long", "GET", "/v1/groups?searchToken=" + strings.Repeat("x", 129), nil, "400 invalid_request searchToken:too_big"},
		{"limit", "GET", "/v1/groups?limit=201", nil, "400 invalid_request limit:too_big"},
		{"no body", "POST", "/v1/groups", nil, "400 invalid_request body:invalid_type"},
		{"no name", "POST", "/v1/groups", map[string]any{"participants": []string{"+15550401001"}}, "422 validation_failed name:invalid_type"},
		{"no participants", "POST", "/v1/groups", map[string]any{"name": "x"}, "422 validation_failed participants:invalid_type"},
		{"empty name", "POST", "/v1/groups", map[string]any{"name": "  ", "participants": []string{"+15550401001"}}, "422 validation_failed name:too_small"},
		{"long name", "POST", "/v1/groups", map[string]any{"name": long, "participants": []string{"+15550401001"}}, "422 validation_failed name:too_big"},
		{"not E.164", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"5550401001"}}, "422 validation_failed participants.0:invalid_string"},
		{"a group as participant", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{id}}, "422 validation_failed participants.0:invalid_string"},
		{"twice", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"+15550401001", "15550401001@c.us"}}, "422 validation_failed participants.1:duplicate"},
		{"none", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{}}, "422 validation_failed participants:too_big"},
		{"unknown field", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"+15550401001"}, "topic": "y"}, "400 invalid_request topic:unrecognized_keys"},
		{"update nothing", "PATCH", "/v1/groups/" + id, map[string]any{}, "422 validation_failed body:too_small"},
		{"update long description", "PATCH", "/v1/groups/" + id, map[string]any{"settings": map[string]any{"description": strings.Repeat("d", 2049)}}, "422 validation_failed settings.description:too_big"},
		{"update contradiction", "PATCH", "/v1/groups/" + id, map[string]any{"settings": map[string]any{"restrict": true, "editInfoAdminsOnly": false}}, "422 validation_failed settings.editInfoAdminsOnly:invalid_value"},
		{"update empty name", "PATCH", "/v1/groups/" + id, map[string]any{"name": ""}, "422 validation_failed name:too_small"},
		{"update unknown", "PATCH", "/v1/groups/120363999999999999@g.us", map[string]any{"name": "x"}, "404 not_found id:not_found"},
		{"add not E.164", "POST", "/v1/groups/" + id + "/members", map[string]any{"participants": []string{"+1"}}, "422 validation_failed participants.0:invalid_string"},
		{"add both", "POST", "/v1/groups/" + id + "/members", map[string]any{"chatId": "+15550401002", "participants": []string{"+15550401003"}}, "422 validation_failed chatId:invalid_union"},
		{"add nobody", "POST", "/v1/groups/" + id + "/members", map[string]any{}, "422 validation_failed participants:invalid_type"},
		{"add to unknown", "POST", "/v1/groups/120363999999999999@g.us/members", map[string]any{"chatId": "+15550401002"}, "404 not_found id:not_found"},
		{"remove bad chatId", "DELETE", "/v1/groups/" + id + "/members/abc", nil, "400 invalid_request chatId:invalid_string"},
		{"promote bad chatId", "POST", "/v1/groups/" + id + "/members/" + id + "/admin", nil, "400 invalid_request chatId:invalid_string"},
		{"leave bad id", "DELETE", "/v1/groups/1@newsletter/members/me", nil, "400 invalid_request id:invalid_string"},
		{"leave unknown", "DELETE", "/v1/groups/120363999999999999@g.us/members/me", nil, "404 not_found id:not_found"},
		{"picture none", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileName": "a.png"}, "422 validation_failed fileDataUrl:invalid_type"},
		{"picture both", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": pic, "url": images.URL + "/ok.png"}, "422 validation_failed body:invalid_union"},
		{"picture not an image", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello, not a picture"))}, "422 validation_failed fileDataUrl:not_an_image"},
		{"picture truncated", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": base64.StdEncoding.EncodeToString(raw[:len(raw)-20])}, "422 validation_failed fileDataUrl:not_an_image"},
		{"picture not base64", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": "data:image/png;base64,***"}, "422 validation_failed fileDataUrl:invalid_string"},
		{"picture too big", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"url": images.URL + "/big.png"}, "422 validation_failed url:too_big"},
		{"picture url 404", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"url": images.URL + "/gone.png"}, "422 validation_failed url:fetch_failed"},
		{"picture wrong type", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": pic, "fileMimeType": "image/gif"}, "422 validation_failed fileMimeType:invalid_enum_value"},
		{"picture of unknown", "PUT", "/v1/groups/120363999999999999@g.us/picture", map[string]any{"fileDataUrl": pic}, "404 not_found id:not_found"},
	} {
		if r := e.Do(tc.method, tc.path, e.Key, tc.body); errorOf(r) != tc.want {
			t.Errorf("%s: %s, want %s (%s)", tc.name, errorOf(r), tc.want, r.Raw)
		}
	}
	if r := e.Do("PUT", "/v1/groups/"+id+"/picture", e.Key, map[string]any{"url": images.URL + "/ok.png"}); r.Status != 200 {
		t.Errorf("picture by url: %d %s", r.Status, r.Raw)
	}
	if n := total(t, e.Do("GET", "/v1/groups?includeArchive=true&limit=1", e.Key, nil)); n != before {
		t.Errorf("groups after bad input: %d, want %d", n, before)
	}
	if g := e.Do("GET", "/v1/groups/"+id+"?include=participants", e.Key, nil).Data(); g["name"] != "Mine" || g["participantCount"].(float64) != 2 {
		t.Errorf("the group changed on bad input: %v", g)
	}

	// Scopes.
	read := e.NewKey("default", "groups:read")
	none := e.NewKey("default", "chats:read")
	for _, tc := range []struct {
		key, method, path string
		body              any
		want              int
	}{
		{read, "GET", "/v1/groups", nil, 200},
		{read, "GET", "/v1/groups/" + id, nil, 200},
		{read, "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"+15550401001"}}, 403},
		{read, "PATCH", "/v1/groups/" + id, map[string]any{"name": "x"}, 403},
		{read, "POST", "/v1/groups/" + id + "/members", map[string]any{"chatId": "+15550401002"}, 403},
		{read, "DELETE", "/v1/groups/" + id + "/members/me", nil, 403},
		{read, "DELETE", "/v1/groups/" + id + "/members/+15550401001/admin", nil, 403},
		{read, "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": pic}, 403},
		{none, "GET", "/v1/groups", nil, 403},
		{none, "GET", "/v1/groups/" + id, nil, 403},
	} {
		if r := e.Do(tc.method, tc.path, tc.key, tc.body); r.Status != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.Status, tc.want)
		}
	}

	// Another workspace neither sees nor changes the group.
	other := e.NewKey("other", "*")
	if n := total(t, e.Do("GET", "/v1/groups?searchToken=Mine", other, nil)); n != 0 {
		t.Errorf("other workspace lists %d groups named Mine", n)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "", nil},
		{"PATCH", "", map[string]any{"name": "Theirs"}},
		{"POST", "/members", map[string]any{"chatId": "+15550401002"}},
		{"DELETE", "/members/+15550401001", nil},
		{"POST", "/members/+15550401001/admin", nil},
		{"DELETE", "/members/me", nil},
		{"PUT", "/picture", map[string]any{"fileDataUrl": pic}},
	} {
		if r := e.Do(tc.method, "/v1/groups/"+id+tc.path, other, tc.body); r.Status != 404 {
			t.Errorf("other workspace %s %s: %d %s", tc.method, tc.path, r.Status, r.Raw)
		}
	}
	if g := e.Do("GET", "/v1/groups/"+id+"?include=participants", e.Key, nil).Data(); g["name"] != "Mine" || g["participantCount"].(float64) != 2 {
		t.Errorf("another workspace changed the group: %v", g)
	}
}

// A picture URL is fetched only through the private-address guard.
func TestGroupPictureURLGuard(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.MediaAllowPrivate = false }})
	id := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Guarded", "participants": []string{"+15550401001"}}).Data()["id"].(string)
	fetched := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched = true }))
	defer srv.Close()
	for _, u := range []string{srv.URL + "/a.png", "https://127.0.0.1/a.png", "https://169.254.169.254/latest", "ftp://example.com/a.png"} {
		if r := e.Do("PUT", "/v1/groups/"+id+"/picture", e.Key, map[string]any{"url": u}); errorOf(r) != "422 validation_failed url:invalid_string" {
			t.Errorf("%s: %s", u, errorOf(r))
		}
	}
	if fetched {
		t.Errorf("a private address was fetched")
	}
}

// GraphQL has the same groups and mutations as REST.
func TestGroupsOverGraphQL(t *testing.T) {
	e := newEnv(t)
	gql := func(query string, vars map[string]any) map[string]any {
		t.Helper()
		r := e.Do("POST", "/graphql", e.Key, map[string]any{"query": query, "variables": vars})
		if r.Status != 200 || r.Body["errors"] != nil {
			t.Fatalf("graphql: %d %s", r.Status, r.Raw)
		}
		return r.Body["data"].(map[string]any)
	}
	d := gql(`mutation($p: [String!]!) { createGroup(name: "Graph", participants: $p) {
		group { id name owner participantCount participants { chatId isAdmin isSuperAdmin } }
		failedParticipants { participant code } } }`, map[string]any{"p": []string{"+15550401001", "+15550400000"}})
	res := d["createGroup"].(map[string]any)
	g := res["group"].(map[string]any)
	id := g["id"].(string)
	if g["participantCount"].(float64) != 2 || len(res["failedParticipants"].([]any)) != 1 {
		t.Fatalf("createGroup: %v", res)
	}
	rest := e.Do("GET", "/v1/groups/"+id+"?include=participants", e.Key, nil).Data()
	if diff := cmp.Diff(rest["participants"], g["participants"]); diff != "" {
		t.Errorf("participants: GraphQL and REST differ:\n%s", diff)
	}
	gql(`mutation($id: String!) { updateGroup(id: $id, input: {name: "Graph 2", announce: true}) { id } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { addGroupParticipants(id: $id, participants: ["+15550401002"]) { group { id } } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { promoteGroupParticipant(id: $id, participant: "+15550401002") { id } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { demoteGroupParticipant(id: $id, participant: "+15550401002") { id } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { removeGroupParticipant(id: $id, participant: "+15550401001") { id } }`, map[string]any{"id": id})
	d = gql(`query($id: String!) { group(id: $id) { name announce participantCount participants { chatId isAdmin } chat { kind } }
		groupList(searchToken: "Graph") { total items { id } } }`, map[string]any{"id": id})
	got := d["group"].(map[string]any)
	if got["name"] != "Graph 2" || got["announce"] != true || got["participantCount"].(float64) != 2 ||
		got["chat"].(map[string]any)["kind"] != "group" || d["groupList"].(map[string]any)["total"].(float64) != 1 {
		t.Errorf("group after mutations: %v", d)
	}
	// A list's participants (read for the whole page at once) are each group's own.
	list := gql(`{ groupList(limit: 200, includeArchive: true) { items { id participants { chatId name isAdmin isSuperAdmin } } } }`, nil)
	items := list["groupList"].(map[string]any)["items"].([]any)
	if len(items) < 3 {
		t.Fatalf("groupList: %v", list)
	}
	for _, it := range []any{items[0], items[len(items)/2], items[len(items)-1]} {
		it := it.(map[string]any)
		own := e.Do("GET", "/v1/groups/"+it["id"].(string)+"?include=participants", e.Key, nil).Data()
		for _, p := range it["participants"].([]any) { // REST leaves out a name it does not know
			if p := p.(map[string]any); p["name"] == nil {
				delete(p, "name")
			}
		}
		if diff := cmp.Diff(own["participants"], it["participants"]); diff != "" {
			t.Errorf("participants of %s: REST and groupList differ:\n%s", it["id"], diff)
		}
	}
	if d := gql(`mutation($id: String!) { leaveGroup(id: $id) }`, map[string]any{"id": id}); d["leaveGroup"] != true {
		t.Errorf("leaveGroup: %v", d)
	}
	r := e.Do("POST", "/graphql", e.Key, map[string]any{"query": `mutation($id: String!) { updateGroup(id: $id, input: {name: "x"}) { id } }`,
		"variables": map[string]any{"id": id}})
	errs, _ := r.Body["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "conflict" {
		t.Errorf("update after leaving over GraphQL: %s", r.Raw)
	}
}

// The groups the sandbox network keeps, and what their members plan, outlive a
// restart of Switchboard.
func TestGroupsOutliveARestart(t *testing.T) {
	dbURL := "sqlite://" + t.TempDir() + "/sb.db"
	cfg := func(c *app.Config) {
		c.DatabaseURL, c.RedisURL = dbURL, ""
		c.SandboxAckDelay = 500 * time.Millisecond
	}
	first := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	r := first.Do("POST", "/v1/groups", first.Key, map[string]any{"name": "Durable", "participants": []string{"+15550401001", "+15550403333"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	id := r.Data()["id"].(string)
	if r := first.Do("POST", "/v1/groups/"+id+"/members/+15550401001/admin", first.Key, nil); r.Status != 200 {
		t.Fatalf("promote: %d %s", r.Status, r.Raw)
	}
	first.Server.Close()
	first.App.Close() // before 3333 joined
	second := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	second.Key = first.Key
	second.Eventually(10*time.Second, "3333 joins after the restart", func() bool {
		return members(t, second, second.Key, id)["15550403333@c.us"] != nil
	})
	if r := second.Do("POST", "/v1/groups/"+id+"/members/+15550401001/admin", second.Key, nil); errorOf(r) != "409 conflict chatId:already_an_admin" {
		t.Errorf("promote again after the restart: %s", errorOf(r))
	}
}

// A participant ending in 5555 made admin promotes a member and removes another;
// a picture comes as a multipart upload too.
func TestGroupAdminMembersAct(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, groupEvents...)
	r := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Busy", "participants": []string{"+15550405555", "+15550401001", "+15550401002"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	id := r.Data()["id"].(string)
	if r := e.Do("POST", "/v1/groups/"+id+"/members/+15550405555/admin", e.Key, nil); r.Status != 200 {
		t.Fatalf("promote: %d %s", r.Status, r.Raw)
	}
	e.Eventually(10*time.Second, "5555 acts", func() bool { return len(eventsOf(rc, id)) >= 4 })
	got := eventsOf(rc, id)[2:]
	want := []groupEvent{
		{"group_admin_changed_webhook", "admin_changed", "15550405555@c.us", "promoted", []string{"15550401001@c.us"}},
		{"participant_kicked_from_group_webhook", "kicked", "15550405555@c.us", "", []string{"15550401002@c.us"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("5555's moves (-want +got):\n%s", diff)
	}
	m := members(t, e, e.Key, id)
	if m["15550401001@c.us"]["isAdmin"] != true || m["15550401002@c.us"] != nil {
		t.Errorf("members after 5555's moves: %v", m)
	}

	_, raw := pngDataURL(t, 16, 16)
	upload := func(part string, data []byte) *apptest.Response {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile(part, "pic.png")
		_, _ = fw.Write(data)
		_ = mw.WriteField("fileName", "pic.png")
		_ = mw.Close()
		req, _ := http.NewRequest("PUT", e.Server.URL+"/v1/groups/"+id+"/picture", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+e.Key)
		return e.Send(req)
	}
	if r := upload("file", raw); r.Status != 200 || r.Data()["participants"] == nil {
		t.Errorf("multipart picture: %d %s", r.Status, r.Raw)
	}
	if r := upload("file", []byte("GIF89a not really")); errorOf(r) != "422 validation_failed file:not_an_image" {
		t.Errorf("multipart non-image: %s", errorOf(r))
	}
	if r := upload("image", raw); errorOf(r) != "400 invalid_request image:unrecognized_keys" {
		t.Errorf("multipart unknown part: %s", errorOf(r))
	}
}

func TestGroupRulesOnSends(t *testing.T) {
	e := newEnv(t)
	// A world group where the account is a plain member, whose admins then
	// make it announce-only.
	var announced, owner string
	for _, g := range e.Do("GET", "/v1/groups?includeArchive=true&limit=200", e.Key, nil).List() {
		full := e.Do("GET", "/v1/groups/"+g["id"].(string)+"?include=participants", e.Key, nil).Data()
		mine := false
		for _, p := range full["participants"].([]any) {
			p := p.(map[string]any)
			if strings.HasSuffix(p["chatId"].(string), "9000@c.us") && p["isAdmin"] == false {
				mine = true
			}
		}
		if mine && announced == "" {
			announced, owner = full["id"].(string), full["owner"].(string)
		}
	}
	if announced == "" {
		t.Fatal("the world has no group the account is a plain member of")
	}
	ws := e.Do("GET", "/v1/account", e.Key, nil).Data()["id"].(string)
	yes := true
	if err := e.App.Sandbox.Engine(ws).SimulateGroupChange(context.Background(), engine.GroupChange{
		GroupID: announced, Action: engine.GroupSettingsChanged, By: owner, Announce: &yes}); err != nil {
		t.Fatal(err)
	}
	r := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Rules", "participants": []string{"+15550401001"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	own := r.Data()["id"].(string)
	if r := e.Do("PATCH", "/v1/groups/"+own, e.Key, map[string]any{"settings": map[string]any{"announce": true}}); r.Status != 200 {
		t.Fatalf("announce: %d %s", r.Status, r.Raw)
	}
	text := map[string]any{"type": "text", "text": "hello"}
	admin := schedule(e, own, text) // the admin of an announce-only group sends
	refused := schedule(e, announced, text)
	e.Eventually(10*time.Second, "the admin's message is carried", func() bool {
		return e.Do("GET", "/v1/scheduled-messages/"+admin["id"].(string), e.Key, nil).Data()["confirmedAt"] != nil
	})
	got := waitStatus(e, refused["id"].(string), "failed")
	if reason := fmt.Sprint(got["failureReason"]); !strings.Contains(reason, "only admins") {
		t.Errorf("failure reason %q", reason)
	}
	// The account that left its group cannot send to it.
	if r := e.Do("DELETE", "/v1/groups/"+own+"/members/me", e.Key, nil); r.Status != 204 {
		t.Fatalf("leave: %d %s", r.Status, r.Raw)
	}
	got = waitStatus(e, schedule(e, own, text)["id"].(string), "failed")
	if reason := fmt.Sprint(got["failureReason"]); !strings.Contains(reason, "not a participant") {
		t.Errorf("failure reason after leaving %q", reason)
	}
}
