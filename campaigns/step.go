package campaigns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/audiencecontact"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
)

// A campaign advances one step at a time: one step task per campaign is queued at
// any moment, named by the campaign's step token. A step makes the next message(s)
// (one, or a batch of BatchSize when the campaign has no delay) in the
// transaction that moves the campaign's cursor past their contacts and takes a new
// step token, then queues their dispatch and the next step. Pause, resume and
// cancel change the token (or clear it), so a step queued before them finds it
// changed and does nothing, and a step that raced them fails its compare-and-set
// and makes nothing. Once every message is made, the steps watch the messages
// until all are sent (complete_sent) and all delivered or failed
// (complete_delivered).

// Engines are the engines of a workspace, as a step needs them (*engine.Registry).
type Engines interface {
	// Pick returns an engine of the workspace, or engine.ErrNoEngine.
	Pick(ctx context.Context, workspaceID string) (engine.Engine, error)
	// Find returns the engine engineID of the workspace, or
	// engine.ErrDisconnected when it is not connected.
	Find(ctx context.Context, workspaceID, engineID string) (engine.Engine, error)
}

// Queue queues the tasks a step leads to (*jobs.Queue).
type Queue interface {
	// Dispatch queues the sending of a message at at (now when zero).
	Dispatch(ctx context.Context, workspaceID, messageID string, at time.Time) (queued bool, err error)
	// CampaignStep queues the step of a campaign that token names, at at (now
	// when zero), unless it is queued already.
	CampaignStep(ctx context.Context, workspaceID, campaignID, token string, at time.Time) (queued bool, err error)
}

// Stepper runs the steps of campaigns.
type Stepper struct {
	Client  *ent.Client
	Engines Engines
	Queue   Queue
}

// errStale says the campaign changed under a step: it does nothing.
var errStale = errors.New("campaigns: step is stale")

// Step runs the step token of the campaign campaignID as of now: the body of a
// step task, in a context of the campaign's workspace. A step whose token is no
// longer the campaign's (paused, cancelled, or another step took over), or that
// loses a race with such a change, does nothing (nil).
func (s *Stepper) Step(ctx context.Context, campaignID, token string, now time.Time) error {
	err := s.step(ctx, campaignID, token, now)
	if errors.Is(err, errStale) {
		return nil
	}
	return err
}

func (s *Stepper) step(ctx context.Context, campaignID, token string, now time.Time) error {
	c, err := s.Client.Campaign.Get(ctx, campaignID)
	if ent.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if c.StepToken == "" || c.StepToken != token {
		return nil // paused, cancelled, or another step took over
	}
	if StatusOf(c) == StatusPending && !HasContent(c.Text, c.MediaURL) {
		// Nothing to send: held, paused with the reason, until an edit gives it
		// content and a resume (which checks it) starts it.
		return storage.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
			_, _, err := Move(ctx, tx, c, ActionHold, token, NoContentReason, now)
			return err
		})
	}
	if StatusOf(c) == StatusPending {
		var moved bool
		err := storage.WithTx(ctx, s.Client, func(tx *ent.Tx) (err error) {
			c, moved, err = Move(ctx, tx, c, ActionStart, token, "", now)
			return err
		})
		if err != nil || !moved {
			return err
		}
	}
	switch {
	case StatusOf(c) == StatusRunning && c.Cursor < c.LastSeq:
		return s.advance(ctx, c, token, now)
	case StatusOf(c) == StatusRunning || StatusOf(c) == StatusCompleteSent:
		return s.watch(ctx, c, token, now)
	}
	return nil
}

// pacingOf is the pace campaign c keeps.
func pacingOf(c *ent.Campaign) Pacing {
	return PacingOf(time.Duration(c.MinDelayMs)*time.Millisecond, time.Duration(c.MaxDelayMs)*time.Millisecond,
		c.DailyCap, c.QuietStart, c.QuietEnd, c.Timezone)
}

