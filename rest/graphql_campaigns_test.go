package rest_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// GraphQL runs the same core: audiences with their contacts and campaigns with
// their messages as connections, and the campaign's progress for a dashboard.
func TestGraphQLAudiencesAndCampaigns(t *testing.T) {
	e := newEnv(t)
	aud := gqlData(t, e, `mutation($in: AudienceInput!) { createAudience(input: $in) { id name contactCount } }`,
		map[string]any{"in": map[string]any{"name": "G", "contacts": []any{
			map[string]any{"to": "+15550600001", "variables": []any{map[string]any{"key": "firstName", "value": "Gia"}}},
			map[string]any{"to": "+15550600002"},
		}}})["createAudience"].(map[string]any)
	if aud["contactCount"] != 2.0 {
		t.Fatalf("createAudience %v", aud)
	}
	added := gqlData(t, e, `mutation($id: ID!) { addAudienceContacts(id: $id, contacts: [{to: "+15550600002"}, {to: "+15550600003"}]) { added skipped contactCount } }`,
		map[string]any{"id": aud["id"]})["addAudienceContacts"]
	if diff := cmp.Diff(map[string]any{"added": 1.0, "skipped": 1.0, "contactCount": 3.0}, added); diff != "" {
		t.Errorf("addAudienceContacts (-want +got):\n%s", diff)
	}
	contacts := gqlData(t, e, `query($id: ID!) { audience(id: $id) { contacts(first: 10, orderBy: {field: CREATED_AT, direction: ASC}) { totalCount edges { node { to variables { key value } } } } } }`,
		map[string]any{"id": aud["id"]})
	if n := dig(contacts, "audience", "contacts", "totalCount"); n != 3.0 {
		t.Errorf("contacts totalCount %v", n)
	}
	vars := map[any]any{}
	for i := 0; i < 3; i++ {
		node := dig(contacts, "audience", "contacts", "edges", i, "node").(map[string]any)
		vars[node["to"]] = node["variables"]
	}
	if diff := cmp.Diff([]any{map[string]any{"key": "firstName", "value": "Gia"}}, vars["15550600001@c.us"]); diff != "" {
		t.Errorf("variables of the first contact (-want +got):\n%s", diff)
	}

	c := gqlData(t, e, `mutation($in: CampaignInput!) { createCampaign(input: $in) { id status onMissingVariable pacing { minDelaySeconds maxDelaySeconds dailyCap } progress { total } } }`,
		map[string]any{"in": map[string]any{"name": "G", "audienceId": aud["id"], "text": "Hi {displayname}", "pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0}}})["createCampaign"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"minDelaySeconds": 0.0, "maxDelaySeconds": 0.0, "dailyCap": 1000.0}, c["pacing"]); diff != "" || c["status"] != "pending" || c["onMissingVariable"] != "fail" {
		t.Errorf("createCampaign %v %s", c, diff)
	}
	id := c["id"].(string)
	waitCampaign(e, id, "complete_delivered")
	// The campaign completes when every message is delivered; the sandbox's read
	// receipts follow a moment later.
	var got map[string]any
	e.Eventually(10*time.Second, "every campaign message read", func() bool {
		got = gqlData(t, e, `query($id: ID!) { campaign(id: $id) { status progress { total made queued sent delivered read failed remaining percent }
		messages(first: 10) { totalCount edges { node { to text status campaignID } } } } }`, map[string]any{"id": id})
		return dig(got, "campaign", "progress", "read") == 3.0
	})
	want := map[string]any{"total": 3.0, "made": 3.0, "queued": 0.0, "sent": 3.0, "delivered": 3.0, "read": 3.0, "failed": 0.0, "remaining": 0.0, "percent": 100.0}
	if diff := cmp.Diff(want, dig(got, "campaign", "progress")); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if n := dig(got, "campaign", "messages", "totalCount"); n != 3.0 {
		t.Errorf("messages totalCount %v", n)
	}
	texts := map[any]any{}
	for i := 0; i < 3; i++ {
		node := dig(got, "campaign", "messages", "edges", i, "node").(map[string]any)
		if node["campaignID"] != id {
			t.Errorf("message %v", node)
		}
		texts[node["to"]] = node["text"]
	}
	if texts["15550600001@c.us"] != "Hi Gia" || texts["15550600003@c.us"] != "Hi +15550600003" {
		t.Errorf("displayname resolved to %v", texts)
	}
	list := gqlData(t, e, `{ campaignList(status: "complete_delivered") { total items { id } } audienceList { total } }`, nil)
	if dig(list, "campaignList", "total") != 1.0 || dig(list, "audienceList", "total") != 1.0 {
		t.Errorf("lists %v", list)
	}
	res := gql(e, e.Key, `mutation($id: ID!) { pauseCampaign(id: $id) { status } }`, map[string]any{"id": id})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "conflict" {
		t.Errorf("pause a complete campaign: %+v", res.Errors)
	}
	reader := e.NewKey("default", "campaigns:read")
	res = gql(e, reader, `mutation($id: ID!) { cancelCampaign(id: $id) { status } }`, map[string]any{"id": id})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "insufficient_scope" {
		t.Errorf("cancel with campaigns:read: %+v", res.Errors)
	}
}

// Keys need campaigns:read to read and campaigns:write to act; another
// workspace sees nothing of a campaign.
func TestCampaignScopesAndTenants(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "s", "contacts": phones(40, 2)})
	writer := e.NewKey("default", "campaigns:write")
	c := createCampaign(e, writer, map[string]any{"name": "s", "audienceId": aud["id"], "text": "x", "pacing": slow})
	id := c["cmpId"].(string)
	if r := e.Do("GET", "/v1/campaigns/"+id, writer, nil); r.Status != 403 {
		t.Errorf("get with campaigns:write only: %d", r.Status)
	}
	reader := e.NewKey("default", "campaigns:read")
	if r := e.Do("GET", "/v1/campaigns", reader, nil); r.Status != 200 || r.Body["total"] != 1.0 {
		t.Errorf("list with campaigns:read: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/campaigns/"+id+"/pause", reader, nil); r.Status != 403 {
		t.Errorf("pause with campaigns:read: %d", r.Status)
	}
	other := e.NewKey("other", "*")
	for _, path := range []string{"/v1/campaigns/" + id, "/v1/campaigns/" + id + "/pause", "/v1/campaigns/" + id + "/resume", "/v1/campaigns/" + id + "/cancel"} {
		method := "POST"
		if path == "/v1/campaigns/"+id {
			method = "GET"
		}
		if r := e.Do(method, path, other, nil); r.Status != 404 {
			t.Errorf("other workspace %s %s: %d", method, path, r.Status)
		}
	}
	if r := e.Do("GET", "/v1/campaigns", other, nil); r.Body["total"] != 0.0 {
		t.Errorf("other workspace lists %s", r.Raw)
	}
	if r := e.Do("GET", "/v1/campaigns?status=done", e.Key, nil); r.Status != 400 {
		t.Errorf("unknown status filter: %d", r.Status)
	}
	if r := e.Do("GET", "/v1/campaigns?limit=500", e.Key, nil); r.Status != 400 {
		t.Errorf("limit 500: %d", r.Status)
	}
	if r := e.Do("POST", "/v1/campaigns/"+id+"/cancel", e.Key, nil); r.Status != 200 {
		t.Errorf("cancel: %d", r.Status)
	}
}
