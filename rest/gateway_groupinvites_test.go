package rest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
)

// The group lifecycle operations (issue 31 item 6) through a gateway engine:
// each reaches the session's engine call with the group, code and
// participants (the whatsmeow calls behind them are engine/gateway's tests),
// and what the session reports is stored and answered.

// fakeGatewayGroup is the group the fake gateway's network holds.
const fakeGatewayGroup = "120363000000000077@g.us"

// GroupInviteCode implements engine.GroupInviter.
func (f *fakeGateway) GroupInviteCode(_ context.Context, groupID string, reset bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "GwCode1234", f.contactCall(fmt.Sprintf("GroupInviteCode %s %t", groupID, reset))
}

// GroupInvitePreview implements engine.GroupInviter: GwCode1234 is the only
// code there is.
func (f *fakeGateway) GroupInvitePreview(_ context.Context, code string) (engine.GroupPreview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall("GroupInvitePreview " + code); err != nil {
		return engine.GroupPreview{}, err
	}
	if code != "GwCode1234" {
		return engine.GroupPreview{}, fmt.Errorf("%w: no such code", engine.ErrNotFound)
	}
	return engine.GroupPreview{GroupID: fakeGatewayGroup, Name: "Gateway club", ParticipantCount: 2, Owner: "15554445555@c.us"}, nil
}

// JoinGroup implements engine.GroupInviter: the group is reported whole, as the
// gateway reports it, before it answers.
func (f *fakeGateway) JoinGroup(ctx context.Context, code string) (string, error) {
	f.mu.Lock()
	err := f.contactCall("JoinGroup " + code)
	f.mu.Unlock()
	if err != nil {
		return "", err
	}
	created := time.Unix(1_800_000_000, 0).UTC()
	cs := engine.ChatState{ID: fakeGatewayGroup, Kind: engine.ChatGroup, Name: "Gateway club", Owner: "15554445555@c.us", CreatedAt: &created,
		Participants: []engine.Participant{{ID: "15554445555@c.us", IsSuperAdmin: true}, {ID: "15550001111@c.us"}}}
	ev := engine.Event{ID: "wa_group_created_" + cs.ID, Type: engine.EventGroup, WorkspaceID: f.cfg.WorkspaceID, EngineID: f.cfg.EngineID, At: time.Now(),
		Group: &engine.GroupChange{GroupID: cs.ID, Action: engine.GroupCreated, By: "15550001111@c.us", Me: "15550001111@c.us", Chat: &cs}}
	return cs.ID, f.cfg.Sink.HandleEvent(ctx, ev)
}

// GroupRequests implements engine.GroupRequester.
func (f *fakeGateway) GroupRequests(_ context.Context, groupID string) ([]engine.JoinRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []engine.JoinRequest{{ChatID: "15557770001@c.us", RequestedAt: time.Unix(1_800_000_000, 0).UTC()}}, f.contactCall("GroupRequests " + groupID)
}

// AnswerGroupRequests implements engine.GroupRequester: only 15557770001
// asked.
func (f *fakeGateway) AnswerGroupRequests(_ context.Context, groupID string, ps []string, approve bool) ([]engine.Added, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]engine.Added, len(ps))
	for i, p := range ps {
		out[i] = engine.Added{Participant: p, Added: p == "15557770001@c.us"}
		if !out[i].Added {
			out[i].Code, out[i].Message = "not_requested", p+" did not ask"
		}
	}
	return out, f.contactCall(fmt.Sprintf("AnswerGroupRequests %s %s %t", groupID, strings.Join(ps, ","), approve))
}

// SetGroupJoinApproval implements engine.GroupRequester.
func (f *fakeGateway) SetGroupJoinApproval(_ context.Context, groupID string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.contactCall(fmt.Sprintf("SetGroupJoinApproval %s %t", groupID, on))
}

// Community implements engine.Communities.
func (f *fakeGateway) Community(_ context.Context, groupID string) (engine.Community, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return engine.Community{GroupID: groupID, ParentGroupID: "120363000000000070@g.us", SubGroups: []engine.SubGroup{}}, f.contactCall("Community " + groupID)
}

