package gateway

import (
	"context"
	"fmt"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// The message actions the gateway serves.
var (
	_ engine.Editor        = (*Engine)(nil)
	_ engine.Revoker       = (*Engine)(nil)
	_ engine.ChatPresencer = (*Engine)(nil)
)

// Edit implements engine.Editor: whatsmeow's edit (a MESSAGE_EDIT protocol
// message carrying the new content) of the account's message, then the edit
// reported as the phone would report it (EventEdited).
func (e *Engine) Edit(ctx context.Context, key engine.Key, text, mediaKind string) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	if !key.FromMe {
		return fmt.Errorf("%w: only the account's own messages can be edited", engine.ErrRejected)
	}
	chat, err := parseChat(key.Remote)
	if err != nil {
		return err
	}
	content, typ := editedContent(text, mediaKind)
	if _, err := cl.SendMessage(ctx, chat, cl.BuildEdit(chat, types.MessageID(key.ID), content)); err != nil {
		return classifySend(err)
	}
	in := &engine.Incoming{Key: key, From: chatID(cl.OwnID()), Type: typ, Text: text}
	return e.reportNow(ctx, engine.Event{ID: "wa_ownedit_" + switchboard.RandomToken(8), Type: engine.EventEdited, At: time.Now(), Key: key, Message: in})
}

// editedContent is the new content of an edit of a message of mediaKind: the
// text (with its mentions), or the caption of the attachment; and the type the
// edit event reports.
func editedContent(text, mediaKind string) (*waE2E.Message, string) {
	text, mentioned := mentions(text, nil)
	var ci *waE2E.ContextInfo
	if len(mentioned) > 0 {
		ci = &waE2E.ContextInfo{MentionedJID: mentioned}
	}
	switch mediaKind {
	case "image":
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String(text), ContextInfo: ci}}, "media"
	case "video", "gif":
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{Caption: proto.String(text), ContextInfo: ci}}, "media"
	case "document":
		return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: proto.String(text), ContextInfo: ci}}, "media"
	}
	if ci != nil {
		return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text), ContextInfo: ci}}, "text"
	}
	return &waE2E.Message{Conversation: proto.String(text)}, "text"
}

// Revoke implements engine.Revoker: whatsmeow's revoke (a REVOKE protocol
// message) of the message; for a participant's message in a group it names the
// sender, which the network takes from an admin only. The deletion is reported
// as the phone would report it (EventRevoked).
func (e *Engine) Revoke(ctx context.Context, key engine.Key) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	chat, err := parseChat(key.Remote)
	if err != nil {
		return err
	}
	sender := senderOf(key)
	if !key.FromMe && (chat.Server != types.GroupServer || sender.IsEmpty()) {
		return fmt.Errorf("%w: only the sender, or a group admin, can delete a message for everyone", engine.ErrRejected)
	}
	if !key.FromMe {
		if err := e.mustBeAdmin(ctx, cl, chat); err != nil {
			return err
		}
	}
	if _, err := cl.SendMessage(ctx, chat, cl.BuildRevoke(chat, sender, types.MessageID(key.ID))); err != nil {
		return classifySend(err)
	}
	in := &engine.Incoming{Key: key, From: chatID(cl.OwnID())}
	return e.reportNow(ctx, engine.Event{ID: "wa_ownrevoke_" + switchboard.RandomToken(8), Type: engine.EventRevoked, At: time.Now(), Key: key, Message: in})
}

// mustBeAdmin checks that the account is an admin of group (engine.ErrRejected
// when not): the network drops an other's revoke of a participant's message
// without a word, so it is not sent.
func (e *Engine) mustBeAdmin(ctx context.Context, cl client, group types.JID) error {
	info, err := cl.GetGroupInfo(ctx, group)
	if err != nil {
		return groupErr(err)
	}
	me := chatID(cl.OwnID())
	for _, p := range e.groupState(ctx, cl, info).Participants {
		if p.ID == me && p.IsAdmin {
			return nil
		}
	}
	return fmt.Errorf("%w: only an admin of %s can delete a participant's message", engine.ErrRejected, chatID(group))
}

// SetChatPresence implements engine.ChatPresencer: composing (with audio media
// for recording) or paused.
func (e *Engine) SetChatPresence(ctx context.Context, chat string, state engine.ChatPresence) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	jid, err := parseChat(chat)
	if err != nil {
		return err
	}
	p, media := types.ChatPresenceComposing, types.ChatPresenceMediaText
	switch state {
	case engine.PresenceTyping:
	case engine.PresenceRecording:
		media = types.ChatPresenceMediaAudio
	case engine.PresencePaused:
		p = types.ChatPresencePaused
	default:
		return fmt.Errorf("%w: unknown chat presence %q", engine.ErrRejected, state)
	}
	if err := cl.SendChatPresence(ctx, jid, p, media); err != nil {
		return fmt.Errorf("gateway: presence: %w", err)
	}
	return nil
}
