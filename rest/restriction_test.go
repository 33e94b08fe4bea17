package rest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine/gateway"
)

// restrictionEvents are the webhook events a restriction test listens to.
var restrictionEvents = append([]string{"session.restricted", "session.unrestricted"}, campaignEvents...)

// pairedGateway creates a gateway engine in the key's workspace and pairs its
// fake session, ready to send.
func pairedGateway(t *testing.T, e *apptest.Env, fakes *fakeGateways, key string) (string, *fakeGateway) {
	t.Helper()
	id := createEngine(e, key, "gateway")["id"].(string)
	f := fakes.latest(id)
	f.pair("15550001111:7@s.whatsapp.net")
	e.Eventually(10*time.Second, "the paired gateway in ping", func() bool { return pinged(e, key, id) })
	return id, f
}

// campaignStatus is the campaign's status and pause reason, as the API shows them.
func campaignStatus(e *apptest.Env, key, id string) (string, string) {
	c := e.Do("GET", "/v1/campaigns/"+id, key, nil).Data()
	status, _ := c["status"].(string)
	reason, _ := c["pauseReason"].(string)
	return status, reason
}

// A temporary ban of the gateway's account is the engine's restriction (the
// API shows it, session.restricted says it) and pauses the running campaign
// pinned to it with the ban as the reason; a campaign a user paused stays as
// it was, and one the ban paused that a user then paused is the user's. When
// the session connects again with the ban over, the restriction ends
// (session.unrestricted) and the campaign it paused resumes by itself and
// completes; the user-paused ones stay paused.
func TestTemporaryBanPausesAndResumesCampaigns(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("banned", "*")
	id, f := pairedGateway(t, e, &fakes, key)
	rc := newReceiver(t, nil)
	e.Do("POST", "/v1/webhooks", key, map[string]any{"url": rc.URL, "events": restrictionEvents, "description": "t"})

	contacts := phones(700, 6)
	aud := createAudience(e, key, map[string]any{"name": "ban", "contacts": contacts})
	mine := createCampaign(e, key, map[string]any{"name": "user", "audienceId": aud["id"], "text": "x", "engineId": id, "pacing": slow})["cmpId"].(string)
	e.Eventually(10*time.Second, "the user's campaign running", func() bool {
		status, _ := campaignStatus(e, key, mine)
		return status == "running"
	})
	if r := e.Do("POST", "/v1/campaigns/"+mine+"/pause", key, nil); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Raw)
	}
	cmp := createCampaign(e, key, map[string]any{"name": "ban", "audienceId": aud["id"], "text": "x", "engineId": id, "pacing": slow})["cmpId"].(string)
	kept := createCampaign(e, key, map[string]any{"name": "kept", "audienceId": aud["id"], "text": "x", "engineId": id, "pacing": slow})["cmpId"].(string)
	e.Eventually(10*time.Second, "the campaign's first message", func() bool { return len(campaignMessages(e, cmp)) >= 1 })

	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	f.set(func(s *gateway.State) {
		s.Status, s.Connected, s.BannedUntil, s.BanReason = gateway.StatusBanned, false, &until, "too many messages"
	})
	var status, reason string
	e.Eventually(10*time.Second, "the campaign paused by the ban", func() bool {
		status, reason = campaignStatus(e, key, cmp)
		return status == "paused"
	})
	if !strings.Contains(reason, "too many messages") || !strings.Contains(reason, id) {
		t.Errorf("pauseReason %q", reason)
	}
	got := e.Do("GET", "/v1/engines/"+id, key, nil).Data()
	if r, _ := got["restriction"].(string); got["state"] != "BANNED" || !strings.Contains(r, "too many messages") || got["restrictedUntil"] != until.Format(time.RFC3339) {
		t.Errorf("banned engine = %v", got)
	}
	e.Eventually(10*time.Second, "session.restricted", func() bool { return len(rc.ofType("session.restricted")) == 1 })
	data, _ := rc.ofType("session.restricted")[0].payload["data"].(map[string]any)
	if data["engineId"] != id || !strings.Contains(data["reason"].(string), "too many messages") || data["until"] != until.Format(time.RFC3339) {
		t.Errorf("session.restricted data = %v", data)
	}
	made := len(campaignMessages(e, cmp))
	// A user pauses a campaign the ban paused: the pause becomes theirs.
	e.Eventually(10*time.Second, "the second campaign paused by the ban", func() bool {
		status, _ := campaignStatus(e, key, kept)
		return status == "paused"
	})
	if r := e.Do("POST", "/v1/campaigns/"+kept+"/pause", key, nil); r.Status != 200 || r.Data()["pauseReason"] != "paused through the API" {
		t.Errorf("pause of a campaign a ban paused: %d %s", r.Status, r.Raw)
	}

	// The session connects again, the ban over: the campaign goes on by itself.
	f.set(func(s *gateway.State) {
		s.Status, s.Connected, s.BannedUntil, s.BanReason = gateway.StatusConnected, true, nil, ""
	})
	e.Eventually(10*time.Second, "session.unrestricted", func() bool { return len(rc.ofType("session.unrestricted")) == 1 })
	e.Eventually(30*time.Second, "the campaign resumed and completed", func() bool {
		status, _ := campaignStatus(e, key, cmp)
		return status == "complete_sent" // the fake network never acknowledges delivery
	})
	if n := len(campaignMessages(e, cmp)); n != len(contacts) || made >= n {
		t.Errorf("%d messages (%d before the ban), want %d", n, made, len(contacts))
	}
	if len(rc.ofType("campaign.resumed")) != 1 {
		t.Errorf("campaign.resumed %d times", len(rc.ofType("campaign.resumed")))
	}
	if got := e.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["restriction"] != nil || got["restrictedUntil"] != nil {
		t.Errorf("engine after the ban = %v", got)
	}
	if status, reason := campaignStatus(e, key, mine); status != "paused" || strings.Contains(reason, "restriction") {
		t.Errorf("the user-paused campaign is %s (%q)", status, reason)
	}
	if status, reason := campaignStatus(e, key, kept); status != "paused" || reason != "paused through the API" {
		t.Errorf("the campaign the user kept paused is %s (%q)", status, reason)
	}
	if n := len(campaignMessages(e, mine)); n > 1 {
		t.Errorf("the user-paused campaign made %d messages", n)
	}
}