// advance makes the campaign's next message(s) through its engine, unless its
// pace (quiet hours, the engine's daily cap, the engine's send slot taken by
// another campaign) says to wait or its engine is missing or restricted.
func (s *Stepper) advance(ctx context.Context, c *ent.Campaign, token string, now time.Time) error {
	pace := pacingOf(c)
	if until := pace.QuietUntil(now); !until.IsZero() {
		return s.reschedule(ctx, c, token, until)
	}
	eng, err := s.sender(ctx, c, token, now)
	if eng == nil || err != nil {
		return err
	}
	if slot, err := s.slotAt(ctx, eng.ID()); err != nil {
		return err
	} else if slot.After(now) {
		return s.reschedule(ctx, c, token, slot)
	}
	size, err := s.pageSize(ctx, eng.ID(), pace, now)
	if err != nil {
		return err
	}
	if size <= 0 {
		return s.reschedule(ctx, c, token, now.Add(CapRetry))
	}
	pg, err := s.nextPage(ctx, c, size)
	if err != nil {
		return err
	}
	pg.engineID, pg.slot = eng.ID(), now.Add(pace.Delay())
	next, nextAt := switchboard.RandomToken(10), pg.slot
	if pg.done {
		nextAt = now.Add(WatchDelay(0))
	}
	queued, err := s.makePage(ctx, c, token, pg, next, nextAt, now)
	if errors.Is(err, errSlotTaken) {
		slot, err := s.slotAt(ctx, eng.ID())
		if err != nil {
			return err
		}
		if slot.Before(now) {
			slot = now
		}
		return s.reschedule(ctx, c, token, slot)
	} else if err != nil {
		return err
	}
	at := nextAt
	if pace.Batched() && !pg.done {
		at = time.Time{} // the next batch at once
	}
	s.enqueue(ctx, c, queued, next, at)
	return nil
}

// pageSize is how many messages the step makes through the engine engineID: one,
// or BatchSize when the campaign has no delay, and no more than the engine's
// daily cap leaves room for (zero or less when it leaves none).
func (s *Stepper) pageSize(ctx context.Context, engineID string, pace Pacing, now time.Time) (int, error) {
	size := 1
	if pace.Batched() {
		size = BatchSize
	}
	if pace.DailyCap > 0 {
		room, err := s.dailyRoom(ctx, engineID, pace.DailyCap, now)
		if err != nil {
			return 0, err
		}
		size = min(size, room)
	}
	return size, nil
}

// page is the contacts a step sends to: the next ones past the campaign's
// cursor, the cursor once they are made, and the names their texts may use.
type page struct {
	contacts []*ent.AudienceContact
	names    map[string]string // chat -> name (contactNames)
	cursor   int64
	done     bool // the last contact of the campaign is in the page
	engineID string
	slot     time.Time // the engine's next send slot once the page is made
}

// nextPage reads the next size contacts of the campaign.
func (s *Stepper) nextPage(ctx context.Context, c *ent.Campaign, size int) (*page, error) {
	contacts, err := s.Client.AudienceContact.Query().
		Where(audiencecontact.AudienceID(c.AudienceID), audiencecontact.SeqGT(c.Cursor), audiencecontact.SeqLTE(c.LastSeq)).
		Order(ent.Asc(audiencecontact.FieldSeq)).Limit(size).All(ctx)
	if err != nil {
		return nil, err
	}
	pg := &page{contacts: contacts, cursor: c.LastSeq}
	if len(contacts) == size {
		pg.cursor = contacts[len(contacts)-1].Seq
	}
	pg.done = pg.cursor >= c.LastSeq
	if pg.names, err = s.contactNames(ctx, c, contacts); err != nil {
		return nil, err
	}
	return pg, nil
}

// contactNames returns the names the store knows for the contacts' chats (their
// own name first, else the address book's), when the campaign's text uses them.
func (s *Stepper) contactNames(ctx context.Context, c *ent.Campaign, contacts []*ent.AudienceContact) (map[string]string, error) {
	out := map[string]string{}
	if !NeedsName(c.Text+"\n"+c.MediaCaption) || len(contacts) == 0 {
		return out, nil
	}
	jids := make([]string, len(contacts))
	for i, ac := range contacts {
		jids[i] = ac.To
	}
	known, err := inbox.Store{Client: s.Client}.ContactsOf(ctx, jids...)
	if err != nil {
		return nil, err
	}
	for _, k := range known {
		if k.PushName != "" {
			out[k.Jid] = k.PushName
		} else {
			out[k.Jid] = k.Name
		}
	}
	return out, nil
}

