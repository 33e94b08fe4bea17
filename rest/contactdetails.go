package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
)

// getContactDetails serves GET /v1/contacts/{id}/details: what the network
// tells of a contact (push name, about text, business profile, profile
// picture), read through engineId or the default engine, answered from the
// store while fresh unless refresh=true (docs/contact-details.md).
func (s *server) getContactDetails(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	refresh := queryBool(r, "refresh", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	d, err := s.query.ContactDetails(r.Context(), chi.URLParam(r, "id"), queryString(r, "engineId"), refresh)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, d)
}
