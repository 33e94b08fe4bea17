package campaigns_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// now is the moment every step of these tests runs at: noon UTC.
var now = time.Date(2030, 1, 7, 12, 0, 0, 0, time.UTC)

// fakeEngine is a connected engine that sends nothing (a step only picks it),
// restricted when restriction is not empty.
type fakeEngine struct{ id, restriction string }

func (e *fakeEngine) ID() string   { return e.id }
func (e *fakeEngine) Kind() string { return engine.KindRegular }
func (e *fakeEngine) Close() error { return nil }
func (e *fakeEngine) Send(context.Context, engine.Outgoing) (engine.Key, error) {
	return engine.Key{}, fmt.Errorf("fakeEngine: a step sends nothing")
}
func (e *fakeEngine) Restriction() (string, bool) { return e.restriction, e.restriction != "" }

// engines is a workspace with n connected engines, eng_a, eng_b, ... (none:
// engine.ErrNoEngine); Pick picks eng_a. The engine restricted names reports
// restriction. Every engine of the fixture has a row, connected or not.
type engines struct {
	n                       int
	restricted, restriction string
}

func (e engines) Pick(ctx context.Context, ws string) (engine.Engine, error) {
	if e.n == 0 {
		return nil, engine.ErrNoEngine
	}
	return e.Find(ctx, ws, "eng_a")
}

func (e engines) Find(_ context.Context, _, id string) (engine.Engine, error) {
	if i := slices.Index(engineIDs, id); i < 0 || i >= e.n {
		return nil, engine.ErrDisconnected
	}
	f := &fakeEngine{id: id}
	if id == e.restricted {
		f.restriction = e.restriction
	}
	return f, nil
}

// engineIDs are the engines (rows) of every fixture's workspace.
var engineIDs = []string{"eng_a", "eng_b", "eng_c"}

// queue records the tasks a step queues.
type queue struct {
	mu         sync.Mutex
	dispatched []string
	steps      []queuedStep
}

type queuedStep struct {
	Token string
	In    time.Duration // after now; 0 for at once
}

func (q *queue) Dispatch(_ context.Context, _, messageID string, _ time.Time) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dispatched = append(q.dispatched, messageID)
	return true, nil
}

func (q *queue) CampaignStep(_ context.Context, _, _, token string, at time.Time) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := queuedStep{Token: token}
	if !at.IsZero() {
		s.In = at.Sub(now)
	}
	q.steps = append(q.steps, s)
	return true, nil
}

// fixture is a workspace with an audience of contacts, a webhook that wants
// every event a step records, and a campaign to them.
type fixture struct {
	ctx    context.Context
	client *ent.Client
	queue  *queue
	step   *campaigns.Stepper
	c      *ent.Campaign
}

// newFixture stores contacts (the chats to, in order) and the campaign edit
// makes of a running campaign under step token "t1" with no delay.
func newFixture(t *testing.T, eng engines, to []string, edit func(*ent.CampaignCreate)) *fixture {
	t.Helper()
	ws := "ws_" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	url := "sqlite://" + t.TempDir() + "/step.db"
	client, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if err := storage.Migrate(ctx, client, url); err != nil {
		t.Fatal(err)
	}
	client.Webhook.Create().SetURL("https://example.com/hook").SetSecret("whsec_x").
		SetEvents([]string{"message.queued", "message.failed", "campaign.started", "campaign.paused",
			"campaign.complete_sent", "campaign.complete_delivered"}).
		SaveX(ctx)
	for _, id := range engineIDs {
		client.Engine.Create().SetID(id).SetKind("remote").SaveX(ctx)
	}
	aud := client.Audience.Create().SetName("a").SetContactSeq(int64(len(to))).SaveX(ctx)
	for i, jid := range to {
		client.AudienceContact.Create().SetAudienceID(aud.ID).SetTo(jid).SetSeq(int64(i + 1)).
			SetVariables(map[string]string{"first": "P" + fmt.Sprint(i+1)}).SaveX(ctx)
	}
	create := client.Campaign.Create().SetName("c").SetAudienceID(aud.ID).SetText("Hi {first}").
		SetStatus(string(campaigns.StatusRunning)).SetStepToken("t1").SetLastSeq(int64(len(to))).SetTotalCount(len(to))
	if edit != nil {
		edit(create)
	}
	q := &queue{}
	return &fixture{ctx: ctx, client: client, queue: q, c: create.SaveX(ctx),
		step: &campaigns.Stepper{Client: client, Engines: eng, Queue: q}}
}

