package rest_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
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
