package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/jobs"
)

// campaignEvents are the webhook events of campaigns.
var campaignEvents = []string{"campaign.started", "campaign.paused", "campaign.resumed", "campaign.completed", "campaign.aborted"}

// fast is the pacing of a campaign that sends without delay.
var fast = map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0, "dailyCap": 100000}

// slow is the pacing of a campaign that sends one message a second.
var slow = map[string]any{"minDelaySeconds": 1, "maxDelaySeconds": 1, "dailyCap": 100000}

// phones returns n contacts +1555020xxxx numbered from first.
func phones(first, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"to": fmt.Sprintf("+1555020%04d", first+i), "variables": map[string]any{"firstName": fmt.Sprintf("N%d", first+i)}}
	}
	return out
}

func createAudience(e *apptest.Env, key string, body map[string]any) map[string]any {
	e.T.Helper()
	resp := e.Do("POST", "/v1/audiences", key, body)
	if resp.Status != 200 {
		e.T.Fatalf("create audience: %d %s", resp.Status, resp.Raw)
	}
	return resp.Data()
}

func createCampaign(e *apptest.Env, key string, body map[string]any) map[string]any {
	e.T.Helper()
	resp := e.Do("POST", "/v1/campaigns", key, body)
	if resp.Status != 200 {
		e.T.Fatalf("create campaign: %d %s", resp.Status, resp.Raw)
	}
	return resp.Data()
}

func getCampaign(e *apptest.Env, id string) map[string]any {
	e.T.Helper()
	resp := e.Do("GET", "/v1/campaigns/"+id, e.Key, nil)
	if resp.Status != 200 {
		e.T.Fatalf("get campaign: %d %s", resp.Status, resp.Raw)
	}
	return resp.Data()
}

// waitCampaign waits until the campaign is in status and returns it.
func waitCampaign(e *apptest.Env, id, status string) map[string]any {
	e.T.Helper()
	var c map[string]any
	e.Eventually(30*time.Second, "campaign "+id+" to be "+status, func() bool {
		c = getCampaign(e, id)
		return c["status"] == status
	})
	return c
}