// outcome is what a step leaves behind.
type outcome struct {
	Status, Reason string
	Cursor         int64
	NextIn         time.Duration // the stored next step, after now (-1: none)
	Messages       []string      // "to status engine", by recipient
	Dispatched     int
	Steps          []queuedStep // token "stored" when it is the campaign's
	Events         []string     // by type
	// Slots are the engines' next campaign send slots, after now (those set).
	Slots map[string]time.Duration
}

func (f *fixture) outcome(t *testing.T) outcome {
	t.Helper()
	c := f.client.Campaign.GetX(f.ctx, f.c.ID)
	o := outcome{Status: c.Status, Reason: c.PauseReason, Cursor: c.Cursor, NextIn: -1, Dispatched: len(f.queue.dispatched)}
	if c.NextStepAt != nil {
		o.NextIn = c.NextStepAt.Sub(now)
	}
	for _, m := range f.client.Message.Query().Order(ent.Asc(message.FieldTo)).AllX(f.ctx) {
		o.Messages = append(o.Messages, m.To+" "+m.Status+" "+m.EngineID)
	}
	for _, s := range f.queue.steps {
		if s.Token == c.StepToken {
			s.Token = "stored"
		}
		o.Steps = append(o.Steps, s)
	}
	for _, e := range f.client.Engine.Query().AllX(f.ctx) {
		if e.CampaignNextAt != nil {
			if o.Slots == nil {
				o.Slots = map[string]time.Duration{}
			}
			o.Slots[e.ID] = e.CampaignNextAt.Sub(now)
		}
	}
	for _, e := range f.client.Event.Query().Order(ent.Asc(event.FieldType)).AllX(f.ctx) {
		o.Events = append(o.Events, e.Type)
	}
	return o
}

