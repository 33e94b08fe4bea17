package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"path"
	"time"
	"unicode/utf8"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/audiencecontact"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/ent/contact"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// A campaign advances one step at a time: one step task per campaign is queued at
// any moment, named by the campaign's step token. A step makes the next message(s)
// (one, or a batch of campaigns.BatchSize when the campaign has no delay) in the
// transaction that moves the campaign's cursor past their contacts and takes a new
// step token, then queues their dispatch and the next step. Pause, resume and
// cancel change the token (or clear it), so a step queued before them finds it
// changed and does nothing, and a step that raced them fails its compare-and-set
// and makes nothing. Once every message is made, the steps watch the messages
// until all are sent (complete_sent) and all delivered or failed
// (complete_delivered).

// TypeCampaignStep is the task of one step of a campaign.
const TypeCampaignStep = "campaign:step"

// QueueCampaigns holds campaign steps.
const QueueCampaigns = "campaigns"

// campaignPayload is the payload of a TypeCampaignStep task.
type campaignPayload struct {
	CampaignID  string `json:"campaignId"`
	WorkspaceID string `json:"workspaceId"`
	Token       string `json:"token"`
}

// CampaignStepTaskID is the asynq task id of a campaign's step under token.
func CampaignStepTaskID(campaignID, token string) string {
	return "campaign:" + campaignID + ":" + token
}

// CampaignStep queues the step of a campaign that its step token names, at at
// (now when zero), unless it is queued already.
func (q *Queue) CampaignStep(ctx context.Context, workspaceID, campaignID, token string, at time.Time) (bool, error) {
	payload, _ := json.Marshal(campaignPayload{CampaignID: campaignID, WorkspaceID: workspaceID, Token: token})
	return q.enqueueOnce(ctx, QueueCampaigns, CampaignStepTaskID(campaignID, token), asynq.NewTask(TypeCampaignStep, payload), at,
		asynq.MaxRetry(1<<10), asynq.Timeout(2*time.Minute))
}

// errStale says the campaign changed under a step: it does nothing.
var errStale = errors.New("jobs: campaign step is stale")

// CampaignStep runs one step of a campaign (see TypeCampaignStep).
func (h *Handlers) CampaignStep(ctx context.Context, t *asynq.Task) error {
	var p campaignPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	err := h.campaignStep(viewer.WorkspaceContext(ctx, p.WorkspaceID), p, time.Now())
	if errors.Is(err, errStale) {
		return nil
	}
	return err
}

// campaignStep runs the step p of its campaign as of now.
func (h *Handlers) campaignStep(ctx context.Context, p campaignPayload, now time.Time) error {
	c, err := h.Client.Campaign.Get(ctx, p.CampaignID)
	if ent.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if c.StepToken == "" || c.StepToken != p.Token {
		return nil // paused, cancelled, or another step took over
	}
	if c.Status == campaigns.StatusPending && !campaigns.HasContent(c.Text, c.MediaURL) {
		// Nothing to send: held, paused with the reason, until an edit gives it
		// content and a resume (which checks it) starts it.
		return storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
			_, _, err := campaigns.Move(ctx, tx, c, campaigns.ActionHold, p.Token, campaigns.NoContentReason, now)
			return err
		})
	}
	if c.Status == campaigns.StatusPending {
		var moved bool
		err := storage.WithTx(ctx, h.Client, func(tx *ent.Tx) (err error) {
			c, moved, err = campaigns.Move(ctx, tx, c, campaigns.ActionStart, p.Token, "", now)
			return err
		})
		if err != nil || !moved {
			return err
		}
	}
	switch {
	case c.Status == campaigns.StatusRunning && c.Cursor < c.LastSeq:
		return h.advance(ctx, c, p.Token, now)
	case c.Status == campaigns.StatusRunning || c.Status == campaigns.StatusCompleteSent:
		return h.watch(ctx, c, p.Token, now)
	}
	return nil
}

