package rest_test

import (
	"testing"
)

// GraphQL serves the profile and the call settings through the same core as
// REST (the dashboard's queries among them).
func TestGraphQLProfileAndCalls(t *testing.T) {
	e := newEnv(t)
	d := gqlData(t, e, `mutation($in: ProfileInput!) { updateProfile(input: $in) { id pushName about } }`,
		map[string]any{"in": map[string]any{"pushName": "From GraphQL", "about": nil}})
	if p := d["updateProfile"].(map[string]any); p["pushName"] != "From GraphQL" {
		t.Errorf("updateProfile = %v", p)
	}
	d = gqlData(t, e, `{ profile { engineId id pushName about pictureUrl } }`, nil)
	p := d["profile"].(map[string]any)
	if r := e.Do("GET", "/v1/profile", e.Key, nil).Data(); r["pushName"] != p["pushName"] || r["engineId"] != p["engineId"] {
		t.Errorf("REST %v and GraphQL %v disagree", r, p)
	}
	d = gqlData(t, e, `mutation($id: String!, $in: EngineCallsInput!) { updateEngineCalls(id: $id, input: $in) { id rejectCalls rejectCallsMessage } }`,
		map[string]any{"id": p["engineId"], "in": map[string]any{"rejectCalls": true}})
	if en := d["updateEngineCalls"].(map[string]any); en["rejectCalls"] != true || en["rejectCallsMessage"] != nil {
		t.Errorf("updateEngineCalls = %v", en)
	}
	d = gqlData(t, e, `mutation($in: CallInput!) { simulateCall(input: $in) { id from video group rejected } }`,
		map[string]any{"in": map[string]any{"from": "+15550301009"}})
	if c := d["simulateCall"].(map[string]any); c["rejected"] != true || c["from"] != "15550301009@c.us" {
		t.Errorf("simulateCall = %v", c)
	}
	if res := gql(e, e.NewKey("default", "messages:read"), `{ profile { id } }`, nil); len(res.Errors) == 0 {
		t.Error("profile without profile:read answered")
	}
}