func chats(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("1555000%04d@c.us", i+1)
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// pending are the messages to the chats to, pending, made through eng_a.
func pending(to ...string) []string { return pendingOn("eng_a", to...) }

// pendingOn are the messages to the chats to, pending, made through eng.
func pendingOn(eng string, to ...string) []string {
	out := make([]string, len(to))
	for i, jid := range to {
		out[i] = jid + " " + string(messaging.StatusPending) + " " + eng
	}
	return out
}

// slot is the engine eng's send slot d after now.
func slot(eng string, d time.Duration) map[string]time.Duration {
	return map[string]time.Duration{eng: d}
}

// One step of a campaign: what it makes, how its next step is paced, and when
// it makes nothing. Its cap and pace are those of the engine it sends through:
// the one it is pinned to, else the one Pick picks (eng_a).
func TestStep(t *testing.T) {
	to := chats(5)
	pinned := func(eng string) func(*ent.CampaignCreate) {
		return func(c *ent.CampaignCreate) { c.SetEngineID(eng).SetDailyCap(2) }
	}
	for _, tc := range []struct {
		name    string
		engines engines
		edit    func(*ent.CampaignCreate)
		before  []string                 // the engines of campaign messages made an hour ago, one each
		slots   map[string]time.Duration // the engines' send slots before the step, after now
		want    outcome
	}{{
		name:    "paced: one message, the next step after the delay, the engine's slot with it",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetMinDelayMs(10_000).SetMaxDelayMs(10_000) },
		want: outcome{Status: "running", Cursor: 1, NextIn: 10 * time.Second, Messages: pending(to[0]), Dispatched: 1,
			Steps: []queuedStep{{"stored", 10 * time.Second}}, Events: []string{"message.queued"}, Slots: slot("eng_a", 10*time.Second)},
	}, {
		name:    "batched: every message at once, then the watch",
		engines: engines{n: 1},
		want: outcome{Status: "running", Cursor: 5, NextIn: campaigns.WatchDelay(0), Messages: pending(to...), Dispatched: 5,
			Steps: []queuedStep{{"stored", campaigns.WatchDelay(0)}}, Events: repeat("message.queued", 5), Slots: slot("eng_a", 0)},
	}, {
		name:    "daily cap per engine: one engine",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetDailyCap(2) },
		want: outcome{Status: "running", Cursor: 2, NextIn: 0, Messages: pending(to[:2]...), Dispatched: 2,
			Steps: []queuedStep{{"stored", 0}}, Events: repeat("message.queued", 2), Slots: slot("eng_a", 0)},
	}, {
		// The cap is the sending engine's: a second one connected (the sandbox
		// beside a phone) does not double it.
		name:    "daily cap per engine: two engines connected, one sends",
		engines: engines{n: 2},
		edit:    func(c *ent.CampaignCreate) { c.SetDailyCap(2) },
		want: outcome{Status: "running", Cursor: 2, NextIn: 0, Messages: pending(to[:2]...), Dispatched: 2,
			Steps: []queuedStep{{"stored", 0}}, Events: repeat("message.queued", 2), Slots: slot("eng_a", 0)},
	}, {
		name:    "daily cap reached on the engine: wait",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetDailyCap(2) },
		before:  []string{"eng_a", "eng_a"},
		want: outcome{Status: "running", NextIn: campaigns.CapRetry,
			Messages: pending("1666000001@c.us", "1666000002@c.us"), Steps: []queuedStep{{"stored", campaigns.CapRetry}}},
	}, {
		name:    "daily cap: another engine's messages do not count",
		engines: engines{n: 2},
		edit:    func(c *ent.CampaignCreate) { c.SetDailyCap(2) },
		before:  []string{"eng_b", "eng_b", "eng_a"},
		want: outcome{Status: "running", Cursor: 1, NextIn: 0, Dispatched: 1,
			Messages: append(pending(to[0]), append(pendingOn("eng_b", "1666000001@c.us", "1666000002@c.us"), pending("1666000003@c.us")...)...),
			Steps:    []queuedStep{{"stored", 0}}, Events: []string{"message.queued"}, Slots: slot("eng_a", 0)},
	}, {
		name:    "pinned: through its engine, counted there",
		engines: engines{n: 2},
		edit:    pinned("eng_b"),
		before:  []string{"eng_a", "eng_a", "eng_b"},
		want: outcome{Status: "running", Cursor: 1, NextIn: 0, Dispatched: 1,
			Messages: append(pendingOn("eng_b", to[0]), append(pending("1666000001@c.us", "1666000002@c.us"), pendingOn("eng_b", "1666000003@c.us")...)...),
			Steps:    []queuedStep{{"stored", 0}}, Events: []string{"message.queued"}, Slots: slot("eng_b", 0)},
	}, {
		name:    "pinned: its engine's cap reached, wait (another engine has room)",
		engines: engines{n: 2},
		edit:    pinned("eng_b"),
		before:  []string{"eng_b", "eng_b"},
		want: outcome{Status: "running", NextIn: campaigns.CapRetry,
			Messages: pendingOn("eng_b", "1666000001@c.us", "1666000002@c.us"), Steps: []queuedStep{{"stored", campaigns.CapRetry}}},
	}, {
		name:    "pinned: its engine disconnected, wait as without an engine",
		engines: engines{n: 2},
		edit:    pinned("eng_c"),
		want:    outcome{Status: "running", NextIn: campaigns.NoEngineRetry, Steps: []queuedStep{{"stored", campaigns.NoEngineRetry}}},
	}, {
		name:    "pinned: its engine restricted pauses the campaign",
		engines: engines{n: 2, restricted: "eng_b", restriction: "banned for a day"},
		edit:    pinned("eng_b"),
		want:    outcome{Status: "paused", Reason: campaigns.PauseReason("eng_b", "banned for a day"), NextIn: -1, Events: []string{"campaign.paused"}},
	}, {
		name:    "the engine's slot taken by another campaign: wait for it",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetMinDelayMs(10_000).SetMaxDelayMs(10_000) },
		slots:   slot("eng_a", 7*time.Second),
		want: outcome{Status: "running", NextIn: 7 * time.Second, Steps: []queuedStep{{"stored", 7 * time.Second}},
			Slots: slot("eng_a", 7*time.Second)},
	}, {
		name:    "another engine's slot: not this campaign's",
		engines: engines{n: 2},
		edit:    func(c *ent.CampaignCreate) { c.SetMinDelayMs(10_000).SetMaxDelayMs(10_000) },
		slots:   slot("eng_b", 7*time.Second),
		want: outcome{Status: "running", Cursor: 1, NextIn: 10 * time.Second, Messages: pending(to[0]), Dispatched: 1,
			Steps: []queuedStep{{"stored", 10 * time.Second}}, Events: []string{"message.queued"},
			Slots: map[string]time.Duration{"eng_a": 10 * time.Second, "eng_b": 7 * time.Second}},
	}, {
		name:    "the engine's slot due: taken",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetMinDelayMs(10_000).SetMaxDelayMs(10_000) },
		slots:   slot("eng_a", -time.Second),
		want: outcome{Status: "running", Cursor: 1, NextIn: 10 * time.Second, Messages: pending(to[0]), Dispatched: 1,
			Steps: []queuedStep{{"stored", 10 * time.Second}}, Events: []string{"message.queued"}, Slots: slot("eng_a", 10*time.Second)},
	}, {
		name:    "quiet hours: wait until they end",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetQuietStart("11:00").SetQuietEnd("13:30").SetTimezone("UTC") },
		want: outcome{Status: "running", NextIn: 90 * time.Minute,
			Steps: []queuedStep{{"stored", 90 * time.Minute}}},
	}, {
		name:    "quiet hours in another zone: not now",
		engines: engines{n: 1},
		edit: func(c *ent.CampaignCreate) {
			c.SetQuietStart("11:00").SetQuietEnd("13:30").SetTimezone("Asia/Tokyo").SetMinDelayMs(1000).SetMaxDelayMs(1000)
		},
		want: outcome{Status: "running", Cursor: 1, NextIn: time.Second, Messages: pending(to[0]), Dispatched: 1,
			Steps: []queuedStep{{"stored", time.Second}}, Events: []string{"message.queued"}, Slots: slot("eng_a", time.Second)},
	}, {
		name:    "no engine: wait",
		engines: engines{},
		want:    outcome{Status: "running", NextIn: campaigns.NoEngineRetry, Steps: []queuedStep{{"stored", campaigns.NoEngineRetry}}},
	}, {
		name:    "a restricted engine pauses the campaign",
		engines: engines{n: 1, restricted: "eng_a", restriction: "banned for a day"},
		want:    outcome{Status: "paused", Reason: campaigns.PauseReason("eng_a", "banned for a day"), NextIn: -1, Events: []string{"campaign.paused"}},
	}, {
		name:    "paused: nothing",
		engines: engines{n: 1},
		edit: func(c *ent.CampaignCreate) {
			c.SetStatus(string(campaigns.StatusPaused)).SetStepToken("").SetPausedAt(now)
		},
		want: outcome{Status: "paused", NextIn: -1},
	}, {
		name:    "cancelled: nothing",
		engines: engines{n: 1},
		edit: func(c *ent.CampaignCreate) {
			c.SetStatus(string(campaigns.StatusAborted)).SetStepToken("").SetAbortedAt(now)
		},
		want: outcome{Status: "aborted", NextIn: -1},
	}, {
		name:    "another token: nothing",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetStepToken("t2") },
		want:    outcome{Status: "running", NextIn: -1},
	}, {
		name:    "pending without content: held",
		engines: engines{n: 1},
		edit:    func(c *ent.CampaignCreate) { c.SetStatus(string(campaigns.StatusPending)).SetText("") },
		want:    outcome{Status: "paused", Reason: campaigns.NoContentReason, NextIn: -1, Events: []string{"campaign.paused"}},
	}, {
		name:    "pending: started, then the first message",
		engines: engines{n: 1},
		edit: func(c *ent.CampaignCreate) {
			c.SetStatus(string(campaigns.StatusPending)).SetMinDelayMs(5000).SetMaxDelayMs(5000)
		},
		want: outcome{Status: "running", Cursor: 1, NextIn: 5 * time.Second, Messages: pending(to[0]), Dispatched: 1,
			Steps: []queuedStep{{"stored", 5 * time.Second}}, Events: []string{"campaign.started", "message.queued"},
			Slots: slot("eng_a", 5*time.Second)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.engines, to, tc.edit)
			for i, eng := range tc.before {
				f.client.Message.Create().SetOrigin(message.OriginScheduled).SetTo(fmt.Sprintf("166600000%d@c.us", i+1)).
					SetType("text").SetText("x").SetCampaignID(f.c.ID).SetEngineID(eng).SetCreatedAt(now.Add(-time.Hour)).SaveX(f.ctx)
			}
			for eng, in := range tc.slots {
				f.client.Engine.UpdateOneID(eng).SetCampaignNextAt(now.Add(in)).ExecX(f.ctx)
			}
			if err := f.step.Step(f.ctx, f.c.ID, "t1", now); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, f.outcome(t)); diff != "" {
				t.Errorf("after the step (-want +got):\n%s", diff)
			}
		})
	}
}

