package rest_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/viewer"
)

// A Redis flush mid-run loses the campaign's queued step (and the dispatch of
// its last message); the reconciler rebuilds both from the database and the
// campaign goes on where it stopped: every contact once, none skipped.
func TestCampaignSurvivesRedisFlush(t *testing.T) {
	e := newEnv(t)
	contacts := phones(700, 4)
	aud := createAudience(e, e.Key, map[string]any{"name": "flush", "contacts": contacts})
	id := createCampaign(e, e.Key, map[string]any{"name": "flush", "audienceId": aud["id"], "text": "x",
		"pacing": map[string]any{"minDelaySeconds": 2, "maxDelaySeconds": 2}})["cmpId"].(string)
	e.Eventually(10*time.Second, "the first message", func() bool { return len(campaignMessages(e, id)) >= 1 })
	// Flush once Redis holds the next step (queued just after the step's commit).
	held := func() bool {
		c := e.App.Client.Campaign.GetX(systemCtx(), id)
		key := "asynq:{" + jobs.QueueCampaigns + "}:t:" + jobs.CampaignStepTaskID(id, c.StepToken)
		return c.StepToken != "" && e.App.Redis.Exists(context.Background(), key).Val() == 1
	}
	e.Eventually(10*time.Second, "the next step in Redis", held)
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if held() {
		t.Fatal("the step survived the flush")
	}
	made := len(campaignMessages(e, id))
	if made >= len(contacts) {
		t.Fatalf("all %d made before the flush; the test proves nothing", made)
	}
	n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0)
	if err != nil || n < 1 {
		t.Fatalf("ReconcileOnce = %d, %v; want the step queued again", n, err)
	}
	waitCampaign(e, id, "complete_delivered")
	if got, want := recipients(t, campaignMessages(e, id)), jids(contacts); !cmp.Equal(got, want) {
		t.Errorf("recipients after the flush: %s", cmp.Diff(want, got))
	}
	waitCounters(e, id, counters{Total: 4, Sent: 4, Delivered: 4, Read: 4})
}

// The embedded default loses its in-process Redis when it restarts; a campaign
// running at the time goes on after the restart, with no duplicate and no gap.
func TestCampaignSurvivesRestart(t *testing.T) {
	dbURL := "sqlite://" + t.TempDir() + "/sb.db"
	cfg := func(c *app.Config) { c.DatabaseURL = dbURL; c.RedisURL = "" }
	first := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	contacts := phones(800, 4)
	aud := createAudience(first, first.Key, map[string]any{"name": "restart", "contacts": contacts})
	id := createCampaign(first, first.Key, map[string]any{"name": "restart", "audienceId": aud["id"], "text": "x", "pacing": slow})["cmpId"].(string)
	first.Eventually(10*time.Second, "the first message", func() bool { return len(campaignMessages(first, id)) >= 1 })
	first.Server.Close()
	first.App.Close()

	second := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg, NoStart: true})
	second.Key = first.Key
	if made := len(campaignMessages(second, id)); made >= len(contacts) {
		t.Fatalf("all %d made before the restart; the test proves nothing", made)
	}
	if err := second.App.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitCampaign(second, id, "complete_delivered")
	if got, want := recipients(t, campaignMessages(second, id)), jids(contacts); !cmp.Equal(got, want) {
		t.Errorf("recipients after the restart: %s", cmp.Diff(want, got))
	}
}

// Steps that run twice at once under the same token (a task redelivered while
// its first run still works) make one batch between them: the cursor moves once
// and no contact gets two messages.
func TestCampaignStepRunsOnce(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	contacts := phones(1000, 250)
	aud := createAudience(e, e.Key, map[string]any{"name": "big", "contacts": contacts})
	id := createCampaign(e, e.Key, map[string]any{"name": "twice", "audienceId": aud["id"], "text": "x", "pacing": fast})["cmpId"].(string)
	token := e.App.Client.Campaign.GetX(systemCtx(), id).StepToken
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := stepErr(e, id, token); err != nil {
				t.Errorf("step: %v", err)
			}
		}()
	}
	wg.Wait()
	ms := campaignMessages(e, id)
	if len(ms) != 200 {
		t.Errorf("%d messages made by concurrent runs of one step, want one batch of 200", len(ms))
	}
	recipients(t, ms)
	if got := e.App.Client.Campaign.GetX(systemCtx(), id); got.Cursor != 200 || got.Status != "running" {
		t.Errorf("cursor %d, status %s", got.Cursor, got.Status)
	}
}

// restrictedEngine is a sandbox engine whose account the network may restrict.
type restrictedEngine struct {
	*sandbox.Engine
	why atomic.Pointer[string]
}

