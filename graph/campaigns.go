package graph

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/audiencecontact"
	"github.com/switchboardhq/switchboard/ent/campaign"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/workspace"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/view"
	"github.com/switchboardhq/switchboard/viewer"
)

// Bounds of campaigns, from the reference contract (pacing is Switchboard's own).
const (
	maxCampaignName = 120
	maxCaption      = 1024
	missingExamples = 10
	onMissingFail   = "fail"
	onMissingSkip   = "skip"
	defaultTimezone = "UTC"
	maxDelaySecs    = 3600
)

var clockRE = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

// campaignSpec is a validated createCampaign input.
type campaignSpec struct {
	name, audienceID, text, mediaURL, caption, onMissing string
	engineID                                             string // "" for the engine each step picks
	pacing                                               campaigns.Pacing
	quietStart, quietEnd, timezone                       string
	typing                                               time.Duration // before each text message
}

// checkCampaignInput validates a createCampaign input; tz is the account's
// timezone (the default of quiet hours).
func (r *Resolver) checkCampaignInput(ctx context.Context, in model.CampaignInput, tz string) (*campaignSpec, error) {
	var p switchboard.Problems
	s := &campaignSpec{onMissing: onMissingFail}
	s.name = checkName(&p, in.Name)
	if in.AudienceID == nil || strings.TrimSpace(*in.AudienceID) == "" {
		p.Add("audienceId", "invalid_type", "Required")
	} else {
		s.audienceID = strings.TrimSpace(*in.AudienceID)
	}
	r.checkCampaignContent(ctx, &p, s, in.Text, in.MediaURL, in.MediaCaption, in.OnMissingVariable)
	s.pacing = campaigns.Pacing{MinDelay: campaigns.DefaultMinDelay, MaxDelay: campaigns.DefaultMaxDelay, DailyCap: campaigns.DefaultDailyCap}
	s.timezone = tz
	if pc := in.Pacing; pc != nil {
		seconds := func(path string, v *float64, dst *time.Duration) {
			if v == nil {
				return
			}
			if math.IsNaN(*v) || *v < 0 || *v > maxDelaySecs {
				p.Add(path, "too_big", "%s must be between 0 and %d seconds", path, maxDelaySecs)
				return
			}
			*dst = time.Duration(*v * float64(time.Second)).Round(time.Millisecond)
		}
		seconds("pacing.minDelaySeconds", pc.MinDelaySeconds, &s.pacing.MinDelay)
		seconds("pacing.maxDelaySeconds", pc.MaxDelaySeconds, &s.pacing.MaxDelay)
		if pc.MinDelaySeconds != nil && pc.MaxDelaySeconds == nil && s.pacing.MinDelay > s.pacing.MaxDelay {
			s.pacing.MaxDelay = s.pacing.MinDelay
		}
		if pc.MaxDelaySeconds != nil && pc.MinDelaySeconds == nil && s.pacing.MaxDelay < s.pacing.MinDelay {
			s.pacing.MinDelay = s.pacing.MaxDelay
		}
		if s.pacing.MinDelay > s.pacing.MaxDelay {
			p.Add("pacing.maxDelaySeconds", "too_small", "pacing.maxDelaySeconds must be at least pacing.minDelaySeconds")
		}
		s.typing = checkCampaignTyping(&p, pc.TypingSeconds, s.pacing)
		if pc.DailyCap != nil {
			if *pc.DailyCap < 1 || *pc.DailyCap > campaigns.MaxDailyCap {
				p.Add("pacing.dailyCap", "too_big", "pacing.dailyCap must be between 1 and %d", campaigns.MaxDailyCap)
			}
			s.pacing.DailyCap = *pc.DailyCap
		}
		if q := pc.QuietHours; q != nil {
			if !clockRE.MatchString(q.Start) {
				p.Add("pacing.quietHours.start", "invalid_string", "quietHours.start must be HH:MM (00:00-23:59)")
			}
			if !clockRE.MatchString(q.End) {
				p.Add("pacing.quietHours.end", "invalid_string", "quietHours.end must be HH:MM (00:00-23:59)")
			}
			s.quietStart, s.quietEnd = q.Start, q.End
			if q.Timezone != nil {
				s.timezone = *q.Timezone
				if _, err := time.LoadLocation(*q.Timezone); err != nil || *q.Timezone == "" || strings.EqualFold(*q.Timezone, "local") {
					p.Add("pacing.quietHours.timezone", "invalid_string", "quietHours.timezone must be an IANA time zone name such as Europe/Paris")
				}
			}
		}
	}
	return s, p.Err(switchboard.EVALIDATION)
}

