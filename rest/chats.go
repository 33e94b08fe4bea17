package rest

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/view"
)

// chatRecord is the reference's chat shape; Messages only in latest-chats.
type chatRecord struct {
	ChatID            string              `json:"chatId"`
	Name              string              `json:"name,omitempty"`
	ChatType          string              `json:"chatType"`
	Pinned            bool                `json:"pinned"`
	Archived          bool                `json:"archived"`
	LastMessageAt     *time.Time          `json:"lastMessageAt,omitempty"`
	UnreadCount       int                 `json:"unreadCount"`
	MarkedUnread      bool                `json:"markedUnread"`
	LastMessageText   *string             `json:"lastMessageText,omitempty"`
	LastMessageFromMe *bool               `json:"lastMessageFromMe,omitempty"`
	Messages          *[]view.ChatMessage `json:"messages,omitempty"` // [] when latest-chats asks for none
	// EngineID is the engine (number) of the chat's latest message (a
	// Switchboard addition).
	EngineID string `json:"engineId,omitempty"`
}

// newChatRecord renders c; the last message's text and side only withLast.
func newChatRecord(c *ent.Chat, withLast bool) chatRecord {
	rec := chatRecord{ChatID: c.Jid, Name: c.Name, ChatType: string(c.Kind), Pinned: c.Pinned, Archived: c.Archived,
		UnreadCount: c.UnreadCount, MarkedUnread: c.MarkedUnread, EngineID: c.EngineID}
	if c.LastMessageAt != nil {
		at := c.LastMessageAt.UTC()
		rec.LastMessageAt = &at
		if withLast {
			rec.LastMessageText, rec.LastMessageFromMe = &c.LastMessageText, &c.LastMessageFromMe
		}
	}
	return rec
}

// chatMessages renders messages in the chat message shape, with what they quote.
func (s *server) chatMessages(ctx context.Context, msgs []*ent.Message) ([]view.ChatMessage, error) {
	quoted, err := s.core.Quoted(ctx, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]view.ChatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = chatMessage(m)
		if m.ReplyTo != "" {
			out[i].QuotedMessage = view.NewQuotedMessage(m.ReplyTo, quoted[m.ReplyTo])
		}
	}
	return out, nil
}

// latestChats serves GET /v1/latest-chats (spec endpoint 7).
func (s *server) latestChats(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	nc, nm := queryInt(r, "numberOfChats", &p), queryInt(r, "numberOfMessages", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	res, err := s.core.LatestChats(r.Context(), nc, nm, view.ChatMessageFields...)
	if err != nil {
		return err
	}
	var all []*ent.Message
	for _, c := range res.Chats {
		all = append(all, c.Messages...)
	}
	rendered, err := s.chatMessages(r.Context(), all)
	if err != nil {
		return err
	}
	chats := make([]chatRecord, len(res.Chats))
	for i, c := range res.Chats {
		chats[i] = newChatRecord(c.Chat, true)
		msgs := rendered[:len(c.Messages):len(c.Messages)]
		rendered = rendered[len(c.Messages):]
		chats[i].Messages = &msgs
	}
	return writeDataStreamed(w, map[string]int{"totalChats": res.TotalChats,
		"numberOfChats": res.NumberOfChats, "numberOfMessages": res.NumberOfMessages}, "chats", chats)
}

// queryList returns a list query parameter, given repeated or comma-separated.
func queryList(r *http.Request, name string) []string {
	raw, ok := r.URL.Query()[name]
	if !ok {
		return nil
	}
	out := []string{}
	for _, v := range raw {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// listChats serves GET /v1/chats.
func (s *server) listChats(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	withLast := queryBool(r, "includeLastMessage", &p)
	_ = queryBool(r, "includeExtendedInfo", &p) // the chat shape has no extended fields
	f := &model.ChatFilter{SearchToken: queryString(r, "searchToken"), Filter: queryString(r, "filter"),
		Kinds: queryList(r, "kinds"), Since: queryString(r, "since"),
		IncludeWithoutName: queryBool(r, "includeWithoutName", &p), IncludeArchive: queryBool(r, "includeArchive", &p),
		EngineID: queryString(r, "engineId")}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.ChatList(r.Context(), f, limit, skip)
	if err != nil {
		return err
	}
	return writeChatPage(w, page, withLast != nil && *withLast)
}

func writeChatPage(w http.ResponseWriter, page *model.ChatPage, withLast bool) error {
	out := make([]chatRecord, len(page.Items))
	for i, c := range page.Items {
		out[i] = newChatRecord(c, withLast)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getChat serves GET /v1/chats/{id}: one chat carries its last message's text and
// side (the reference's get takes no includeLastMessage).
func (s *server) getChat(w http.ResponseWriter, r *http.Request) error {
	c, err := s.query.Chat(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, newChatRecord(c, true))
}

// listParticipants serves GET /v1/chats/{chatId}/participants.
func (s *server) listParticipants(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.ChatParticipants(r.Context(), chi.URLParam(r, "chatId"), queryString(r, "searchToken"), limit, skip)
	if err != nil {
		return err
	}
	return writeList(w, page.Items, page.Limit, page.Skip, page.Total)
}

// okBody is the answer of an action.
var okBody = map[string]bool{"ok": true}

// markChatRead serves POST /v1/chats/{chatId}/mark_read.
func (s *server) markChatRead(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.mutation.MarkChatRead(r.Context(), chi.URLParam(r, "chatId")); err != nil {
		return err
	}
	return writeData(w, http.StatusOK, okBody)
}

// archiveChat serves POST /v1/chats/{chatId}/archive and /unarchive.
func (s *server) archiveChat(archived bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := s.mutation.ArchiveChat(r.Context(), chi.URLParam(r, "chatId"), archived); err != nil {
			return err
		}
		return writeData(w, http.StatusOK, okBody)
	}
}
