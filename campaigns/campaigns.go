// Package campaigns holds the rules of audiences and campaigns that the core
// (package graph) applies, and runs their steps (Stepper, whose asynq task package
// jobs adapts): the campaign's states and the moves between them, pacing defaults
// and bounds, the text template with its {variable} tokens, and the making of a
// campaign's messages, built as the API's are (messaging.NewMessage).
package campaigns

import (
	"math/rand/v2"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/webhook"
)

// Status is a campaign's state, as stored in its status column.
type Status string

// Campaign statuses.
const (
	StatusPending           Status = "pending"
	StatusRunning           Status = "running"
	StatusPaused            Status = "paused"
	StatusCompleteSent      Status = "complete_sent"
	StatusCompleteDelivered Status = "complete_delivered"
	StatusAborted           Status = "aborted"
)

// Statuses lists every status, in lifecycle order.
var Statuses = []Status{StatusPending, StatusRunning, StatusPaused, StatusCompleteSent, StatusCompleteDelivered, StatusAborted}

// StatusOf is c's status, typed: the one conversion from the status column.
func StatusOf(c *ent.Campaign) Status { return Status(c.Status) }

// StatusIs selects the campaigns in status s.
func StatusIs(s Status) predicate.Campaign { return campaign.Status(string(s)) }

// StatusIn selects the campaigns in any of statuses.
func StatusIn(statuses ...Status) predicate.Campaign {
	in := make([]string, len(statuses))
	for i, s := range statuses {
		in[i] = string(s)
	}
	return campaign.StatusIn(in...)
}

// Actions a caller (or the step) takes on a campaign.
const (
	ActionStart     = "start"     // the first step runs
	ActionHold      = "hold"      // the first step finds nothing to send (HasContent)
	ActionPause     = "pause"     // POST …/pause, or the engine reported a restriction
	ActionResume    = "resume"    // POST …/resume
	ActionCancel    = "cancel"    // POST …/cancel
	ActionSent      = "sent"      // every message left the queue (sent or failed)
	ActionDelivered = "delivered" // every message reached its recipient (or failed)
)

// transitions is the state machine: status -> action -> next status.
var transitions = map[Status]map[string]Status{
	StatusPending: {ActionStart: StatusRunning, ActionHold: StatusPaused, ActionCancel: StatusAborted},
	StatusRunning: {ActionPause: StatusPaused, ActionCancel: StatusAborted,
		ActionSent: StatusCompleteSent, ActionDelivered: StatusCompleteDelivered},
	StatusPaused:       {ActionResume: StatusRunning, ActionCancel: StatusAborted},
	StatusCompleteSent: {ActionDelivered: StatusCompleteDelivered},
}

// Next returns the status a campaign in status moves to on action, and false when
// the action is not allowed there.
func Next(status Status, action string) (Status, bool) {
	to, ok := transitions[status][action]
	return to, ok
}

// HasContent reports whether a campaign with this text and media URL has
// something to send. A campaign may be created without either (the reference
// requires only name and audienceId); its first step then holds it, paused with
// NoContentReason, and resume refuses it until an edit gives it content.
func HasContent(text, mediaURL string) bool { return text != "" || mediaURL != "" }

// NoContentReason is the pause reason of a campaign held for want of content.
const NoContentReason = "the campaign has no text or mediaUrl: give it one (PATCH /v1/campaigns/{id}), then resume it"

// Finished reports whether a campaign in status sends nothing more: it completed
// its sending, or was aborted.
func Finished(status Status) bool {
	return status == StatusCompleteSent || status == StatusCompleteDelivered || status == StatusAborted
}

// Event returns the webhook event a move from one status to another records, or "".
func Event(from, to Status) string {
	switch {
	case from == StatusPending && to == StatusRunning:
		return webhook.EventCampaignStarted
	case to == StatusPaused:
		return webhook.EventCampaignPaused
	case from == StatusPaused && to == StatusRunning:
		return webhook.EventCampaignResumed
	case to == StatusAborted:
		return webhook.EventCampaignAborted
	case from == StatusRunning && (to == StatusCompleteSent || to == StatusCompleteDelivered):
		return webhook.EventCampaignCompleted
	}
	return ""
}