// checkCampaignTyping checks a campaign's typingSeconds: 0-25 (as a direct
// send's), and no longer than the campaign's shortest delay between messages,
// since the typing is shown inside that delay (the campaign's pace is unchanged).
func checkCampaignTyping(p *switchboard.Problems, secs *float64, pace campaigns.Pacing) time.Duration {
	if secs == nil {
		return 0
	}
	typing := time.Duration(*secs * float64(time.Second)).Round(time.Millisecond)
	switch {
	case math.IsNaN(*secs) || *secs < 0 || *secs > maxTypingSecs:
		p.Add("pacing.typingSeconds", "too_big", "pacing.typingSeconds must be between 0 and %d", maxTypingSecs)
	case typing > pace.MinDelay:
		p.Add("pacing.typingSeconds", "too_big", "pacing.typingSeconds must be at most pacing.minDelaySeconds (%g): the typing is shown inside the delay between messages",
			pace.MinDelay.Seconds())
	}
	return typing
}

// checkCampaignContent checks the content fields a create or an edit gives and
// sets them on s (which holds the campaign's content so far). Neither text nor
// mediaUrl is required: a campaign without content is held when it would start
// (docs/campaigns.md).
func (r *Resolver) checkCampaignContent(ctx context.Context, p *switchboard.Problems, s *campaignSpec, text, mediaURL, caption, onMissing *string) {
	if text != nil {
		textLen(p, "text", text, 1, maxText)
		s.text = *text
	}
	if mediaURL != nil {
		u := strings.TrimSpace(*mediaURL)
		if len(u) > maxMediaURL {
			p.Add("mediaUrl", "too_big", "mediaUrl must be at most %d characters", maxMediaURL)
		} else if err := r.mediaURLRule(ctx, false)(u); err != nil {
			p.Add("mediaUrl", "invalid_string", "mediaUrl must be a public https URL: it %v", err)
		}
		s.mediaURL = u
	}
	if caption != nil {
		textLen(p, "mediaCaption", caption, 1, maxCaption)
		if s.mediaURL == "" {
			p.Add("mediaCaption", "invalid_type", "mediaCaption requires mediaUrl")
		}
		s.caption = *caption
	}
	if onMissing != nil {
		if m := *onMissing; m != onMissingFail && m != onMissingSkip {
			p.Add("onMissingVariable", "invalid_enum_value", "onMissingVariable must be fail or skip")
		} else {
			s.onMissing = m
		}
	}
}

// noContent is the refusal of a move that would send a campaign with neither
// text nor mediaUrl.
func noContent(id string) error {
	return &switchboard.Error{Code: switchboard.EVALIDATION,
		Message: "The campaign has nothing to send: give it text or mediaUrl with PATCH /v1/campaigns/" + id + " first.",
		Details: []switchboard.Detail{{Path: "text", Code: "invalid_type", Message: "Required: text (1-4096 characters) or mediaUrl"}}}
}

// checkMissing refuses, under onMissingVariable fail, texts that use a custom
// variable some contact of the campaign's audience (up to last) lacks.
func checkMissing(ctx context.Context, tx *ent.Tx, audienceID string, last int64, onMissing string, texts ...string) error {
	if onMissing != onMissingFail {
		return nil
	}
	examples, bad, err := missingVariables(ctx, tx, audienceID, last, texts...)
	if err != nil {
		return err
	}
	if bad > 0 {
		return &switchboard.Error{Code: switchboard.EINVALID,
			Message: fmt.Sprintf("%d contact(s) lack a variable the text uses; give them the variable, or set onMissingVariable to skip.", bad),
			Details: examples}
	}
	return nil
}