// A paced step waits a random delay within the campaign's window.
func TestStepPacingWindow(t *testing.T) {
	f := newFixture(t, engines{n: 1}, chats(40), func(c *ent.CampaignCreate) { c.SetMinDelayMs(8000).SetMaxDelayMs(20000) })
	token, at := "t1", now
	for i := range 40 {
		if err := f.step.Step(f.ctx, f.c.ID, token, at); err != nil {
			t.Fatal(err)
		}
		c := f.client.Campaign.GetX(f.ctx, f.c.ID)
		if c.Cursor != int64(i+1) {
			t.Fatalf("step %d: cursor %d", i, c.Cursor)
		}
		if i == 39 {
			break // the last one waits to watch
		}
		if d := c.NextStepAt.Sub(at); d < 8*time.Second || d > 20*time.Second {
			t.Errorf("step %d: next step in %s, want 8s-20s", i, d)
		}
		token, at = c.StepToken, *c.NextStepAt
	}
}

// A step run twice under the same token (a task redelivered, or two workers)
// makes its messages once: no contact is sent twice.
func TestStepTwice(t *testing.T) {
	to := chats(3)
	f := newFixture(t, engines{n: 1}, to, func(c *ent.CampaignCreate) { c.SetMinDelayMs(1000).SetMaxDelayMs(1000) })
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.step.Step(f.ctx, f.c.ID, "t1", now); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := f.step.Step(f.ctx, f.c.ID, "t1", now); err != nil {
		t.Fatal(err)
	}
	got := f.outcome(t)
	want := outcome{Status: "running", Cursor: 1, NextIn: time.Second, Messages: pending(to[0]), Dispatched: 1,
		Steps: []queuedStep{{"stored", time.Second}}, Events: []string{"message.queued"}, Slots: slot("eng_a", time.Second)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the step twice (-want +got):\n%s", diff)
	}
	// Then every step to the end, each twice: one message per contact.
	for range 10 {
		c := f.client.Campaign.GetX(f.ctx, f.c.ID)
		if c.StepToken == "" {
			break
		}
		for range 2 {
			if err := f.step.Step(f.ctx, f.c.ID, c.StepToken, *c.NextStepAt); err != nil {
				t.Fatal(err)
			}
		}
	}
	var tos []string
	for _, m := range f.client.Message.Query().AllX(f.ctx) {
		tos = append(tos, m.To)
	}
	sort.Strings(tos)
	if diff := cmp.Diff(to, tos); diff != "" {
		t.Errorf("messages made (-want +got):\n%s", diff)
	}
}

