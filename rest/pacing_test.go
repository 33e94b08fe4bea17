package rest_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
)

// Two out-of-process sandboxes with their own numbers (--phone) serve one
// workspace; a campaign pinned to one engine makes its messages through it and
// its daily cap is counted there: another campaign on the same engine shares
// the count, one on the other engine does not. The campaign shows its engineId,
// the list filters by it, and an unknown or another workspace's engine is a 404
// naming engineId.
func TestCampaignPinnedToEngine(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	engA, engB := createEngine(e, key, "remote"), createEngine(e, key, "remote")
	a, b := engA["id"].(string), engB["id"].(string)
	runSandboxAs(t, e.Server.URL, engA["token"].(string), "+15550001111")
	runSandboxAs(t, e.Server.URL, engB["token"].(string), "+15550002222")
	e.Eventually(10*time.Second, "both engines in ping", func() bool { return pinged(e, key, a) && pinged(e, key, b) })
	phoneOf := map[string]any{}
	for _, eng := range e.Do("GET", "/v1/engines", key, nil).List() {
		phoneOf[eng["id"].(string)] = eng["phone"]
	}
	if diff := cmp.Diff(map[string]any{a: "+15550001111", b: "+15550002222"}, phoneOf); diff != "" {
		t.Errorf("the engines' numbers (-want +got):\n%s", diff)
	}
	gqlEngine := e.Do("POST", "/graphql", key, map[string]any{"query": `query($id: String!) { engine(id: $id) { phone } }`,
		"variables": map[string]any{"id": b}})
	if got := gqlEngine.Data()["engine"]; !cmp.Equal(got, map[string]any{"phone": "+15550002222"}) {
		t.Errorf("GraphQL engine phone = %v (%s)", got, gqlEngine.Raw)
	}

	aud := createAudience(e, key, map[string]any{"name": "numbers", "contacts": phones(7000, 6)})
	campaign := func(engineID string, dailyCap int) map[string]any {
		return createCampaign(e, key, map[string]any{"name": "on " + engineID, "audienceId": aud["id"], "text": "Hi {firstName}",
			"engineId": engineID, "pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0, "dailyCap": dailyCap}})
	}
	made := func(id string, n int) map[string]int {
		e.T.Helper()
		var byEngine map[string]int
		e.Eventually(10*time.Second, "campaign "+id+" to make its messages", func() bool {
			byEngine = map[string]int{}
			ms := campaignMessages(e, id)
			for _, m := range ms {
				byEngine[m.EngineID]++
			}
			return len(ms) >= n
		})
		return byEngine
	}
	// B's cap (2) stops the first campaign after two messages, all through B.
	first := campaign(b, 2)
	if first["engineId"] != b {
		t.Errorf("created campaign engineId = %v, want %s", first["engineId"], b)
	}
	if got := made(first["cmpId"].(string), 2); !cmp.Equal(got, map[string]int{b: 2}) {
		t.Errorf("first campaign's messages by engine = %v, want 2 through %s", got, b)
	}
	// A has its own count: a campaign there makes its two.
	onA := campaign(a, 2)
	if got := made(onA["cmpId"].(string), 2); !cmp.Equal(got, map[string]int{a: 2}) {
		t.Errorf("campaign on A's messages by engine = %v, want 2 through %s", got, a)
	}
	// Another campaign on B, cap 3: B made 2 already, so one more.
	third := campaign(b, 3)
	if got := made(third["cmpId"].(string), 1); !cmp.Equal(got, map[string]int{b: 1}) {
		t.Errorf("third campaign's messages by engine = %v, want 1 through %s", got, b)
	}
	time.Sleep(500 * time.Millisecond) // a step that would wrongly make more has run by now
	for id, want := range map[string]int{first["cmpId"].(string): 2, onA["cmpId"].(string): 2, third["cmpId"].(string): 1} {
		if n := len(campaignMessages(e, id)); n != want {
			t.Errorf("campaign %s made %d messages, want %d (its engine's cap)", id, n, want)
		}
	}

	listed := func(query string) []any {
		var ids []any
		for _, c := range e.Do("GET", "/v1/campaigns"+query, key, nil).List() {
			ids = append(ids, c["cmpId"])
		}
		return ids
	}
	if diff := cmp.Diff([]any{third["cmpId"], first["cmpId"]}, listed("?engineId="+b)); diff != "" {
		t.Errorf("campaigns on B (-want +got):\n%s", diff)
	}
	if got := listed("?engineId=eng_nowhere"); len(got) != 0 {
		t.Errorf("campaigns on an unknown engine = %v", got)
	}

	gql := e.Do("POST", "/graphql", key, map[string]any{"query": `query($e: String) { campaignList(engineId: $e) { total items { id engineID } } }`,
		"variables": map[string]any{"e": a}})
	want := map[string]any{"total": float64(1), "items": []any{map[string]any{"id": onA["cmpId"], "engineID": a}}}
	if diff := cmp.Diff(want, gql.Data()["campaignList"]); diff != "" {
		t.Errorf("GraphQL campaignList(engineId) (-want +got):\n%s\n%s", diff, gql.Raw)
	}

	// PATCH moves a paused campaign to another engine, and back to the one
	// picked with ""; a running one is a 409.
	id := first["cmpId"].(string)
	if r := e.Do("PATCH", "/v1/campaigns/"+id, key, map[string]any{"engineId": a}); r.Status != 409 {
		t.Errorf("PATCH engineId of a running campaign = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/campaigns/"+id+"/pause", key, nil); r.Status != 200 {
		t.Fatalf("pause = %d %s", r.Status, r.Raw)
	}
	for to, want := range map[string]any{a: a, "": nil} {
		r := e.Do("PATCH", "/v1/campaigns/"+id, key, map[string]any{"engineId": to})
		if r.Status != 200 || r.Data()["engineId"] != want {
			t.Errorf("PATCH engineId %q = %d %s, want engineId %v", to, r.Status, r.Raw, want)
		}
	}

	// An engine the workspace does not have is a 404 naming engineId.
	other := createEngine(e, e.NewKey("other", "*"), "remote")
	for _, bad := range []string{"eng_nowhere", other["id"].(string)} {
		for _, r := range []*apptest.Response{
			e.Do("POST", "/v1/campaigns", key, map[string]any{"name": "x", "audienceId": aud["id"], "text": "hi", "engineId": bad}),
			e.Do("PATCH", "/v1/campaigns/"+id, key, map[string]any{"engineId": bad}),
		} {
			details, _ := r.Error()["details"].([]any)
			if r.Status != 404 || r.Error()["code"] != "not_found" || len(details) != 1 || details[0].(map[string]any)["path"] != "engineId" {
				t.Errorf("engineId %s = %d %s, want a 404 naming engineId", bad, r.Status, r.Raw)
			}
		}
	}
}