// updateCampaign is the use case behind PATCH /v1/campaigns/{id}: the name and
// content of a campaign that is pending or paused (the messages it made already
// keep theirs), checked as a create checks them.
func (r *Resolver) updateCampaign(ctx context.Context, id string, in model.CampaignPatch) (*ent.Campaign, error) {
	c, err := r.getCampaign(ctx, id)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	s := &campaignSpec{name: c.Name, text: c.Text, mediaURL: c.MediaURL, caption: c.MediaCaption, onMissing: c.OnMissingVariable}
	if in.Name != nil {
		s.name = checkName(&p, in.Name)
	}
	r.checkCampaignContent(ctx, &p, s, in.Text, in.MediaURL, in.MediaCaption, in.OnMissingVariable)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	if s.engineID, err = r.campaignEngine(ctx, in.EngineID, c.EngineID); err != nil {
		return nil, err
	}
	editable := []campaigns.Status{campaigns.StatusPending, campaigns.StatusPaused}
	if !slices.Contains(editable, campaigns.StatusOf(c)) {
		return nil, &switchboard.Error{Code: switchboard.ECONFLICT,
			Message: fmt.Sprintf("The campaign is %s; only a pending or paused campaign can be edited.", c.Status),
			Details: []switchboard.Detail{{Path: "status", Code: "invalid_state", Message: "campaign is " + c.Status}}}
	}
	var next *ent.Campaign
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		if err := checkMissing(ctx, tx, c.AudienceID, c.LastSeq, s.onMissing, s.text, s.caption); err != nil {
			return err
		}
		next, err = tx.Campaign.UpdateOneID(c.ID).Where(campaigns.StatusIn(editable...)).SetName(s.name).
			SetText(s.text).SetMediaURL(s.mediaURL).SetMediaCaption(s.caption).SetOnMissingVariable(s.onMissing).
			SetEngineID(s.engineID).Save(ctx)
		if ent.IsNotFound(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "The campaign started or ended while being edited; read it again.")
		}
		return err
	})
	return next, err
}

// campaignEngine checks the engineId a create or an edit gives: the id of an
// engine of the viewer's workspace (404 naming engineId otherwise), connected or
// not (a step waits for it); "" for the engine each step picks; cur when not
// given.
func (r *Resolver) campaignEngine(ctx context.Context, id *string, cur string) (string, error) {
	if id == nil {
		return cur, nil
	}
	engineID := strings.TrimSpace(*id)
	if engineID == "" {
		return "", nil
	}
	if ok, err := r.Client.Engine.Query().Where(entengine.ID(engineID)).Exist(ctx); err != nil {
		return "", err
	} else if !ok {
		return "", notFound("engineId", "No engine with id %s (engineId).", quote(engineID))
	}
	return engineID, nil
}

// accountTimezone is the workspace's timezone, UTC when unset or unknown.
func (r *Resolver) accountTimezone(ctx context.Context) string {
	w, err := r.Client.Workspace.Query().Where(workspace.ID(viewerWorkspace(ctx))).Only(viewer.SystemContext(ctx))
	if err != nil || w.Timezone == nil || *w.Timezone == "" {
		return defaultTimezone
	}
	if _, err := time.LoadLocation(*w.Timezone); err != nil {
		return defaultTimezone
	}
	return *w.Timezone
}

// missingVariables walks the contacts of an audience up to seq last and returns
// the first few that lack a variable the texts use (built-ins never lack), and how
// many do.
func missingVariables(ctx context.Context, tx *ent.Tx, audienceID string, last int64, texts ...string) ([]switchboard.Detail, int, error) {
	var custom []string
	for _, t := range texts {
		for _, k := range campaigns.Tokens(t) {
			if !slices.Contains(campaigns.Builtins, k) && !slices.Contains(custom, k) {
				custom = append(custom, k)
			}
		}
	}
	if len(custom) == 0 {
		return nil, 0, nil
	}
	var examples []switchboard.Detail
	bad := 0
	after := int64(0)
	for {
		page, err := tx.AudienceContact.Query().
			Where(audiencecontact.AudienceID(audienceID), audiencecontact.SeqGT(after), audiencecontact.SeqLTE(last)).
			Order(ent.Asc(audiencecontact.FieldSeq)).Limit(1000).All(ctx)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range page {
			contact := campaigns.Contact{To: c.To, Variables: c.Variables}
			var missing []string
			for _, k := range custom {
				if _, ok := contact.Lookup(k); !ok {
					missing = append(missing, "{"+k+"}")
				}
			}
			if len(missing) == 0 {
				continue
			}
			bad++
			if len(examples) < missingExamples {
				examples = append(examples, switchboard.Detail{Path: "contacts." + c.ID, Code: "missing_variable",
					Message: fmt.Sprintf("contact %s (%s) has no value for %s", campaigns.Phone(c.To), c.ID, strings.Join(missing, ", "))})
			}
		}
		if len(page) < 1000 {
			return examples, bad, nil
		}
		after = page[len(page)-1].Seq
	}
}