// makePage moves the campaign's cursor past the page under the step token next (due
// at nextAt), takes the engine's send slot and makes the page's messages through
// the engine, in one transaction; it returns the messages to dispatch (not those
// that failed at once, see Draft). errStale when the campaign is no longer
// running under token, errSlotTaken when another campaign took the slot.
func (s *Stepper) makePage(ctx context.Context, c *ent.Campaign, token string, pg *page, next string, nextAt, now time.Time) ([]*ent.Message, error) {
	var queued []*ent.Message
	err := storage.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		u := tx.Campaign.Update().Where(campaign.ID(c.ID), campaign.StepToken(token), StatusIs(StatusRunning)).
			SetCursor(pg.cursor).SetStepToken(next).SetNextStepAt(nextAt)
		if pg.done {
			u.SetSentThroughAt(now)
		}
		if n, err := u.Save(ctx); err != nil {
			return err
		} else if n == 0 {
			return errStale
		}
		if err := takeSlot(ctx, tx, pg.engineID, now, pg.slot); err != nil {
			return err
		}
		creates := make([]*ent.MessageCreate, len(pg.contacts))
		refuse := make(map[int]string)
		for i, ac := range pg.contacts {
			d, why := Draft(c, ac, pg.names[ac.To])
			creates[i] = messaging.NewMessage(tx.Client(), &d, message.OriginScheduled, switchboard.NewID("msg"), now).
				SetCampaignID(c.ID).SetAudienceContactID(ac.ID).SetEngineID(pg.engineID)
			if why != "" {
				refuse[i] = why
			}
		}
		ms, err := messaging.Queue(ctx, tx, creates...)
		if err != nil {
			return err
		}
		for i, m := range ms {
			if why, ok := refuse[i]; ok {
				if _, _, err := messaging.Move(ctx, tx, m, messaging.StatusFailed, now, messaging.WithReason(why)); err != nil {
					return err
				}
				continue
			}
			queued = append(queued, m)
		}
		return nil
	})
	return queued, err
}

// Draft is the message of campaign c for contact ac (whose chat's name is name),
// as the scheduled-message endpoint would store it; why is not empty when the
// message must fail at once instead of going out (a variable missing under
// onMissingVariable fail, a text longer than messaging.MaxText after
// substitution, an empty text).
func Draft(c *ent.Campaign, ac *ent.AudienceContact, name string) (d messaging.Draft, why string) {
	ct := Contact{To: ac.To, Variables: ac.Variables, Name: name}
	d = messaging.Draft{To: ac.To, Type: "text", Text: Render(c.Text, ct)}
	if c.MediaURL != "" {
		d.Type, d.MediaURL = "media", c.MediaURL
		if c.MediaCaption != "" {
			d.Text = Render(c.MediaCaption, ct)
		}
		if u, err := url.Parse(c.MediaURL); err == nil {
			d.MediaFilename = path.Base(u.Path)
			if d.MediaFilename == "/" || d.MediaFilename == "." {
				d.MediaFilename = ""
			}
		}
		d.MediaKind = media.DetectKind("", d.MediaFilename)
	}
	if d.Type == "text" {
		d.Typing = time.Duration(c.TypingMs) * time.Millisecond // shown inside the delay before the next message
	}
	if c.OnMissingVariable == "fail" {
		if missing := Missing(c.Text+"\n"+c.MediaCaption, ct); len(missing) > 0 {
			why = "the contact has no value for {" + missing[0] + "}"
		}
	}
	if n := utf8.RuneCountInString(d.Text); n > messaging.MaxText {
		why = fmt.Sprintf("the text is %d characters long after substitution (at most %d)", n, messaging.MaxText)
	} else if d.Type == "text" && d.Text == "" {
		why = "the text is empty after substitution"
	}
	return d, why
}

// enqueue queues the dispatch of the messages a step made and the next step,
// under the token next at at; what fails to queue is left to the reconciler.
func (s *Stepper) enqueue(ctx context.Context, c *ent.Campaign, queued []*ent.Message, next string, at time.Time) {
	for _, m := range queued {
		if _, err := s.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, time.Time{}); err != nil {
			slog.Warn("enqueue dispatch failed; the reconciler will retry", "message", m.ID, "err", err)
		}
	}
	s.queueStep(ctx, c, next, at)
}

// queueStep queues the campaign's step next at at; a failure is left to the
// reconciler.
func (s *Stepper) queueStep(ctx context.Context, c *ent.Campaign, next string, at time.Time) {
	if _, err := s.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, next, at); err != nil {
		slog.Warn("enqueue campaign step failed; the reconciler will retry", "campaign", c.ID, "err", err)
	}
}

// reschedule moves the campaign's next step to at under a new token.
func (s *Stepper) reschedule(ctx context.Context, c *ent.Campaign, token string, at time.Time) error {
	next := switchboard.RandomToken(10)
	n, err := s.Client.Campaign.Update().Where(campaign.ID(c.ID), campaign.StepToken(token), campaign.Status(c.Status)).
		SetStepToken(next).SetNextStepAt(at).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	s.queueStep(ctx, c, next, at)
	return nil
}
