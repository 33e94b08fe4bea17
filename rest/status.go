package rest

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Statuses, WhatsApp's stories (docs/status.md).

// statusBody is the body of POST /v1/status.
type statusBody struct {
	Type            string          `json:"type"`
	Text            *string         `json:"text"`
	BackgroundColor *string         `json:"backgroundColor"`
	Font            *int            `json:"font"`
	MediaURL        *string         `json:"mediaUrl"`
	MediaBase64     *string         `json:"mediaBase64"`
	Caption         *string         `json:"caption"`
	Audience        json.RawMessage `json:"audience"`
	EngineID        *string         `json:"engineId"`
}

// audienceOf reads an audience: "contacts", null or absent (the account's
// contacts), or a list of contacts.
func audienceOf(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "contacts" {
			return nil, nil
		}
	} else {
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			if list == nil {
				list = []string{}
			}
			return list, nil
		}
	}
	return nil, &switchboard.Error{Code: switchboard.EVALIDATION, Message: `audience must be "contacts" or a list of phone numbers (E.164) or contact ids.`,
		Details: []switchboard.Detail{{Path: "audience", Code: "invalid_type", Message: `Expected "contacts" or an array of strings`}}}
}

// postStatus serves POST /v1/status.
func (s *server) postStatus(w http.ResponseWriter, r *http.Request) error {
	var b statusBody
	if err := decodeJSONUpTo(w, r, &b, false, 2*maxJSONBody); err != nil {
		return err
	}
	if b.Type == "" {
		return required("type")
	}
	audience, err := audienceOf(b.Audience)
	if err != nil {
		return err
	}
	engineID := b.EngineID
	if engineID == nil {
		engineID = queryString(r, "engineId")
	}
	in := model.StatusInput{Type: b.Type, Text: b.Text, BackgroundColor: b.BackgroundColor, Font: b.Font,
		MediaURL: b.MediaURL, MediaBase64: b.MediaBase64, Caption: b.Caption, Audience: audience}
	st, err := s.mutation.PostStatus(r.Context(), engineID, in)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, st)
}

// listStatuses serves GET /v1/status.
func (s *server) listStatuses(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	fromMe, expired := queryBool(r, "fromMe", &p), queryBool(r, "includeExpired", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.Statuses(r.Context(), queryString(r, "engineId"), queryString(r, "contact"), fromMe, expired, limit, skip)
	if err != nil {
		return err
	}
	return writeList(w, page.Items, page.Limit, page.Skip, page.Total)
}

// getStatus serves GET /v1/status/{id}.
func (s *server) getStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.query.StoryStatus(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, st)
}

// deleteStatus serves DELETE /v1/status/{id}.
func (s *server) deleteStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.mutation.DeleteStatus(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, st)
}

// simulateStatus serves POST /v1/sandbox/statuses.
func (s *server) simulateStatus(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		From            string  `json:"from"`
		Type            string  `json:"type"`
		Text            *string `json:"text"`
		BackgroundColor *string `json:"backgroundColor"`
		Font            *int    `json:"font"`
		EngineID        *string `json:"engineId"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Type == "" {
		b.Type = "text"
	}
	st, err := s.mutation.SimulateStatus(r.Context(), model.SimulatedStatusInput{From: b.From, Type: b.Type, Text: b.Text,
		BackgroundColor: b.BackgroundColor, Font: b.Font, EngineID: b.EngineID})
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, st)
}
