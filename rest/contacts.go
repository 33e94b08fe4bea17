package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
)

// contactRecord is the reference's contact shape.
type contactRecord struct {
	ChatID     string `json:"chatId"`
	Name       string `json:"name,omitempty"`
	IsBusiness bool   `json:"isBusiness"`
}

// groupItem is the spec's group list item.
type groupItem struct {
	ID               string  `json:"id"`
	Name             string  `json:"name,omitempty"`
	Description      string  `json:"description,omitempty"`
	Owner            string  `json:"owner,omitempty"`
	CreatedAt        string  `json:"createdAt,omitempty"`
	LastMessageAt    *string `json:"lastMessageAt,omitempty"`
	ParticipantCount int     `json:"participantCount"`
	Restrict         bool    `json:"restrict"`
}

// listContacts serves GET /v1/contacts.
func (s *server) listContacts(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	_ = queryBool(r, "includeArchive", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.ContactList(r.Context(), queryString(r, "searchToken"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]contactRecord, len(page.Items))
	for i, c := range page.Items {
		name := c.Name
		if name == "" {
			name = c.PushName
		}
		out[i] = contactRecord{ChatID: c.Jid, Name: name, IsBusiness: c.IsBusiness}
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// commonGroups serves GET /v1/contacts/{id}/common_groups (spec endpoint 8).
func (s *server) commonGroups(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.CommonGroups(r.Context(), chi.URLParam(r, "id"), limit, skip)
	if err != nil {
		return err
	}
	out := make([]groupItem, len(page.Items))
	for i, c := range page.Items {
		out[i] = newGroupItem(c)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}
