package rest

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/view"
)

// campaignBody is the body of POST /v1/campaigns: the reference's fields, and
// pacing (Switchboard's own; docs/campaigns.md).
type campaignBody struct {
	Name              *string `json:"name"`
	AudienceID        *string `json:"audienceId"`
	Text              *string `json:"text"`
	MediaURL          *string `json:"mediaUrl"`
	MediaCaption      *string `json:"mediaCaption"`
	OnMissingVariable *string `json:"onMissingVariable"`
	EngineID          *string `json:"engineId"`
	Pacing            *struct {
		MinDelaySeconds *float64 `json:"minDelaySeconds"`
		MaxDelaySeconds *float64 `json:"maxDelaySeconds"`
		DailyCap        *int     `json:"dailyCap"`
		TypingSeconds   *float64 `json:"typingSeconds"`
		QuietHours      *struct {
			Start    *string `json:"start"`
			End      *string `json:"end"`
			Timezone *string `json:"timezone"`
		} `json:"quietHours"`
	} `json:"pacing"`
}

func (b campaignBody) input() model.CampaignInput {
	in := model.CampaignInput{Name: b.Name, AudienceID: b.AudienceID, Text: b.Text, MediaURL: b.MediaURL,
		MediaCaption: b.MediaCaption, OnMissingVariable: b.OnMissingVariable, EngineID: b.EngineID}
	if p := b.Pacing; p != nil {
		in.Pacing = &model.CampaignPacingInput{MinDelaySeconds: p.MinDelaySeconds, MaxDelaySeconds: p.MaxDelaySeconds,
			DailyCap: p.DailyCap, TypingSeconds: p.TypingSeconds}
		if q := p.QuietHours; q != nil {
			in.Pacing.QuietHours = &model.QuietHoursInput{Timezone: q.Timezone}
			if q.Start != nil {
				in.Pacing.QuietHours.Start = *q.Start
			}
			if q.End != nil {
				in.Pacing.QuietHours.End = *q.End
			}
		}
	}
	return in
}

// campaignRecords renders campaigns with their counters, read in one query.
func (s *server) campaignRecords(ctx context.Context, cs ...*ent.Campaign) ([]view.Campaign, error) {
	counts, err := s.core.CampaignCounts(ctx, cs...)
	if err != nil {
		return nil, err
	}
	out := make([]view.Campaign, len(cs))
	for i, c := range cs {
		out[i] = campaigns.View(c, counts[c.ID])
	}
	return out, nil
}

func (s *server) writeCampaign(w http.ResponseWriter, r *http.Request, c *ent.Campaign) error {
	recs, err := s.campaignRecords(r.Context(), c)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, recs[0])
}

// createCampaign serves POST /v1/campaigns (spec endpoint 16).
func (s *server) createCampaign(w http.ResponseWriter, r *http.Request) error {
	var b campaignBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	c, err := s.mutation.CreateCampaign(r.Context(), b.input())
	if err != nil {
		return err
	}
	return s.writeCampaign(w, r, c)
}

// campaignPatch is the body of PATCH /v1/campaigns/{id} (a Switchboard addition:
// how a campaign created without content gets some).
type campaignPatch struct {
	Name              *string `json:"name"`
	Text              *string `json:"text"`
	MediaURL          *string `json:"mediaUrl"`
	MediaCaption      *string `json:"mediaCaption"`
	OnMissingVariable *string `json:"onMissingVariable"`
	EngineID          *string `json:"engineId"`
}

// updateCampaign serves PATCH /v1/campaigns/{id}.
func (s *server) updateCampaign(w http.ResponseWriter, r *http.Request) error {
	var b campaignPatch
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	c, err := s.mutation.UpdateCampaign(r.Context(), chi.URLParam(r, "id"), model.CampaignPatch{Name: b.Name, Text: b.Text,
		MediaURL: b.MediaURL, MediaCaption: b.MediaCaption, OnMissingVariable: b.OnMissingVariable, EngineID: b.EngineID})
	if err != nil {
		return err
	}
	return s.writeCampaign(w, r, c)
}

// listCampaigns serves GET /v1/campaigns.
func (s *server) listCampaigns(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.CampaignList(r.Context(), queryString(r, "order"), queryString(r, "status"), queryString(r, "engineId"), limit, skip)
	if err != nil {
		return err
	}
	recs, err := s.campaignRecords(r.Context(), page.Items...)
	if err != nil {
		return err
	}
	return writeList(w, recs, page.Limit, page.Skip, page.Total)
}

// getCampaign serves GET /v1/campaigns/{id}.
func (s *server) getCampaign(w http.ResponseWriter, r *http.Request) error {
	c, err := s.query.Campaign(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return s.writeCampaign(w, r, c)
}

// campaignAction serves POST /v1/campaigns/{id}/pause, resume and cancel.
func (s *server) campaignAction(do func(ctx context.Context, id string) (*ent.Campaign, error)) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		c, err := do(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			return err
		}
		return s.writeCampaign(w, r, c)
	})
}
