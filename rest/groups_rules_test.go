package rest_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
)

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
