package rest

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
)

// timeFormat is how timestamps are written.
const timeFormat = time.RFC3339

// newsletterRecord is the reference's newsletter shape; lists name it chatId,
// single answers newsletterId.
type newsletterRecord struct {
	ChatID       string    `json:"chatId,omitempty"`
	NewsletterID string    `json:"newsletterId,omitempty"`
	Name         string    `json:"name"`
	Description  string    `json:"description,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	Subscribers  int       `json:"subscribers"`
	Invite       string    `json:"invite,omitempty"`
	Verification string    `json:"verification,omitempty"`
	// Role is the account's role: owner, admin, subscriber or guest (not
	// following); empty while unknown.
	Role      string `json:"role,omitempty"`
	Following bool   `json:"following"`
	Muted     bool   `json:"muted"`
}

func newNewsletterRecord(c *ent.Chat, inList bool) newsletterRecord {
	rec := newsletterRecord{Name: c.Name, Description: c.Description, CreatedAt: c.CreatedAt.UTC(), Subscribers: c.Subscribers,
		Invite: c.Invite, Verification: c.Verification, Role: c.Role, Following: engine.Following(c.Role), Muted: c.Muted}
	if inList {
		rec.ChatID = c.Jid
	} else {
		rec.NewsletterID = c.Jid
	}
	return rec
}

// listNewsletters serves GET /v1/newsletters.
func (s *server) listNewsletters(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	_ = queryBool(r, "includeArchive", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.NewsletterList(r.Context(), queryString(r, "searchToken"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]newsletterRecord, len(page.Items))
	for i, c := range page.Items {
		out[i] = newNewsletterRecord(c, true)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getNewsletter serves GET /v1/newsletters/{id}.
func (s *server) getNewsletter(w http.ResponseWriter, r *http.Request) error {
	c, err := s.query.Newsletter(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newNewsletterRecord(c, false))
}

// createNewsletter serves POST /v1/newsletters.
func (s *server) createNewsletter(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Name == nil {
		return &switchboard.Error{Code: switchboard.EVALIDATION, Message: "name is required.",
			Details: []switchboard.Detail{{Path: "name", Code: "invalid_type", Message: "Required"}}}
	}
	c, err := s.mutation.CreateNewsletter(r.Context(), *b.Name, b.Description)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, newNewsletterRecord(c, false))
}

// getNewsletterInvite serves GET /v1/newsletters/invites/{code}.
func (s *server) getNewsletterInvite(w http.ResponseWriter, r *http.Request) error {
	p, err := s.query.NewsletterInvite(r.Context(), chi.URLParam(r, "code"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, p)
}

// followNewsletter serves POST /v1/newsletters/{id}/follow.
func (s *server) followNewsletter(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	c, err := s.mutation.FollowNewsletter(r.Context(), &id, nil, queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newNewsletterRecord(c, false))
}

// followNewsletterByInvite serves POST /v1/newsletters/follow {invite} or {id}.
func (s *server) followNewsletterByInvite(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		ID     *string `json:"id"`
		Invite *string `json:"invite"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.ID == nil && b.Invite == nil {
		return required("invite")
	}
	c, err := s.mutation.FollowNewsletter(r.Context(), b.ID, b.Invite, queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newNewsletterRecord(c, false))
}

// unfollowNewsletter serves DELETE /v1/newsletters/{id}/follow.
func (s *server) unfollowNewsletter(w http.ResponseWriter, r *http.Request) error {
	c, err := s.mutation.UnfollowNewsletter(r.Context(), chi.URLParam(r, "id"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newNewsletterRecord(c, false))
}

// muteNewsletter serves PUT /v1/newsletters/{id}/mute {muted}.
func (s *server) muteNewsletter(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Muted *bool `json:"muted"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Muted == nil {
		return required("muted")
	}
	c, err := s.mutation.MuteNewsletter(r.Context(), chi.URLParam(r, "id"), *b.Muted, queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newNewsletterRecord(c, false))
}