// createCampaign is the use case behind createCampaign: the campaign is stored
// pending with its first step due now, and the step is queued.
func (r *Resolver) createCampaign(ctx context.Context, in model.CampaignInput) (*ent.Campaign, error) {
	s, err := r.checkCampaignInput(ctx, in, r.accountTimezone(ctx))
	if err != nil {
		return nil, err
	}
	a, err := getAudience(ctx, r.Client.Audience, s.audienceID)
	if err != nil {
		return nil, err
	}
	if s.engineID, err = r.campaignEngine(ctx, in.EngineID, ""); err != nil {
		return nil, err
	}
	now := r.now()
	var c *ent.Campaign
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		// The audience as it is now: contacts added later are not in the campaign.
		a, err := tx.Audience.Get(ctx, a.ID)
		if err != nil {
			return err
		}
		total, err := tx.AudienceContact.Query().Where(audiencecontact.AudienceID(a.ID), audiencecontact.SeqLTE(a.ContactSeq)).Count(ctx)
		if err != nil {
			return err
		}
		if total == 0 {
			return &switchboard.Error{Code: switchboard.EVALIDATION, Message: "The audience has no contacts; add some first.",
				Details: []switchboard.Detail{{Path: "audienceId", Code: "empty_audience", Message: "audience " + a.ID + " has no contacts"}}}
		}
		if err := checkMissing(ctx, tx, a.ID, a.ContactSeq, s.onMissing, s.text, s.caption); err != nil {
			return err
		}
		create := tx.Campaign.Create().SetName(s.name).SetAudienceID(a.ID).SetStatus(string(campaigns.StatusPending)).
			SetText(s.text).SetMediaURL(s.mediaURL).SetMediaCaption(s.caption).SetOnMissingVariable(s.onMissing).
			SetMinDelayMs(int(s.pacing.MinDelay / time.Millisecond)).SetMaxDelayMs(int(s.pacing.MaxDelay / time.Millisecond)).
			SetDailyCap(s.pacing.DailyCap).SetTypingMs(int(s.typing / time.Millisecond)).SetQuietStart(s.quietStart).SetQuietEnd(s.quietEnd).SetTimezone(s.timezone).
			SetEngineID(s.engineID).SetLastSeq(a.ContactSeq).SetTotalCount(total).SetStepToken(switchboard.RandomToken(10)).
			SetNextStepAt(now).SetCreatedAt(now)
		c, err = create.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := r.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, c.StepToken, time.Time{}); err != nil {
		slog.Warn("enqueue campaign step failed; the reconciler will retry", "campaign", c.ID, "err", err)
	}
	return c, nil
}

// getCampaign returns a campaign of the viewer's workspace or ENOTFOUND.
func (r *Resolver) getCampaign(ctx context.Context, id string) (*ent.Campaign, error) {
	c, err := r.Client.Campaign.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No campaign with id %s.", quote(id))
	}
	return c, err
}

// actionRule is the status an action needs, for its conflict message.
var actionRule = map[string]string{
	campaigns.ActionPause:  "only a running campaign can be paused",
	campaigns.ActionResume: "only a paused campaign can be resumed",
	campaigns.ActionCancel: "a finished campaign cannot be cancelled",
}

