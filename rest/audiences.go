package rest

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
)

// audienceRecord is the spec's Audience.
type audienceRecord struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	ContactCount int       `json:"contactCount"`
	CreatedAt    time.Time `json:"createdAt"`
}

func (s *server) newAudienceRecord(ctx context.Context, a *ent.Audience) (audienceRecord, error) {
	n, err := s.audience.ContactCount(ctx, a)
	return audienceRecord{ID: a.ID, Name: a.Name, ContactCount: n, CreatedAt: a.CreatedAt.UTC()}, err
}

// audienceContactRecord is an audience contact as the reference shows it: a contact chat's
// recipient in its phone form (+<digits>), a group or newsletter id as it is.
type audienceContactRecord struct {
	ID        string            `json:"id"`
	To        string            `json:"to"`
	Variables map[string]string `json:"variables"`
	AddedAt   time.Time         `json:"addedAt"`
}

// contactBody is one contact of a body.
type contactBody struct {
	To        *string           `json:"to"`
	Variables map[string]string `json:"variables"`
}

func (b contactBody) input() *model.AudienceContactInput {
	return &model.AudienceContactInput{To: b.To, Variables: variableInputs(b.Variables)}
}

// variableInputs turns a variables object into the core's list, in key order.
func variableInputs(vars map[string]string) []*model.AudienceVariableInput {
	if vars == nil {
		return nil
	}
	out := []*model.AudienceVariableInput{}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, &model.AudienceVariableInput{Key: k, Value: vars[k]})
	}
	return out
}

func contactInputs(in []contactBody) []*model.AudienceContactInput {
	if in == nil {
		return nil
	}
	out := make([]*model.AudienceContactInput, len(in))
	for i, c := range in {
		out[i] = c.input()
	}
	return out
}

// audienceBody is the body of POST /v1/audiences and PATCH /v1/audiences/{id}
// (name only there).
type audienceBody struct {
	Name     *string       `json:"name"`
	Contacts []contactBody `json:"contacts"`
}

func (s *server) writeAudience(w http.ResponseWriter, r *http.Request, a *ent.Audience) error {
	rec, err := s.newAudienceRecord(r.Context(), a)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, rec)
}

// createAudience serves POST /v1/audiences (spec endpoint 14).
func (s *server) createAudience(w http.ResponseWriter, r *http.Request) error {
	var b audienceBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	a, err := s.mutation.CreateAudience(r.Context(), model.AudienceInput{Name: b.Name, Contacts: contactInputs(b.Contacts)})
	if err != nil {
		return err
	}
	return s.writeAudience(w, r, a)
}

// listAudiences serves GET /v1/audiences.
func (s *server) listAudiences(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.AudienceList(r.Context(), queryString(r, "order"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]audienceRecord, len(page.Items))
	for i, a := range page.Items {
		if out[i], err = s.newAudienceRecord(r.Context(), a); err != nil {
			return err
		}
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getAudience serves GET /v1/audiences/{id}.
func (s *server) getAudience(w http.ResponseWriter, r *http.Request) error {
	a, err := s.query.Audience(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return s.writeAudience(w, r, a)
}

// updateAudience serves PATCH /v1/audiences/{id}.
func (s *server) updateAudience(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Name *string `json:"name"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	a, err := s.mutation.UpdateAudience(r.Context(), chi.URLParam(r, "id"), model.AudiencePatch{Name: b.Name})
	if err != nil {
		return err
	}
	return s.writeAudience(w, r, a)
}

// deleteAudience serves DELETE /v1/audiences/{id}.
func (s *server) deleteAudience(w http.ResponseWriter, r *http.Request) error {
	p, err := s.mutation.DeleteAudience(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, map[string]any{"id": p.ID, "deleted": true})
}

// addAudienceContacts serves POST /v1/audiences/{id}/contacts (spec endpoint 15):
// how many were added and skipped, and the audience's count after.
func (s *server) addAudienceContacts(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Contacts []contactBody `json:"contacts"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Contacts == nil {
		return &switchboard.Error{Code: switchboard.EVALIDATION, Message: "contacts is required (1-1000 contacts).",
			Details: []switchboard.Detail{{Path: "contacts", Code: "invalid_type", Message: "Required"}}}
	}
	p, err := s.mutation.AddAudienceContacts(r.Context(), chi.URLParam(r, "id"), contactInputs(b.Contacts))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, map[string]int{"added": p.Added, "skipped": p.Skipped, "contactCount": p.ContactCount})
}

// updateAudienceContact serves PATCH /v1/audiences/{id}/contacts/{contactId}.
func (s *server) updateAudienceContact(w http.ResponseWriter, r *http.Request) error {
	var b contactBody
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	c, err := s.mutation.UpdateAudienceContact(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "contactId"),
		model.AudienceContactPatch{To: b.To, Variables: variableInputs(b.Variables)})
	if err != nil {
		return err
	}
	vars := c.Variables
	if vars == nil {
		vars = map[string]string{}
	}
	return writeData(w, http.StatusOK, audienceContactRecord{ID: c.ID, To: campaigns.Phone(c.To), Variables: vars, AddedAt: c.CreatedAt.UTC()})
}

// removeAudienceContact serves DELETE /v1/audiences/{id}/contacts/{contactId}.
func (s *server) removeAudienceContact(w http.ResponseWriter, r *http.Request) error {
	p, err := s.mutation.RemoveAudienceContact(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "contactId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, map[string]string{"id": p.ID})
}