// advance makes the campaign's next message(s), unless its pace says to wait.
func (h *Handlers) advance(ctx context.Context, c *ent.Campaign, token string, now time.Time) error {
	pace := campaigns.PacingOf(time.Duration(c.MinDelayMs)*time.Millisecond, time.Duration(c.MaxDelayMs)*time.Millisecond,
		c.DailyCap, c.QuietStart, c.QuietEnd, c.Timezone)
	if until := pace.QuietUntil(now); !until.IsZero() {
		return h.reschedule(ctx, c, token, until)
	}
	eng, err := h.Engines.Pick(ctx, c.WorkspaceID)
	if errors.Is(err, engine.ErrNoEngine) {
		return h.reschedule(ctx, c, token, now.Add(campaigns.NoEngineRetry))
	} else if err != nil {
		return err
	}
	if r, ok := eng.(engine.Restrictor); ok {
		if why, restricted := r.Restriction(); restricted {
			return storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
				_, _, err := campaigns.Move(ctx, tx, c, campaigns.ActionPause, token, "the engine reports a restriction: "+why, now)
				return err
			})
		}
	}
	size := 1
	if pace.Batched() {
		size = campaigns.BatchSize
	}
	if pace.DailyCap > 0 {
		room, err := h.dailyRoom(ctx, c.WorkspaceID, pace.DailyCap, now)
		if err != nil {
			return err
		}
		if room <= 0 {
			return h.reschedule(ctx, c, token, now.Add(campaigns.CapRetry))
		}
		size = min(size, room)
	}
	contacts, err := h.Client.AudienceContact.Query().
		Where(audiencecontact.AudienceID(c.AudienceID), audiencecontact.SeqGT(c.Cursor), audiencecontact.SeqLTE(c.LastSeq)).
		Order(ent.Asc(audiencecontact.FieldSeq)).Limit(size).All(ctx)
	if err != nil {
		return err
	}
	cursor := c.LastSeq
	if len(contacts) == size {
		cursor = contacts[len(contacts)-1].Seq
	}
	names, err := h.contactNames(ctx, c, contacts)
	if err != nil {
		return err
	}
	next := switchboard.RandomToken(10)
	nextAt := now.Add(pace.Delay())
	done := cursor >= c.LastSeq
	if done {
		nextAt = now.Add(campaigns.WatchDelay(0))
	}
	var queued []*ent.Message
	err = storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		u := tx.Campaign.Update().Where(campaign.ID(c.ID), campaign.StepToken(token), campaign.Status(campaigns.StatusRunning)).
			SetCursor(cursor).SetStepToken(next).SetNextStepAt(nextAt)
		if done {
			u.SetSentThroughAt(now)
		}
		if n, err := u.Save(ctx); err != nil {
			return err
		} else if n == 0 {
			return errStale
		}
		creates := make([]*ent.MessageCreate, len(contacts))
		refuse := make(map[int]string)
		for i, ac := range contacts {
			var why string
			creates[i], why = campaignMessage(tx, c, ac, names[ac.To], now)
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
	if err != nil {
		return err
	}
	for _, m := range queued {
		if _, err := h.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, time.Time{}); err != nil {
			slog.Warn("enqueue dispatch failed; the reconciler will retry", "message", m.ID, "err", err)
		}
	}
	at := nextAt
	if pace.Batched() && !done {
		at = time.Time{}
	}
	if _, err := h.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, next, at); err != nil {
		slog.Warn("enqueue campaign step failed; the reconciler will retry", "campaign", c.ID, "err", err)
	}
	return nil
}

// campaignMessage builds the message of campaign c for contact ac, as the
// scheduled-message endpoint would store it; why is not empty when the message
// must fail at once instead of going out (a variable missing under
// onMissingVariable fail, a text too long after substitution).
func campaignMessage(tx *ent.Tx, c *ent.Campaign, ac *ent.AudienceContact, name string, now time.Time) (*ent.MessageCreate, string) {
	ct := campaigns.Contact{To: ac.To, Variables: ac.Variables, Name: name}
	typ, text := "text", campaigns.Render(c.Text, ct)
	var kind, filename, why string
	if c.MediaURL != "" {
		typ = "media"
		if c.MediaCaption != "" {
			text = campaigns.Render(c.MediaCaption, ct)
		}
		if u, err := url.Parse(c.MediaURL); err == nil {
			filename = path.Base(u.Path)
			if filename == "/" || filename == "." {
				filename = ""
			}
		}
		kind = media.DetectKind("", filename)
	}
	if c.OnMissingVariable == "fail" {
		if missing := campaigns.Missing(c.Text+"\n"+c.MediaCaption, ct); len(missing) > 0 {
			why = "the contact has no value for {" + missing[0] + "}"
		}
	}
	if n := utf8.RuneCountInString(text); n > 4096 {
		why = fmt.Sprintf("the text is %d characters long after substitution (at most 4096)", n)
	} else if typ == "text" && text == "" {
		why = "the text is empty after substitution"
	}
	create := tx.Message.Create().SetOrigin(message.OriginScheduled).SetTo(ac.To).SetType(typ).SetText(text).
		SetMediaURL(c.MediaURL).SetMediaKind(kind).SetMediaFilename(filename).
		SetWireType(engine.WireType(typ, kind)).SetCampaignID(c.ID).SetAudienceContactID(ac.ID).SetCreatedAt(now)
	return create, why
}