// moveCampaign is the use case behind pause, resume and cancel: one move of the
// state machine, ECONFLICT when the campaign's status does not allow it.
func (r *Resolver) moveCampaign(ctx context.Context, id, action string) (*ent.Campaign, error) {
	for attempt := 0; attempt < 5; attempt++ {
		c, err := r.getCampaign(ctx, id)
		if err != nil {
			return nil, err
		}
		if action == campaigns.ActionPause && c.PauseEngineID != "" {
			if next, kept, err := r.keepPaused(ctx, c); err != nil || kept {
				return next, err
			}
			continue // resumed meanwhile: pause it as a running one
		}
		if _, ok := campaigns.Next(campaigns.StatusOf(c), action); !ok {
			return nil, &switchboard.Error{Code: switchboard.ECONFLICT,
				Message: fmt.Sprintf("The campaign is %s; %s.", c.Status, actionRule[action]),
				Details: []switchboard.Detail{{Path: "status", Code: "invalid_state", Message: "campaign is " + c.Status}}}
		}
		if action == campaigns.ActionResume && !campaigns.HasContent(c.Text, c.MediaURL) {
			return nil, noContent(c.ID)
		}
		reason := ""
		if action == campaigns.ActionPause {
			reason = "paused through the API"
		}
		var next *ent.Campaign
		var moved bool
		err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) (err error) {
			next, moved, err = campaigns.Move(ctx, tx, c, action, "", reason, r.now())
			return err
		})
		if err != nil {
			return nil, err
		}
		if !moved {
			continue // the step moved it meanwhile (started, completed): look again
		}
		if action == campaigns.ActionResume {
			if _, err := r.Queue.CampaignStep(ctx, next.WorkspaceID, next.ID, next.StepToken, time.Time{}); err != nil {
				slog.Warn("enqueue campaign step failed; the reconciler will retry", "campaign", next.ID, "err", err)
			}
		}
		return next, nil
	}
	return nil, switchboard.Errorf(switchboard.ECONFLICT, "The campaign kept changing; retry.")
}

// keepPaused is pause on a campaign a restriction paused: the pause becomes
// the user's, and the end of the restriction no longer resumes it.
func (r *Resolver) keepPaused(ctx context.Context, c *ent.Campaign) (next *ent.Campaign, kept bool, err error) {
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) (err error) {
		next, kept, err = campaigns.KeepPaused(ctx, tx, c, "paused through the API", r.now())
		return err
	})
	return next, kept, err
}

// campaignList is the use case behind campaignList; engineID keeps the campaigns
// pinned to that engine.
func (r *Resolver) campaignList(ctx context.Context, order, status, engineID *string, limit, skip *int) (*model.CampaignPage, error) {
	l, err := checkListing(limit, skip, order)
	if err != nil {
		return nil, err
	}
	q := r.Client.Campaign.Query()
	if status != nil {
		if !slices.Contains(campaigns.Statuses, campaigns.Status(*status)) {
			return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "Unknown status " + quote(*status) + ".",
				Details: []switchboard.Detail{{Path: "status", Code: "invalid_enum_value", Message: "status must be one of " + joinValues(campaigns.Statuses)}}}
		}
		q.Where(campaign.Status(*status))
	}
	if engineID != nil {
		q.Where(campaign.EngineID(*engineID))
	}
	items, total, err := find(ctx, q.Clone().Count, q.Order(l.order).Limit(l.limit).Offset(l.skip).All)
	if err != nil {
		return nil, err
	}
	return &model.CampaignPage{Items: items, Limit: l.limit, Skip: l.skip, Total: total}, nil
}

// CampaignCounts reads the counters of campaigns from their messages, in one query.
func (r *Resolver) CampaignCounts(ctx context.Context, cs ...*ent.Campaign) (map[string]view.Counts, error) {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return campaigns.Count(ctx, r.Client.Message, ids...)
}

// progress renders a campaign's counters for GraphQL.
func progress(c *ent.Campaign, n view.Counts) *model.CampaignProgress {
	p := &model.CampaignProgress{Total: c.TotalCount, Made: n.Made, Queued: n.Queued, Sent: n.Sent,
		Delivered: n.Delivered, Read: n.Read, Failed: n.Failed}
	if !campaigns.Finished(campaigns.StatusOf(c)) {
		p.Remaining = max(c.TotalCount-n.Made, 0)
	}
	if c.TotalCount > 0 {
		p.Percent = math.Round(float64(n.Delivered+n.Failed)*10000/float64(c.TotalCount)) / 100
	}
	return p
}

// pacing renders a campaign's pace for GraphQL.
func pacing(c *ent.Campaign) *model.CampaignPacing {
	p := &model.CampaignPacing{MinDelaySeconds: float64(c.MinDelayMs) / 1000, MaxDelaySeconds: float64(c.MaxDelayMs) / 1000,
		DailyCap: c.DailyCap, TypingSeconds: float64(c.TypingMs) / 1000}
	if c.QuietStart != "" && c.QuietEnd != "" {
		p.QuietHours = &model.QuietHours{Start: c.QuietStart, End: c.QuietEnd, Timezone: c.Timezone}
	}
	return p
}

// campaignAction is the resolver of pause, resume and cancel.
func (r *Resolver) campaignAction(ctx context.Context, id, action string) (*ent.Campaign, error) {
	return r.moveCampaign(ctx, id, action)
}
