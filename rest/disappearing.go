package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// getDisappearingTimer serves GET /v1/chats/{chatId}/disappearing.
func (s *server) getDisappearingTimer(w http.ResponseWriter, r *http.Request) error {
	t, err := s.query.DisappearingTimer(r.Context(), chi.URLParam(r, "chatId"), queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, t)
}

// setDisappearingTimer serves PUT /v1/chats/{chatId}/disappearing.
func (s *server) setDisappearingTimer(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Seconds *int `json:"seconds"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Seconds == nil {
		return required("seconds")
	}
	t, err := s.mutation.SetDisappearingTimer(r.Context(), chi.URLParam(r, "chatId"), *b.Seconds, queryString(r, "engineId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, t)
}
