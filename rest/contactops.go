package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// checkNumbers serves POST /v1/contacts/check: {phones, engineId?}.
func (s *server) checkNumbers(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Phones   *[]string `json:"phones"`
		EngineID *string   `json:"engineId"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Phones == nil {
		return required("phones")
	}
	res, err := s.query.CheckNumbers(r.Context(), *b.Phones, b.EngineID)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, res)
}

// blockedContacts serves GET /v1/contacts/blocked.
func (s *server) blockedContacts(w http.ResponseWriter, r *http.Request) error {
	res, err := s.query.BlockedContacts(r.Context(), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, res)
}

// setBlocked serves POST (block) and DELETE (unblock) /v1/contacts/{id}/block.
func (s *server) setBlocked(block bool) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		id, engineID := chi.URLParam(r, "id"), queryString(r, "engineId")
		do := s.mutation.UnblockContact
		if block {
			do = s.mutation.BlockContact
		}
		res, err := do(r.Context(), id, engineID)
		if err != nil {
			return err
		}
		return writeData(w, http.StatusOK, res)
	})
}
