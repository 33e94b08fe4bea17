package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard/view"
)

// The message actions (docs/conversations.md, "Actions"). They take the
// message-action routes' shape, POST /v1/messages/<action>/{waMessageKey} with
// the message's chat in the chatId query when the key alone does not name it,
// as reactions, pin and unpin do.

// editMessage serves POST /v1/messages/edit/{waMessageKey}: the stored message
// with its new text.
func (s *server) editMessage(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Text *string `json:"text"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Text == nil {
		return required("text")
	}
	m, err := s.mutation.EditMessage(r.Context(), chi.URLParam(r, "waMessageKey"), *b.Text, queryString(r, "chatId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, chatMessage(m))
}

// revokeMessage serves POST /v1/messages/revoke/{waMessageKey}: the stored
// message, now revoked.
func (s *server) revokeMessage(w http.ResponseWriter, r *http.Request) error {
	m, err := s.mutation.RevokeMessage(r.Context(), chi.URLParam(r, "waMessageKey"), queryString(r, "chatId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, chatMessage(m))
}

// forwardMessage serves POST /v1/messages/forward/{waMessageKey}: the new
// message, sent like POST /v1/messages/{chatId} (201).
func (s *server) forwardMessage(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		ChatID   *string `json:"chatId"`
		EngineID *string `json:"engineId"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.ChatID == nil {
		return required("chatId")
	}
	m, err := s.mutation.ForwardMessage(r.Context(), chi.URLParam(r, "waMessageKey"), *b.ChatID, queryString(r, "chatId"), b.EngineID)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, view.NewMessage(m))
}

// setChatPresence serves POST /v1/chats/{chatId}/presence.
func (s *server) setChatPresence(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		State *string `json:"state"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.State == nil {
		return required("state")
	}
	if _, err := s.mutation.SetChatPresence(r.Context(), chi.URLParam(r, "chatId"), *b.State); err != nil {
		return err
	}
	return writeData(w, http.StatusOK, okBody)
}