// waitCounters waits until the campaign's counters are want and returns it:
// complete_delivered says every message was delivered, and the read receipts
// that follow are counted as they come.
func waitCounters(e *apptest.Env, id string, want counters) map[string]any {
	e.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := getCampaign(e, id)
		if countersOf(c) == want {
			return c
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("counters (-want +got):\n%s", cmp.Diff(want, countersOf(c)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// campaignMessages reads the messages of a campaign from the store.
func campaignMessages(e *apptest.Env, id string) []*ent.Message {
	e.T.Helper()
	ms, err := e.App.Client.Message.Query().Where(message.CampaignID(id)).Order(ent.Asc(message.FieldCreatedAt)).All(systemCtx())
	if err != nil {
		e.T.Fatal(err)
	}
	return ms
}

// recipients lists the recipients of messages, sorted, failing on a duplicate.
func recipients(t *testing.T, ms []*ent.Message) []string {
	t.Helper()
	var out []string
	for _, m := range ms {
		if slices.Contains(out, m.To) {
			t.Errorf("%s got two messages", m.To)
		}
		out = append(out, m.To)
	}
	sort.Strings(out)
	return out
}

// jids lists the chat ids of contacts, sorted.
func jids(contacts []map[string]any) []string {
	var out []string
	for _, c := range contacts {
		out = append(out, c["to"].(string)[1:]+"@c.us")
	}
	sort.Strings(out)
	return out
}

// counters are a campaign's counters as the API shows them.
type counters struct{ Total, Sent, Delivered, Read, Failed int }

func countersOf(c map[string]any) counters {
	n := func(k string) int { f, _ := c[k].(float64); return int(f) }
	return counters{n("totalCount"), n("sentCount"), n("deliveredCount"), n("readCount"), n("failedCount")}
}

// countersFrom counts messages by their real status, as the counters must.
func countersFrom(ms []*ent.Message) counters {
	c := counters{Total: len(ms)}
	for _, m := range ms {
		switch m.Status {
		case "read", "played":
			c.Read++
			c.Delivered++
			c.Sent++
		case "received", "delivered":
			c.Delivered++
			c.Sent++
		case "confirmed", "sent":
			c.Sent++
		case "failed", "expired", "error", "cancelled":
			c.Failed++
		}
	}
	return c
}

// A campaign with no delay goes through its whole audience: one message per
// contact, variables resolved, ...0000 counted failed, ...1111 delivered but never
// read, complete_delivered at the end with exact counters and its events.
func TestCampaignRunsToCompletion(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, append([]string{"message.queued", "message.failed"}, campaignEvents...)...)
	contacts := phones(100, 8)
	contacts = append(contacts,
		map[string]any{"to": "+15550210000", "variables": map[string]any{"FIRSTNAME": "Fails"}},
		map[string]any{"to": "15550211111@c.us", "variables": map[string]any{"firstname": "Unread"}})
	aud := createAudience(e, e.Key, map[string]any{"name": "All", "contacts": contacts})
	if aud["contactCount"] != float64(10) {
		t.Fatalf("contactCount = %v, want 10", aud["contactCount"])
	}
	c := createCampaign(e, e.Key, map[string]any{"name": "Launch", "audienceId": aud["id"],
		"text": "Hi { firstName }, call {phone}. {{literal}}", "pacing": fast})
	if c["status"] != "pending" || c["totalCount"] != float64(10) || c["cmpId"] == "" {
		t.Fatalf("created %v", c)
	}
	id := c["cmpId"].(string)
	waitCampaign(e, id, "complete_delivered")
	done := waitCounters(e, id, counters{Total: 10, Sent: 9, Delivered: 9, Read: 8, Failed: 1})
	ms := campaignMessages(e, id)
	if got, want := recipients(t, ms), append(jids(contacts[:9]), "15550211111@c.us"); !cmp.Equal(got, sortedCopy(want)) {
		t.Errorf("recipients: %s", cmp.Diff(sortedCopy(want), got))
	}
	if diff := cmp.Diff(countersFrom(ms), countersOf(done)); diff != "" {
		t.Errorf("counters vs message states (-states +counters):\n%s", diff)
	}
	for _, m := range ms {
		if m.To == "15550210000@c.us" && (m.Status != "failed" || m.FailureReason == "") {
			t.Errorf("...0000 is %s (%q), want failed", m.Status, m.FailureReason)
		}
		if m.To == "15550201000@c.us" && m.Text != "Hi N100, call +15550201000. {{literal}}" {
			t.Errorf("text = %q", m.Text)
		}
	}
	if done["startedAt"] == nil || done["completedAt"] == nil || done["abortedAt"] != nil {
		t.Errorf("times: %v", done)
	}
	// Campaign messages are ordinary messages: listed, with their campaign id.
	one := e.Do("GET", "/v1/scheduled-messages/"+ms[0].ID, e.Key, nil).Data()
	if one["campaignId"] != id || one["status"] == "" {
		t.Errorf("message %v", one)
	}
	e.Eventually(10*time.Second, "the campaign events", func() bool {
		return len(rc.ofType("campaign.completed")) == 1 && len(rc.ofType("message.queued")) == 10
	})
	if n := len(rc.ofType("campaign.started")); n != 1 {
		t.Errorf("%d campaign.started", n)
	}
	ev := rc.ofType("campaign.completed")[0].payload["data"].(map[string]any)
	if ev["cmpId"] != id || ev["status"] == "running" {
		t.Errorf("campaign.completed data %v", ev)
	}
	e.Eventually(5*time.Second, "message.failed of ...0000", func() bool { return len(rc.ofType("message.failed")) == 1 })
	// A finished campaign can neither be paused, resumed nor cancelled.
	for _, action := range []string{"pause", "resume", "cancel"} {
		if r := e.Do("POST", "/v1/campaigns/"+id+"/"+action, e.Key, nil); r.Status != 409 {
			t.Errorf("%s of a complete campaign: %d %s", action, r.Status, r.Raw)
		}
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// Bad campaign input is refused before anything is stored or sent.
func TestCampaignValidation(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "v", "contacts": []any{
		map[string]any{"to": "+15550500001", "variables": map[string]any{"firstName": "A", "plan": "pro"}},
		map[string]any{"to": "+15550500002", "variables": map[string]any{"FIRSTNAME": "B"}},
		map[string]any{"to": "+15550500003"},
	}})
	id := aud["id"].(string)
	empty := createAudience(e, e.Key, map[string]any{"name": "empty"})["id"]
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		paths  []string
	}{
		{"nothing", map[string]any{}, 422, []string{"name", "audienceId"}},
		{"unknown audience", map[string]any{"name": "c", "audienceId": "aud_unknown", "text": "hi"}, 404, nil},
		{"empty audience", map[string]any{"name": "c", "audienceId": empty, "text": "hi"}, 422, []string{"audienceId"}},
		{"missing variable under fail", map[string]any{"name": "c", "audienceId": id, "text": "Hi {firstname}, your {Plan} plan"}, 400,
			[]string{"contacts.", "contacts."}},
		{"text too long", map[string]any{"name": "c", "audienceId": id, "text": strings.Repeat("x", 4097)}, 422, []string{"text"}},
		{"caption without media", map[string]any{"name": "c", "audienceId": id, "text": "x", "mediaCaption": "c"}, 422, []string{"mediaCaption"}},
		{"media not https", map[string]any{"name": "c", "audienceId": id, "mediaUrl": "ftp://example.com/a.png"}, 422, []string{"mediaUrl"}},
		{"bad onMissingVariable", map[string]any{"name": "c", "audienceId": id, "text": "x", "onMissingVariable": "empty"}, 422, []string{"onMissingVariable"}},
		{"bad pacing", map[string]any{"name": "c", "audienceId": id, "text": "x", "pacing": map[string]any{
			"minDelaySeconds": 30, "maxDelaySeconds": 10, "dailyCap": 0,
			"quietHours": map[string]any{"start": "25:00", "end": "8:00", "timezone": "Mars/Olympus"}}}, 422,
			[]string{"pacing.maxDelaySeconds", "pacing.dailyCap", "pacing.quietHours.start", "pacing.quietHours.end", "pacing.quietHours.timezone"}},
		{"negative delay", map[string]any{"name": "c", "audienceId": id, "text": "x", "pacing": map[string]any{"minDelaySeconds": -1}}, 422,
			[]string{"pacing.minDelaySeconds"}},
		{"unknown field", map[string]any{"name": "c", "audienceId": id, "text": "x", "sendAt": "2030-01-01T00:00:00Z"}, 400, []string{"sendAt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", "/v1/campaigns", e.Key, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Raw)
			}
			var got []string
			for _, p := range r.DetailPaths() {
				if strings.HasPrefix(p, "contacts.") {
					p = "contacts."
				}
				got = append(got, p)
			}
			if diff := cmp.Diff(tc.paths, got); tc.paths != nil && diff != "" {
				t.Errorf("detail paths (-want +got):\n%s\n%s", diff, r.Raw)
			}
		})
	}
	if n := e.App.Client.Campaign.Query().CountX(systemCtx()); n != 0 {
		t.Fatalf("%d campaigns stored by refused requests", n)
	}
	// skip accepts the same text: the contacts without the variable get {plan} as written.
	c := createCampaign(e, e.Key, map[string]any{"name": "c", "audienceId": id, "text": "Hi {firstname}, your {Plan} plan",
		"onMissingVariable": "skip", "pacing": fast})
	waitCampaign(e, c["cmpId"].(string), "complete_delivered")
	var texts []string
	for _, m := range campaignMessages(e, c["cmpId"].(string)) {
		texts = append(texts, m.Text)
	}
	sort.Strings(texts)
	want := []string{"Hi A, your pro plan", "Hi B, your {Plan} plan", "Hi {firstname}, your {Plan} plan"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	// An audience in use by a campaign that is not finished cannot be deleted.
	slowOne := createCampaign(e, e.Key, map[string]any{"name": "slow", "audienceId": id, "text": "x", "pacing": slow})
	if r := e.Do("DELETE", "/v1/audiences/"+id, e.Key, nil); r.Status != 409 {
		t.Errorf("delete an audience in use: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/campaigns/"+slowOne["cmpId"].(string)+"/cancel", e.Key, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("DELETE", "/v1/audiences/"+id, e.Key, nil); r.Status != 200 {
		t.Errorf("delete after the campaign was cancelled: %d %s", r.Status, r.Raw)
	}
}

// The state machine through the API on a paced campaign: pause mid-run stops
// within one step, resume continues where it stopped (no gap, no duplicate),
// cancel aborts the rest; moves a status does not allow are conflicts.
func TestCampaignPauseResumeCancel(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, campaignEvents...)
	contacts := phones(600, 4)
	aud := createAudience(e, e.Key, map[string]any{"name": "paced", "contacts": contacts})
	c := createCampaign(e, e.Key, map[string]any{"name": "paced", "audienceId": aud["id"], "text": "Hi {firstname}", "pacing": slow})
	id := c["cmpId"].(string)
	if r := e.Do("POST", "/v1/campaigns/"+id+"/resume", e.Key, nil); r.Status != 409 {
		t.Errorf("resume a pending campaign: %d", r.Status)
	}
	e.Eventually(10*time.Second, "the first message", func() bool { return len(campaignMessages(e, id)) >= 1 })
	if r := e.Do("POST", "/v1/campaigns/"+id+"/resume", e.Key, nil); r.Status != 409 {
		t.Errorf("resume a running campaign: %d %s", r.Status, r.Raw)
	}
	stale := e.App.Client.Campaign.GetX(systemCtx(), id).StepToken
	paused := e.Do("POST", "/v1/campaigns/"+id+"/pause", e.Key, nil)
	if paused.Status != 200 || paused.Data()["status"] != "paused" {
		t.Fatalf("pause: %d %s", paused.Status, paused.Raw)
	}
	made := len(campaignMessages(e, id))
	if made >= len(contacts) {
		t.Fatalf("the campaign made all %d messages before the pause; the test proves nothing", made)
	}
	// The step queued before the pause (or a step running now) makes nothing.
	runStep(t, e, id, stale)
	if n := len(campaignMessages(e, id)); n != made {
		t.Errorf("a step after the pause made %d messages", n-made)
	}
	if r := e.Do("POST", "/v1/campaigns/"+id+"/pause", e.Key, nil); r.Status != 409 {
		t.Errorf("pause a paused campaign: %d", r.Status)
	}
	resumed := e.Do("POST", "/v1/campaigns/"+id+"/resume", e.Key, nil)
	if resumed.Status != 200 || resumed.Data()["status"] != "running" {
		t.Fatalf("resume: %d %s", resumed.Status, resumed.Raw)
	}
	waitCampaign(e, id, "complete_delivered")
	if got, want := recipients(t, campaignMessages(e, id)), jids(contacts); !cmp.Equal(got, want) {
		t.Errorf("recipients after pause and resume: %s", cmp.Diff(want, got))
	}
	waitCounters(e, id, counters{Total: 4, Sent: 4, Delivered: 4, Read: 4})
	e.Eventually(5*time.Second, "the events", func() bool { return len(rc.ofType("campaign.completed")) == 1 })
	// Deliveries run side by side: order the events by when they were recorded.
	all := rc.all()
	sort.SliceStable(all, func(i, j int) bool {
		a, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(all[i].payload["created_at"]))
		b, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(all[j].payload["created_at"]))
		return a.Before(b)
	})
	var types []string
	for _, r := range all {
		types = append(types, r.payload["type"].(string))
	}
	if diff := cmp.Diff([]string{"campaign.started", "campaign.paused", "campaign.resumed", "campaign.completed"}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if d := rc.ofType("campaign.paused")[0].payload["data"].(map[string]any); d["status"] != "paused" || d["pauseReason"] == "" || d["cmpId"] != id {
		t.Errorf("campaign.paused data %v", d)
	}

	// Cancel mid-run: the rest is never sent.
	c = createCampaign(e, e.Key, map[string]any{"name": "cancelled", "audienceId": aud["id"], "text": "x", "pacing": slow})
	id = c["cmpId"].(string)
	e.Eventually(10*time.Second, "the first message", func() bool { return len(campaignMessages(e, id)) >= 1 })
	stale = e.App.Client.Campaign.GetX(systemCtx(), id).StepToken
	cancelled := e.Do("POST", "/v1/campaigns/"+id+"/cancel", e.Key, nil)
	if cancelled.Status != 200 || cancelled.Data()["status"] != "aborted" || cancelled.Data()["abortedAt"] == nil {
		t.Fatalf("cancel: %d %s", cancelled.Status, cancelled.Raw)
	}
	made = len(campaignMessages(e, id))
	runStep(t, e, id, stale)
	if n, err := e.App.Jobs.ReconcileCampaigns(context.Background(), time.Now(), 0); err != nil || n != 0 {
		t.Errorf("the reconciler queued %d steps of a cancelled campaign, %v", n, err)
	}
	if n := len(campaignMessages(e, id)); n != made || made >= len(contacts) {
		t.Errorf("cancelled campaign made %d messages, %d before the cancel (of %d)", n, made, len(contacts))
	}
	for _, action := range []string{"pause", "resume", "cancel"} {
		if r := e.Do("POST", "/v1/campaigns/"+id+"/"+action, e.Key, nil); r.Status != 409 {
			t.Errorf("%s an aborted campaign: %d", action, r.Status)
		}
	}
	e.Eventually(5*time.Second, "campaign.aborted", func() bool { return len(rc.ofType("campaign.aborted")) == 1 })
	if r := e.Do("POST", "/v1/campaigns/cmp_unknown/pause", e.Key, nil); r.Status != 404 {
		t.Errorf("pause an unknown campaign: %d", r.Status)
	}
}

// runStep runs the step task of campaign id under token through the real handler.
func runStep(t *testing.T, e *apptest.Env, id, token string) {
	t.Helper()
	if err := stepErr(e, id, token); err != nil {
		t.Fatalf("step: %v", err)
	}
}

// stepErr runs the step and returns its error (safe outside the test's goroutine).
func stepErr(e *apptest.Env, id, token string) error {
	c, err := e.App.Client.Campaign.Get(systemCtx(), id)
	if err != nil {
		return err
	}
	payload, _ := json.Marshal(map[string]string{"campaignId": id, "workspaceId": c.WorkspaceID, "token": token})
	return e.App.Jobs.CampaignStep(context.Background(), asynq.NewTask(jobs.TypeCampaignStep, payload))
}
