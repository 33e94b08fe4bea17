package campaigns_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
)

// Two campaigns on one engine share its pace: run step by step at the times
// they are due, their messages are spaced by the delay between them (10 s), not
// made at twice the rate; a campaign on another engine keeps its own pace.
func TestStepSharedPace(t *testing.T) {
	for _, tc := range []struct {
		name      string
		secondOn  string        // the second campaign's engine ("": picked, eng_a)
		wantGap   time.Duration // between messages of the two campaigns together
		wantCount int           // messages made in the first minute
	}{
		{name: "two campaigns on one engine", secondOn: "", wantGap: 10 * time.Second, wantCount: 6},
		{name: "pinned to the same engine", secondOn: "eng_a", wantGap: 10 * time.Second, wantCount: 6},
		{name: "on two engines", secondOn: "eng_b", wantGap: 0, wantCount: 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paced := func(c *ent.CampaignCreate) { c.SetMinDelayMs(10_000).SetMaxDelayMs(10_000) }
			f := newFixture(t, engines{n: 2}, chats(20), paced)
			second := f.another(func(c *ent.CampaignCreate) { paced(c); c.SetEngineID(tc.secondOn) })
			due := map[string]time.Time{f.c.ID: now, second.ID: now.Add(time.Second)}
			for range 40 {
				id := f.c.ID
				if due[second.ID].Before(due[id]) {
					id = second.ID
				}
				if !due[id].Before(now.Add(time.Minute)) {
					break
				}
				c := f.client.Campaign.GetX(f.ctx, id)
				if err := f.step.Step(f.ctx, id, c.StepToken, due[id]); err != nil {
					t.Fatal(err)
				}
				due[id] = *f.client.Campaign.GetX(f.ctx, id).NextStepAt
			}
			var made []time.Time
			for _, m := range f.client.Message.Query().Order(ent.Asc(message.FieldCreatedAt)).AllX(f.ctx) {
				made = append(made, m.CreatedAt)
			}
			if len(made) != tc.wantCount {
				t.Errorf("%d messages made in a minute, want %d", len(made), tc.wantCount)
			}
			for i := 1; i < len(made); i++ {
				if gap := made[i].Sub(made[i-1]); gap < tc.wantGap {
					t.Errorf("message %d made %s after the one before, want at least %s", i, gap, tc.wantGap)
				}
			}
		})
	}
}

// Two campaigns on one engine stepping at the same moment: one takes the
// engine's slot and makes its message, the other makes nothing and waits for
// the slot.
func TestStepSlotRace(t *testing.T) {
	paced := func(c *ent.CampaignCreate) { c.SetMinDelayMs(10_000).SetMaxDelayMs(10_000) }
	f := newFixture(t, engines{n: 1}, chats(3), paced)
	second := f.another(paced)
	var wg sync.WaitGroup
	for _, id := range []string{f.c.ID, second.ID} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.step.Step(f.ctx, id, "t1", now); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := f.client.Message.Query().CountX(f.ctx); n != 1 {
		t.Errorf("%d messages made, want 1", n)
	}
	var next []time.Duration
	for _, c := range f.client.Campaign.Query().AllX(f.ctx) {
		next = append(next, c.NextStepAt.Sub(now))
	}
	if diff := cmp.Diff([]time.Duration{10 * time.Second, 10 * time.Second}, next); diff != "" {
		t.Errorf("next steps after now (-want +got):\n%s", diff)
	}
}
