package host

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/viewer"
)

// pollOptions reads the options of a poll from the workspace's messages, to
// name the options of a decrypted vote on a poll this process did not see.
func (h *Host) pollOptions(workspaceID string) func(context.Context, engine.Key) ([]string, error) {
	return func(ctx context.Context, key engine.Key) ([]string, error) {
		m, err := h.Client.Message.Query().Where(message.WaSerialized(key.Serialized())).
			First(viewer.WorkspaceContext(ctx, workspaceID))
		if ent.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return m.PollOptions, nil
	}
}

// oldestMessage finds the oldest stored message of a chat sent before before:
// the anchor of an on-demand request for older history.
func (h *Host) oldestMessage(workspaceID string) func(context.Context, string, time.Time) (engine.Key, time.Time, bool, error) {
	return func(ctx context.Context, chat string, before time.Time) (engine.Key, time.Time, bool, error) {
		m, err := h.Client.Message.Query().
			Where(message.To(chat), message.CreatedAtLT(before), message.WaIDNEQ("")).
			Order(ent.Asc(message.FieldCreatedAt)).First(viewer.WorkspaceContext(ctx, workspaceID))
		if ent.IsNotFound(err) {
			return engine.Key{}, time.Time{}, false, nil
		}
		if err != nil {
			return engine.Key{}, time.Time{}, false, err
		}
		return engine.Key{FromMe: m.FromMe, Remote: chat, ID: m.WaID, Participant: m.WaParticipant}, m.CreatedAt, true, nil
	}
}

// unreadLimit bounds the unread messages a mark-read sends receipts for.
const unreadLimit = 100

// unreadMessages finds the incoming messages of a chat not read yet, newest
// first: as many of the chat's latest incoming messages that engineID (or no
// engine) received as its unread count says (at most unreadLimit), each with
// the key it came under, for the read receipts of a mark-read.
func (h *Host) unreadMessages(workspaceID, engineID string) func(context.Context, string) ([]gateway.Unread, error) {
	return func(ctx context.Context, chatID string) ([]gateway.Unread, error) {
		wctx := viewer.WorkspaceContext(ctx, workspaceID)
		c, err := h.Client.Chat.Query().Where(chat.Jid(chatID)).Only(wctx)
		if ent.IsNotFound(err) {
			return nil, nil
		}
		if err != nil || c.UnreadCount == 0 {
			return nil, err
		}
		ms, err := h.Client.Message.Query().
			Where(message.To(chatID), message.FromMe(false), message.WaSerializedNEQ(""),
				message.Or(message.EngineID(engineID), message.EngineID(""), message.EngineIDIsNil())).
			Order(ent.Desc(message.FieldCreatedAt)).Limit(min(c.UnreadCount, unreadLimit)).All(wctx)
		if err != nil {
			return nil, err
		}
		out := make([]gateway.Unread, 0, len(ms))
		for _, m := range ms {
			if k, ok := engine.ParseKey(m.WaSerialized); ok {
				out = append(out, gateway.Unread{Key: k, At: m.CreatedAt})
			}
		}
		return out, nil
	}
}