func TestGatewayGroupLifecycle(t *testing.T) {
	e, f, id := contactsGateway(t)
	q := "?engineId=" + id

	// Join by link: the session is asked the bare code; the group it reported
	// is stored and answered with its participants.
	r := e.Do("POST", "/v1/groups/join"+q, e.Key, map[string]any{"link": "https://chat.whatsapp.com/GwCode1234"})
	if r.Status != 200 || r.Data()["id"] != fakeGatewayGroup || r.Data()["name"] != "Gateway club" || r.Data()["participantCount"].(float64) != 2 {
		t.Fatalf("join: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/v1/groups/"+fakeGatewayGroup, e.Key, nil); r.Status != 200 {
		t.Errorf("the joined group, stored: %d %s", r.Status, r.Raw)
	}
	p := e.Do("GET", "/v1/groups/invites/GwCode1234"+q, e.Key, nil)
	if p.Status != 200 || p.Data()["name"] != "Gateway club" || p.Data()["owner"] != "15554445555@c.us" {
		t.Errorf("preview: %d %s", p.Status, p.Raw)
	}
	if r := e.Do("GET", "/v1/groups/invites/NoSuchCode1"+q, e.Key, nil); errorOf(r) != "404 not_found code:not_found" {
		t.Errorf("unknown code: %s", errorOf(r))
	}
	inv := e.Do("POST", "/v1/groups/"+fakeGatewayGroup+"/invite/reset"+q, e.Key, nil)
	if inv.Status != 200 || inv.Data()["link"] != "https://chat.whatsapp.com/GwCode1234" || inv.Data()["engineId"] != id {
		t.Errorf("reset: %d %s", inv.Status, inv.Raw)
	}
	if r := e.Do("GET", "/v1/groups/"+fakeGatewayGroup+"/invite"+q, e.Key, nil); r.Status != 200 {
		t.Errorf("invite: %d %s", r.Status, r.Raw)
	}
	reqs := e.Do("GET", "/v1/groups/"+fakeGatewayGroup+"/requests"+q, e.Key, nil)
	if reqs.Status != 200 || len(reqs.List()) != 1 || reqs.List()[0]["chatId"] != "15557770001@c.us" || reqs.List()[0]["requestedAt"] != "2027-01-15T08:00:00Z" {
		t.Errorf("requests: %d %s", reqs.Status, reqs.Raw)
	}
	a := e.Do("POST", "/v1/groups/"+fakeGatewayGroup+"/requests/reject"+q, e.Key, map[string]any{"participants": []string{"+15557770001", "+15557770002"}})
	if a.Status != 200 || a.Data()["approve"] != false {
		t.Fatalf("reject: %d %s", a.Status, a.Raw)
	}
	res := a.Data()["results"].([]any)
	if len(res) != 2 || res[0].(map[string]any)["participant"] != "+15557770001" || res[0].(map[string]any)["done"] != true ||
		res[1].(map[string]any)["code"] != "not_requested" {
		t.Errorf("reject results %v", res)
	}
	c := e.Do("GET", "/v1/groups/"+fakeGatewayGroup+"/community"+q, e.Key, nil)
	if c.Status != 200 || c.Data()["parentGroupId"] != "120363000000000070@g.us" || c.Data()["isCommunity"] != false {
		t.Errorf("community: %d %s", c.Status, c.Raw)
	}
	callsAre(t, "the lifecycle", f, "JoinGroup GwCode1234", "GroupInvitePreview GwCode1234", "GroupInvitePreview NoSuchCode1",
		"GroupInviteCode "+fakeGatewayGroup+" true", "GroupInviteCode "+fakeGatewayGroup+" false", "GroupRequests "+fakeGatewayGroup,
		"AnswerGroupRequests "+fakeGatewayGroup+" 15557770001@c.us,15557770002@c.us false", "Community "+fakeGatewayGroup)

	// The approval setting goes through the default engine.
	makeDefault(t, e, id)
	r = e.Do("PATCH", "/v1/groups/"+fakeGatewayGroup, e.Key, map[string]any{"settings": map[string]any{"joinApproval": true}})
	if r.Status != 200 {
		t.Errorf("approval: %d %s", r.Status, r.Raw)
	}
	callsAre(t, "approval", f, "SetGroupJoinApproval "+fakeGatewayGroup+" true")

	// A request reported by the session is a webhook event.
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "group.join_request")
	f.report(t, engine.Event{ID: "wa_req_1", Type: engine.EventGroup, Group: &engine.GroupChange{GroupID: fakeGatewayGroup,
		Action: engine.GroupJoinRequest, Participants: []string{"15557770003@c.us"}, By: "15557770003@c.us", Me: "15550001111@c.us"}})
	e.Eventually(10*time.Second, "the join request event", func() bool {
		evs := eventsOf(rc, fakeGatewayGroup)
		return len(evs) == 1 && cmp.Equal(evs[0], groupEvent{Type: "group.join_request", Action: "join_request", By: "15557770003@c.us", Participants: []string{"15557770003@c.us"}})
	})

	// Bad input never reaches the session.
	if r := e.Do("POST", "/v1/groups/"+fakeGatewayGroup+"/requests/approve"+q, e.Key, map[string]any{"participants": []string{"x"}}); errorOf(r) != "422 validation_failed participants.0:invalid_string" {
		t.Errorf("bad participant: %s", errorOf(r))
	}
	if r := e.Do("GET", "/v1/groups/invites/no!"+q, e.Key, nil); errorOf(r) != "400 invalid_request code:invalid_string" {
		t.Errorf("bad code: %s", errorOf(r))
	}
	callsAre(t, "bad input", f)
}