func (r *restrictedEngine) Restriction() (string, bool) {
	if p := r.why.Load(); p != nil {
		return *p, true
	}
	return "", false
}

// A campaign whose engine reports a restriction pauses itself and says why; it
// sends again once resumed after the restriction is lifted.
func TestCampaignPausesOnRestriction(t *testing.T) {
	e := newEnv(t)
	key := e.NewKey("restricted", "*")
	ws := e.Do("GET", "/v1/account", key, nil).Data()["id"].(string)
	eng := &restrictedEngine{Engine: e.App.Sandbox.Engine(ws)}
	why := "rate limited by the network"
	eng.why.Store(&why)
	// Every engine of a workspace has its row (a campaign's messages are routed
	// to the engine that made them by its row).
	e.App.Client.Engine.Create().SetID(eng.ID()).SetWorkspaceID(ws).SetKind(entengine.KindRemote).SetName("restricted").
		SaveX(viewer.WorkspaceContext(context.Background(), ws))
	e.App.Engines.Attach(viewer.WorkspaceContext(context.Background(), ws), ws, eng)

	rc := newReceiver(t, nil)
	e.Do("POST", "/v1/webhooks", key, map[string]any{"url": rc.URL, "events": campaignEvents, "description": "t"})
	contacts := phones(900, 3)
	aud := createAudience(e, key, map[string]any{"name": "r", "contacts": contacts})
	id := createCampaign(e, key, map[string]any{"name": "r", "audienceId": aud["id"], "text": "x", "pacing": fast})["cmpId"].(string)
	var c map[string]any
	e.Eventually(10*time.Second, "the campaign to pause itself", func() bool {
		c = e.Do("GET", "/v1/campaigns/"+id, key, nil).Data()
		return c["status"] == "paused"
	})
	if reason, _ := c["pauseReason"].(string); !strings.Contains(reason, why) {
		t.Errorf("pauseReason %q", reason)
	}
	if n := len(campaignMessages(e, id)); n != 0 {
		t.Errorf("%d messages sent while restricted", n)
	}
	e.Eventually(5*time.Second, "campaign.paused", func() bool { return len(rc.ofType("campaign.paused")) == 1 })
	eng.why.Store(nil)
	if r := e.Do("POST", "/v1/campaigns/"+id+"/resume", key, nil); r.Status != 200 {
		t.Fatalf("resume: %d %s", r.Status, r.Raw)
	}
	e.Eventually(30*time.Second, "completion", func() bool {
		return e.Do("GET", "/v1/campaigns/"+id, key, nil).Data()["status"] == "complete_delivered"
	})
	if got, want := recipients(t, campaignMessages(e, id)), jids(contacts); !cmp.Equal(got, want) {
		t.Errorf("recipients: %s", cmp.Diff(want, got))
	}
}

// The daily cap holds a campaign once the workspace made its share of campaign
// messages in the last 24 hours; quiet hours hold it until they end.
func TestCampaignCapAndQuietHours(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "cap", "contacts": phones(950, 5)})
	id := createCampaign(e, e.Key, map[string]any{"name": "cap", "audienceId": aud["id"], "text": "x",
		"pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0, "dailyCap": 2}})["cmpId"].(string)
	e.Eventually(10*time.Second, "the cap to hold the campaign", func() bool {
		c := e.App.Client.Campaign.GetX(systemCtx(), id)
		return c.NextStepAt != nil && time.Until(*c.NextStepAt) > 5*time.Minute
	})
	if n := len(campaignMessages(e, id)); n != 2 {
		t.Errorf("%d messages under a daily cap of 2", n)
	}
	if s := getCampaign(e, id)["status"]; s != "running" {
		t.Errorf("status %v, want running (waiting for the cap)", s)
	}

	now := time.Now().UTC()
	quiet := map[string]any{"start": now.Add(-time.Hour).Format("15:04"), "end": now.Add(time.Hour).Format("15:04"), "timezone": "UTC"}
	id = createCampaign(e, e.Key, map[string]any{"name": "quiet", "audienceId": aud["id"], "text": "x",
		"pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0, "quietHours": quiet}})["cmpId"].(string)
	e.Eventually(10*time.Second, "quiet hours to hold the campaign", func() bool {
		c := e.App.Client.Campaign.GetX(systemCtx(), id)
		return c.Status == "running" && c.NextStepAt != nil && time.Until(*c.NextStepAt) > 30*time.Minute
	})
	if n := len(campaignMessages(e, id)); n != 0 {
		t.Errorf("%d messages during quiet hours", n)
	}
}
