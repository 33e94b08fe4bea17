package campaigns_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage"
)

// A step on a restricted engine: the restriction is the engine's report or its
// row's (what the host wrote), a campaign that is not pinned goes on through
// another engine that is connected and not restricted, and a restriction whose
// time passed is none.
func TestStepRestricted(t *testing.T) {
	to := chats(3)
	pinned := func(eng string) func(*ent.CampaignCreate) {
		return func(c *ent.CampaignCreate) { c.SetEngineID(eng) }
	}
	for _, tc := range []struct {
		name    string
		engines engines
		edit    func(*ent.CampaignCreate)
		rows    map[string]time.Duration // engine rows restricted until now + d
		want    outcome
		waitFor string // the campaign's pause_engine_id
	}{{
		name:    "not pinned: Pick's engine restricted, another connected: through it",
		engines: engines{n: 2, restricted: "eng_a", restriction: "banned for a day"},
		want: outcome{Status: "running", Cursor: 3, NextIn: campaigns.WatchDelay(0), Messages: pendingOn("eng_b", to...), Dispatched: 3,
			Steps: []queuedStep{{"stored", campaigns.WatchDelay(0)}}, Events: repeat("message.queued", 3), Slots: slot("eng_b", 0)},
	}, {
		name:    "not pinned: the other engine's row restricted: pause",
		engines: engines{n: 2, restricted: "eng_a", restriction: "banned for a day"},
		rows:    map[string]time.Duration{"eng_b": time.Hour},
		want:    outcome{Status: "paused", Reason: campaigns.PauseReason("eng_a", "banned for a day"), NextIn: -1, Events: []string{"campaign.paused"}},
		waitFor: "eng_a",
	}, {
		name:    "not pinned, no engine connected, one's row restricted: pause for it",
		engines: engines{},
		rows:    map[string]time.Duration{"eng_c": time.Hour},
		want:    outcome{Status: "paused", Reason: campaigns.PauseReason("eng_c", "restricted eng_c"), NextIn: -1, Events: []string{"campaign.paused"}},
		waitFor: "eng_c",
	}, {
		name:    "pinned, disconnected, its row restricted: pause",
		engines: engines{n: 1},
		edit:    pinned("eng_c"),
		rows:    map[string]time.Duration{"eng_c": time.Hour},
		want:    outcome{Status: "paused", Reason: campaigns.PauseReason("eng_c", "restricted eng_c"), NextIn: -1, Events: []string{"campaign.paused"}},
		waitFor: "eng_c",
	}, {
		name:    "pinned, its row's restriction over: sends",
		engines: engines{n: 2},
		edit:    pinned("eng_b"),
		rows:    map[string]time.Duration{"eng_b": -time.Minute},
		want: outcome{Status: "running", Cursor: 3, NextIn: campaigns.WatchDelay(0), Messages: pendingOn("eng_b", to...), Dispatched: 3,
			Steps: []queuedStep{{"stored", campaigns.WatchDelay(0)}}, Events: repeat("message.queued", 3), Slots: slot("eng_b", 0)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.engines, to, tc.edit)
			for eng, d := range tc.rows {
				f.client.Engine.UpdateOneID(eng).SetRestriction("restricted " + eng).SetRestrictedUntil(now.Add(d)).ExecX(f.ctx)
			}
			if err := f.step.Step(f.ctx, f.c.ID, "t1", now); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.outcome(t)); diff != "" {
				t.Errorf("after the step (-want +got):\n%s", diff)
			}
			if got := f.client.Campaign.GetX(f.ctx, f.c.ID).PauseEngineID; got != tc.waitFor {
				t.Errorf("pause_engine_id %q, want %q", got, tc.waitFor)
			}
		})
	}
}

// A campaign a restriction paused resumes once its engine is no longer
// restricted, by report or by row, and its step is queued; one a user paused
// does not; one a user paused after the restriction (KeepPaused) does not.
func TestResumeLifted(t *testing.T) {
	to := chats(2)
	f := newFixture(t, engines{n: 1, restricted: "eng_a", restriction: "banned"}, to, nil)
	if err := f.step.Step(f.ctx, f.c.ID, "t1", now); err != nil {
		t.Fatal(err)
	}
	user := f.client.Campaign.Create().SetName("u").SetAudienceID(f.c.AudienceID).SetText("x").SetLastSeq(2).
		SetStatus(string(campaigns.StatusPaused)).SetPauseReason("paused through the API").SaveX(f.ctx)
	kept := f.client.Campaign.Create().SetName("k").SetAudienceID(f.c.AudienceID).SetText("x").SetLastSeq(2).
		SetStatus(string(campaigns.StatusPaused)).SetPauseEngineID("eng_a").SetPauseReason("r").SaveX(f.ctx)
	err := storage.WithTx(f.ctx, f.client, func(tx *ent.Tx) error {
		_, ok, err := campaigns.KeepPaused(f.ctx, tx, kept, "paused through the API", now)
		if !ok {
			t.Error("KeepPaused did not keep it")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// Still restricted (the engine says so): nothing resumes.
	if n, err := f.step.ResumeAllLifted(f.ctx, now); err != nil || n != 0 {
		t.Fatalf("ResumeAllLifted while restricted = %d, %v", n, err)
	}
	// The engine's row says so, the engine no longer does: nothing resumes.
	f.step.Engines = engines{n: 1}
	f.client.Engine.UpdateOneID("eng_a").SetRestriction("banned").SetRestrictedUntil(now.Add(time.Hour)).ExecX(f.ctx)
	if n, err := f.step.ResumeAllLifted(f.ctx, now); err != nil || n != 0 {
		t.Fatalf("ResumeAllLifted with the row restricted = %d, %v", n, err)
	}
	// Over: the campaign the restriction paused resumes, once.
	later := now.Add(2 * time.Hour)
	if n, err := f.step.ResumeAllLifted(f.ctx, later); err != nil || n != 1 {
		t.Fatalf("ResumeAllLifted = %d, %v", n, err)
	}
	if n, err := f.step.ResumeAllLifted(f.ctx, later); err != nil || n != 0 {
		t.Fatalf("ResumeAllLifted again = %d, %v", n, err)
	}
	c := f.client.Campaign.GetX(f.ctx, f.c.ID)
	if c.Status != "running" || c.PauseEngineID != "" || c.PauseReason != "" || len(f.queue.steps) != 1 || f.queue.steps[0].Token != c.StepToken {
		t.Errorf("resumed campaign %+v, steps %v", c, f.queue.steps)
	}
	for _, id := range []string{user.ID, kept.ID} {
		if c := f.client.Campaign.GetX(f.ctx, id); c.Status != "paused" || c.PauseReason != "paused through the API" {
			t.Errorf("user-paused campaign %s is %s (%q)", c.Name, c.Status, c.PauseReason)
		}
	}
}