// contactNames returns the names the store knows for the contacts' chats (their
// own name first, else the address book's), when the campaign's text uses them.
func (h *Handlers) contactNames(ctx context.Context, c *ent.Campaign, contacts []*ent.AudienceContact) (map[string]string, error) {
	out := map[string]string{}
	if !campaigns.NeedsName(c.Text+"\n"+c.MediaCaption) || len(contacts) == 0 {
		return out, nil
	}
	jids := make([]string, len(contacts))
	for i, ac := range contacts {
		jids[i] = ac.To
	}
	known, err := h.Client.Contact.Query().Where(contact.JidIn(jids...)).All(ctx)
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

// dailyRoom is how many more campaign messages the workspace may make now: its cap
// per connected engine (at least one) in any 24 hours, less those made in the last
// 24 hours.
func (h *Handlers) dailyRoom(ctx context.Context, workspaceID string, perEngine int, now time.Time) (int, error) {
	engines := 1
	if conns, err := h.Engines.Connections(ctx, workspaceID); err == nil && len(conns) > 1 {
		engines = len(conns)
	}
	made, err := h.Client.Message.Query().Where(message.CampaignIDNotNil(), message.CreatedAtGT(now.Add(-24*time.Hour))).Count(ctx)
	if err != nil {
		return 0, err
	}
	limit := perEngine * engines
	if limit < 0 || perEngine > math.MaxInt/engines {
		limit = math.MaxInt
	}
	return limit - made, nil
}

// reschedule moves the campaign's next step to at under a new token.
func (h *Handlers) reschedule(ctx context.Context, c *ent.Campaign, token string, at time.Time) error {
	next := switchboard.RandomToken(10)
	n, err := h.Client.Campaign.Update().Where(campaign.ID(c.ID), campaign.StepToken(token), campaign.Status(c.Status)).
		SetStepToken(next).SetNextStepAt(at).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	if _, err := h.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, next, at); err != nil {
		slog.Warn("enqueue campaign step failed; the reconciler will retry", "campaign", c.ID, "err", err)
	}
	return nil
}

// watch counts the messages of a campaign that made them all: complete_sent once
// none waits in the queue, complete_delivered once all were delivered or failed;
// until then it looks again later (campaigns.WatchDelay), for up to
// campaigns.WatchFor.
func (h *Handlers) watch(ctx context.Context, c *ent.Campaign, token string, now time.Time) error {
	counts, err := campaigns.Count(ctx, h.Client.Message, c.ID)
	if err != nil {
		return err
	}
	n := counts[c.ID]
	action := ""
	switch {
	case campaigns.AllDelivered(n):
		action = campaigns.ActionDelivered
	case campaigns.AllSent(n) && c.Status == campaigns.StatusRunning:
		action = campaigns.ActionSent
	}
	since := time.Duration(0)
	if c.SentThroughAt != nil {
		since = now.Sub(*c.SentThroughAt)
	}
	next, nextAt := switchboard.RandomToken(10), now.Add(campaigns.WatchDelay(since))
	if action == "" && since > campaigns.WatchFor {
		next = "" // stop looking: it stays as it is
	}
	err = storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		if n.Made < c.TotalCount && action != "" {
			// Contacts removed from the audience before the campaign reached them.
			if err := tx.Campaign.UpdateOneID(c.ID).SetTotalCount(n.Made).Exec(ctx); err != nil {
				return err
			}
			c.TotalCount = n.Made
		}
		if action != "" {
			var moved bool
			if c, moved, err = campaigns.Move(ctx, tx, c, action, token, "", now); err != nil {
				return err
			} else if !moved {
				return errStale
			}
			if c.StepToken == "" {
				next = "" // complete_delivered: nothing left to watch
				return nil
			}
		}
		u := tx.Campaign.Update().Where(campaign.ID(c.ID), campaign.StepToken(token)).SetStepToken(next)
		if next == "" {
			u.ClearNextStepAt()
		} else {
			u.SetNextStepAt(nextAt)
		}
		if k, err := u.Save(ctx); err != nil {
			return err
		} else if k == 0 {
			return errStale
		}
		return nil
	})
	if err != nil || next == "" {
		return err
	}
	if _, err := h.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, next, nextAt); err != nil {
		slog.Warn("enqueue campaign step failed; the reconciler will retry", "campaign", c.ID, "err", err)
	}
	return nil
}

// ReconcileCampaigns queues again the step of every campaign that has one due
// within the next pass but whose task Redis does not hold, and returns how many it
// queued.
func (h *Handlers) ReconcileCampaigns(ctx context.Context, now time.Time, settle time.Duration) (int, error) {
	ctx = viewer.SystemContext(ctx)
	due, err := h.Client.Campaign.Query().
		Where(campaign.StepTokenNEQ(""), campaign.StepTokenNotNil(), campaign.NextStepAtLTE(now.Add(ReconcileEvery)),
			campaign.UpdatedAtLT(now.Add(-settle)),
			campaign.StatusIn(campaigns.StatusPending, campaigns.StatusRunning, campaigns.StatusCompleteSent)).
		All(ctx)
	if err != nil {
		return 0, err
	}
	queued := 0
	for _, c := range lost(ctx, h.Queue, QueueCampaigns, due, func(c *ent.Campaign) string { return CampaignStepTaskID(c.ID, c.StepToken) }) {
		added, err := h.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, c.StepToken, dueAt(c.NextStepAt, now))
		if err != nil {
			slog.Error("reconciler: enqueue", "campaign", c.ID, "err", err)
		} else if added {
			queued++
		}
	}
	return queued, nil
}