// A restriction whose time runs out without a word from the session (a
// reach-out time lock that lapses) ends by the reconciler, which records
// session.unrestricted and resumes the campaign it paused. A campaign that is
// not pinned pauses too when its workspace has no other engine to send
// through.
func TestLapsedRestrictionResumesCampaigns(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("timelocked", "*")
	id, f := pairedGateway(t, e, &fakes, key)
	rc := newReceiver(t, nil)
	e.Do("POST", "/v1/webhooks", key, map[string]any{"url": rc.URL, "events": restrictionEvents, "description": "t"})

	until := time.Now().Add(2 * time.Second)
	f.set(func(s *gateway.State) { s.ReachoutTimelockedUntil, s.ReachoutEnforcement = &until, "REACHOUT_TIMELOCK" })
	aud := createAudience(e, key, map[string]any{"name": "lock", "contacts": phones(800, 3)})
	cmp := createCampaign(e, key, map[string]any{"name": "lock", "audienceId": aud["id"], "text": "x", "pacing": fast})["cmpId"].(string)
	e.Eventually(10*time.Second, "the campaign paused by the time lock", func() bool {
		status, _ := campaignStatus(e, key, cmp)
		return status == "paused"
	})
	if _, reason := campaignStatus(e, key, cmp); !strings.Contains(reason, "reach-out time lock") {
		t.Errorf("pauseReason %q", reason)
	}
	// The lock runs out; nothing tells the host. The reconciler's pass ends it.
	e.Eventually(20*time.Second, "the reconciler to resume the campaign", func() bool {
		if _, err := e.App.Jobs.LiftRestrictions(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
		status, _ := campaignStatus(e, key, cmp)
		return status != "paused"
	})
	e.Eventually(10*time.Second, "session.unrestricted", func() bool { return len(rc.ofType("session.unrestricted")) == 1 })
	e.Eventually(30*time.Second, "every message sent", func() bool {
		status, _ := campaignStatus(e, key, cmp)
		return status == "complete_sent" // the fake network never acknowledges delivery
	})
	if got := e.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["restriction"] != nil {
		t.Errorf("engine after the lock = %v", got)
	}
	if n := len(rc.ofType("session.restricted")); n != 1 {
		t.Errorf("session.restricted %d times", n)
	}
}

// A logout is a restriction without an end time: the campaign pinned to the
// engine pauses with it, and resumes once a phone is paired again and the
// session connects.
func TestLogoutPausesCampaignsUntilPaired(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("loggedout", "*")
	id, f := pairedGateway(t, e, &fakes, key)
	aud := createAudience(e, key, map[string]any{"name": "out", "contacts": phones(900, 4)})
	cmp := createCampaign(e, key, map[string]any{"name": "out", "audienceId": aud["id"], "text": "x", "engineId": id, "pacing": slow})["cmpId"].(string)
	e.Eventually(10*time.Second, "the campaign's first message", func() bool { return len(campaignMessages(e, cmp)) >= 1 })

	if r := e.Do("POST", "/v1/engines/"+id+"/logout", key, nil); r.Status != 200 {
		t.Fatalf("logout = %d %s", r.Status, r.Raw)
	}
	var reason string
	e.Eventually(10*time.Second, "the campaign paused by the logout", func() bool {
		var status string
		status, reason = campaignStatus(e, key, cmp)
		return status == "paused"
	})
	if !strings.Contains(reason, gateway.LoggedOutRestriction) {
		t.Errorf("pauseReason %q", reason)
	}
	if got := e.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["restriction"] != gateway.LoggedOutRestriction || got["restrictedUntil"] != nil {
		t.Errorf("logged-out engine = %v", got)
	}
	f.pair("15550001111:8@s.whatsapp.net")
	e.Eventually(30*time.Second, "the campaign resumed and sent", func() bool {
		status, _ := campaignStatus(e, key, cmp)
		return status == "complete_sent"
	})
}