// A campaign's message is stored as the scheduled-message endpoint stores one
// (messaging.NewMessage), with its campaign and contact; one that cannot go out
// fails at once with the reason.
func TestStepMessages(t *testing.T) {
	long := strings.Repeat("x", messaging.MaxText)
	for _, tc := range []struct {
		name string
		edit func(*ent.CampaignCreate)
		want []string // type, text, media url, kind, filename, wire type, status, failure reason
	}{{
		name: "text",
		want: []string{"text", "Hi P1", "", "", "", "chat", "pending", ""},
	}, {
		name: "media with a caption",
		edit: func(c *ent.CampaignCreate) {
			c.SetMediaURL("https://example.com/a/cat.jpg").SetMediaCaption("For {first}")
		},
		want: []string{"media", "For P1", "https://example.com/a/cat.jpg", "image", "cat.jpg", "image", "pending", ""},
	}, {
		name: "a missing variable fails",
		edit: func(c *ent.CampaignCreate) { c.SetText("Hi {last}") },
		want: []string{"text", "Hi {last}", "", "", "", "chat", "failed", "the contact has no value for {last}"},
	}, {
		name: "a missing variable may be skipped: it stays as written",
		edit: func(c *ent.CampaignCreate) { c.SetText("Hi {last}").SetOnMissingVariable("skip") },
		want: []string{"text", "Hi {last}", "", "", "", "chat", "pending", ""},
	}, {
		name: "too long after substitution",
		edit: func(c *ent.CampaignCreate) { c.SetText(long + "{first}") },
		want: []string{"text", long + "P1", "", "", "", "chat", "failed",
			fmt.Sprintf("the text is %d characters long after substitution (at most %d)", messaging.MaxText+2, messaging.MaxText)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, engines{n: 1}, chats(1), tc.edit)
			if err := f.step.Step(f.ctx, f.c.ID, "t1", now); err != nil {
				t.Fatal(err)
			}
			m := f.client.Message.Query().OnlyX(f.ctx)
			got := []string{m.Type, m.Text, m.MediaURL, m.MediaKind, m.MediaFilename, m.WireType, m.Status, m.FailureReason}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stored message (-want +got):\n%s", diff)
			}
			if m.Origin != message.OriginScheduled || m.CampaignID == nil || *m.CampaignID != f.c.ID ||
				m.AudienceContactID == nil || m.To != chats(1)[0] || !m.CreatedAt.Equal(now) || !strings.HasPrefix(m.ID, "msg_") {
				t.Errorf("stored message %+v: want a scheduled message of the campaign, made now", m)
			}
			wantDispatched := 1
			if messaging.StatusOf(m) == messaging.StatusFailed {
				wantDispatched = 0
			}
			if len(f.queue.dispatched) != wantDispatched {
				t.Errorf("dispatched %v, want %d", f.queue.dispatched, wantDispatched)
			}
		})
	}
}

// another stores a second running campaign to the fixture's audience under step
// token "t1", as edit makes it.
func (f *fixture) another(edit func(*ent.CampaignCreate)) *ent.Campaign {
	create := f.client.Campaign.Create().SetName("c2").SetAudienceID(f.c.AudienceID).SetText("Hello {first}").
		SetStatus(string(campaigns.StatusRunning)).SetStepToken("t1").SetLastSeq(f.c.LastSeq).SetTotalCount(f.c.TotalCount)
	if edit != nil {
		edit(create)
	}
	return create.SaveX(f.ctx)
}