// Pacing defaults and bounds. A campaign sends one message per step, then waits a
// random delay between MinDelay and MaxDelay; with both zero it sends in batches of
// BatchSize per step without waiting (for tests and benchmarks, or an account that
// is allowed to blast).
const (
	DefaultMinDelay = 8 * time.Second
	DefaultMaxDelay = 20 * time.Second
	MaxDelayBound   = time.Hour
	DefaultDailyCap = 1000
	MaxDailyCap     = 100000
	// BatchSize is how many messages a step without delay makes at once.
	BatchSize = 200
	// CapRetry is how long a campaign whose engine reached its daily cap waits
	// before it looks again.
	CapRetry = 10 * time.Minute
	// NoEngineRetry is how long a campaign waits when no engine is connected.
	NoEngineRetry = 30 * time.Second
	// WatchFor is how long after its last message a campaign keeps watching for
	// deliveries (complete_sent -> complete_delivered) before it stops looking.
	WatchFor = 7 * 24 * time.Hour
)

// Pacing is a campaign's pace.
type Pacing struct {
	MinDelay, MaxDelay time.Duration
	// DailyCap bounds the campaign messages a workspace makes through one engine
	// in any 24 hours (every campaign on the engine counts).
	DailyCap int
	// Quiet hours, local time in Location; none when QuietStart == QuietEnd.
	QuietStart, QuietEnd time.Duration // since midnight
	Location             *time.Location
}

// Batched reports whether the campaign sends without delay, in batches.
func (p Pacing) Batched() bool { return p.MaxDelay == 0 }

// Delay returns a random delay between MinDelay and MaxDelay.
func (p Pacing) Delay() time.Duration {
	if p.MaxDelay <= p.MinDelay {
		return p.MinDelay
	}
	return p.MinDelay + rand.N(p.MaxDelay-p.MinDelay+1)
}

// QuietUntil returns the end of the quiet hours that now falls in, or the zero
// time when now is not in quiet hours.
func (p Pacing) QuietUntil(now time.Time) time.Time {
	if p.QuietStart == p.QuietEnd || p.Location == nil {
		return time.Time{}
	}
	local := now.In(p.Location)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, p.Location)
	since := local.Sub(midnight)
	at := func(day int, d time.Duration) time.Time {
		return time.Date(local.Year(), local.Month(), local.Day()+day, 0, 0, 0, 0, p.Location).Add(d)
	}
	if p.QuietStart < p.QuietEnd { // e.g. 01:00-07:00, within one day
		if since >= p.QuietStart && since < p.QuietEnd {
			return at(0, p.QuietEnd)
		}
		return time.Time{}
	}
	// Across midnight, e.g. 21:00-08:00.
	switch {
	case since >= p.QuietStart:
		return at(1, p.QuietEnd)
	case since < p.QuietEnd:
		return at(0, p.QuietEnd)
	}
	return time.Time{}
}

// PacingOf returns the pace stored on a campaign; an unknown time zone counts as UTC.
func PacingOf(minDelay, maxDelay time.Duration, dailyCap int, quietStart, quietEnd, timezone string) Pacing {
	p := Pacing{MinDelay: minDelay, MaxDelay: maxDelay, DailyCap: dailyCap}
	start, okS := clock(quietStart)
	end, okE := clock(quietEnd)
	if okS && okE {
		loc, err := time.LoadLocation(timezone)
		if err != nil || timezone == "" {
			loc = time.UTC
		}
		p.QuietStart, p.QuietEnd, p.Location = start, end, loc
	}
	return p
}

// clock parses HH:MM into the time since midnight.
func clock(s string) (time.Duration, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, false
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute, true
}

// WatchDelay is how long a campaign whose messages are all made waits before it
// counts them again: a tenth of the time since the last was made, between one
// second and a minute.
func WatchDelay(sinceLast time.Duration) time.Duration {
	return min(max(sinceLast/10, time.Second), time.Minute)
}
