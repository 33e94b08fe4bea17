package campaigns

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/view"
	"github.com/switchboardhq/switchboard/webhook"
)

func TestStateMachine(t *testing.T) {
	actions := []string{ActionStart, ActionPause, ActionResume, ActionCancel, ActionSent, ActionDelivered}
	want := map[Status]map[string]Status{
		StatusPending:           {ActionStart: StatusRunning, ActionCancel: StatusAborted},
		StatusRunning:           {ActionPause: StatusPaused, ActionCancel: StatusAborted, ActionSent: StatusCompleteSent, ActionDelivered: StatusCompleteDelivered},
		StatusPaused:            {ActionResume: StatusRunning, ActionCancel: StatusAborted},
		StatusCompleteSent:      {ActionDelivered: StatusCompleteDelivered},
		StatusCompleteDelivered: {},
		StatusAborted:           {},
	}
	got := map[Status]map[string]Status{}
	for _, s := range Statuses {
		got[s] = map[string]Status{}
		for _, a := range actions {
			if to, ok := Next(s, a); ok {
				got[s][a] = to
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
	events := []struct {
		from, to Status
		want     string
	}{
		{StatusPending, StatusRunning, webhook.EventCampaignStarted},
		{StatusRunning, StatusPaused, webhook.EventCampaignPaused},
		{StatusPaused, StatusRunning, webhook.EventCampaignResumed},
		{StatusPending, StatusAborted, webhook.EventCampaignAborted},
		{StatusPaused, StatusAborted, webhook.EventCampaignAborted},
		{StatusRunning, StatusCompleteSent, webhook.EventCampaignCompleted},
		{StatusRunning, StatusCompleteDelivered, webhook.EventCampaignCompleted},
		{StatusCompleteSent, StatusCompleteDelivered, ""}, // completed once
	}
	for _, e := range events {
		if got := Event(e.from, e.to); got != e.want {
			t.Errorf("Event(%s, %s) = %q, want %q", e.from, e.to, got, e.want)
		}
	}
	for s, finished := range map[Status]bool{StatusPending: false, StatusRunning: false, StatusPaused: false,
		StatusCompleteSent: true, StatusCompleteDelivered: true, StatusAborted: true} {
		if Finished(s) != finished {
			t.Errorf("Finished(%s) = %v", s, !finished)
		}
	}
}

func TestTemplate(t *testing.T) {
	alex := Contact{To: "15550100@c.us", Variables: map[string]string{"FirstName": "Alex", "plan": "pro"}, Name: "Al"}
	bare := Contact{To: "120363000000000001@g.us"}
	for _, tc := range []struct {
		text    string
		c       Contact
		want    string
		missing []string
	}{
		{"Hi {firstname}", alex, "Hi Alex", nil},
		{"Hi { FIRST name }", alex, "Hi Alex", nil},
		{"{plan} plan for {phone} / {mobile}", alex, "pro plan for +15550100 / +15550100", nil},
		{"{whatsappname} {displayname}", alex, "Al Alex", nil},
		{"{displayname}", Contact{To: "1@c.us", Variables: map[string]string{"firstname": "A", "LastName": "B"}}, "A B", nil},
		{"{displayname} {whatsappname}|", bare, "120363000000000001@g.us |", nil},
		{"Hi {firstname}, {{firstname}} {}", bare, "Hi {firstname}, {{firstname}} {}", []string{"firstname"}},
		{"{a}{b}{a}", bare, "{a}{b}{a}", []string{"a", "b"}},
		{"{phone}", Contact{To: "1@c.us", Variables: map[string]string{"Phone": "override"}}, "override", nil},
	} {
		if got := Render(tc.text, tc.c); got != tc.want {
			t.Errorf("Render(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if diff := cmp.Diff(tc.missing, Missing(tc.text, tc.c)); diff != "" {
			t.Errorf("Missing(%q) (-want +got):\n%s", tc.text, diff)
		}
	}
}

func TestCheckVariables(t *testing.T) {
	long := string(make([]rune, 1025))
	for _, tc := range []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"firstName": "a", "_x9": "b"}, nil},
		{map[string]string{"9a": "a"}, []string{"variables.9a"}},
		{map[string]string{"a-b": "a"}, []string{"variables.a-b"}},
		{map[string]string{"abcdefghijabcdefghijabcdefghijabc": "33 chars"}, []string{"variables.abcdefghijabcdefghijabcdefghijabc"}},
		{map[string]string{"a": long}, []string{"variables.a"}},
	} {
		var got []string
		CheckVariables(tc.vars, func(path, code, msg string) { got = append(got, path) })
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("CheckVariables(%v) (-want +got):\n%s", tc.vars, diff)
		}
	}
}

func TestQuietHours(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 11, 22, h, m, 0, 0, paris) }
	overnight := PacingOf(0, 0, 0, "21:00", "08:00", "Europe/Paris")
	daytime := PacingOf(0, 0, 0, "12:00", "14:00", "Europe/Paris")
	none := PacingOf(0, 0, 0, "", "", "")
	for _, tc := range []struct {
		p    Pacing
		now  time.Time
		want time.Time
	}{
		{overnight, at(22, 0), time.Date(2026, 11, 23, 8, 0, 0, 0, paris)},
		{overnight, at(3, 0), at(8, 0)},
		{overnight, at(8, 0), time.Time{}},
		{overnight, at(20, 59), time.Time{}},
		{daytime, at(12, 30), at(14, 0)},
		{daytime, at(14, 0), time.Time{}},
		{none, at(3, 0), time.Time{}},
	} {
		if got := tc.p.QuietUntil(tc.now); !got.Equal(tc.want) {
			t.Errorf("QuietUntil(%s) = %s, want %s", tc.now, got, tc.want)
		}
	}
}

func TestPacing(t *testing.T) {
	p := Pacing{MinDelay: 2 * time.Second, MaxDelay: 3 * time.Second}
	for range 100 {
		if d := p.Delay(); d < p.MinDelay || d > p.MaxDelay {
			t.Fatalf("Delay() = %s outside [%s, %s]", d, p.MinDelay, p.MaxDelay)
		}
	}
	if !(Pacing{}).Batched() || p.Batched() {
		t.Error("Batched")
	}
	for since, want := range map[time.Duration]time.Duration{0: time.Second, 30 * time.Second: 3 * time.Second, time.Hour: time.Minute} {
		if got := WatchDelay(since); got != want {
			t.Errorf("WatchDelay(%s) = %s, want %s", since, got, want)
		}
	}
}

func TestTally(t *testing.T) {
	var c view.Counts
	for status, n := range map[messaging.Status]int{"pending": 1, "sending": 2, "confirmed": 3, "received": 4, "read": 5, "played": 1, "failed": 6, "expired": 1, "cancelled": 1} {
		Tally(&c, status, n)
	}
	want := view.Counts{Made: 24, Queued: 3, Sent: 13, Delivered: 10, Read: 6, Failed: 8}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Tally (-want +got):\n%s", diff)
	}
	if AllSent(c) || AllDelivered(c) {
		t.Error("done with messages queued")
	}
}
