package graph

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/viewer"
)

// The actions on messages the account sent: edit, delete for everyone,
// forward; and the presence it shows in a chat (docs/conversations.md,
// "Actions").

// editMessage is the use case behind editMessage: the new text goes through the
// engine that holds the message, which reports the edit (EventEdited); the
// inbox applies it as it applies an edit made on the phone, so the stored text
// changes and message_edited_webhook fires.
func (r *Resolver) editMessage(ctx context.Context, key, text string, chatID *string) (*ent.Message, error) {
	if err := checkEditText(text); err != nil {
		return nil, err
	}
	m, err := r.storedMessage(ctx, key, chatID)
	if err != nil {
		return nil, err
	}
	if err := editRule(m, r.now()); err != nil {
		return nil, err
	}
	k, err := networkKey(m)
	if err != nil {
		return nil, err
	}
	ed, err := phoneFor[engine.Editor](ctx, r, m.To, m.EngineID, "edit a message")
	if err != nil {
		return nil, err
	}
	if err := r.act(ctx, func() error { return ed.Edit(ctx, k, text, editKind(m)) }); err != nil {
		return nil, refused(err)
	}
	return r.Client.Message.Get(ctx, m.ID)
}

// revokeMessage is the use case behind revokeMessage: like editMessage, through
// the engine's EventRevoked (message_deleted_revoked_webhook).
func (r *Resolver) revokeMessage(ctx context.Context, key string, chatID *string) (*ent.Message, error) {
	m, err := r.storedMessage(ctx, key, chatID)
	if err != nil {
		return nil, err
	}
	if err := revokeRule(m); err != nil {
		return nil, err
	}
	k, err := networkKey(m)
	if err != nil {
		return nil, err
	}
	rv, err := phoneFor[engine.Revoker](ctx, r, m.To, m.EngineID, "delete a message for everyone")
	if err != nil {
		return nil, err
	}
	if err := r.act(ctx, func() error { return rv.Revoke(ctx, k) }); err != nil {
		return nil, refused(err)
	}
	return r.Client.Message.Get(ctx, m.ID)
}

// checkEditText validates the new text of an edit: 1-maxText characters.
func checkEditText(text string) error {
	var p switchboard.Problems
	if n := utf8.RuneCountInString(text); strings.TrimSpace(text) == "" {
		p.Add("text", "too_small", "text is required (1-%d characters)", maxText)
	} else if n > maxText {
		p.Add("text", "too_big", "text must be at most %d characters (got %d)", maxText, n)
	}
	return p.Err(switchboard.EVALIDATION)
}

// captioned are the media kinds whose caption can be edited.
var captioned = []string{"image", "video", "gif", "document"}

// editKind is the media kind an edit of m changes the caption of ("" for text).
func editKind(m *ent.Message) string {
	if m.Type != "media" {
		return ""
	}
	return mediaKindOf(m)
}

// mediaKindOf is m's media kind: as sent, or for a message received (which has
// none stored) the one its wire type names.
func mediaKindOf(m *ent.Message) string {
	if m.MediaKind != "" {
		return m.MediaKind
	}
	if m.WireType == "ptt" {
		return "voice"
	}
	return m.WireType
}

// editRule says why m cannot be edited at now, or nil: only the account's own
// text messages and captions, not deleted, within engine.EditWindow of sending.
func editRule(m *ent.Message, now time.Time) error {
	switch {
	case !m.FromMe:
		return ruleBroken("not_own_message", "Only messages the account sent can be edited; this one was sent by %s.", cmp.Or(m.From, "someone else"))
	case m.WireType == "revoked":
		return ruleBroken("revoked", "The message was deleted for everyone; it cannot be edited.")
	case m.Type == "media" && !slices.Contains(captioned, mediaKindOf(m)):
		return ruleBroken("not_editable", "A %s message has no caption to edit.", cmp.Or(mediaKindOf(m), "media"))
	case m.Type == "media" && m.Text == "":
		return ruleBroken("no_caption", "The media message has no caption; WhatsApp edits only a caption that was sent.")
	case m.Type != "text" && m.Type != "media":
		return ruleBroken("not_editable", "Only text messages and the captions of images, videos and documents can be edited (this is a %s message).", m.Type)
	}
	sent := sentAt(m)
	if until := sent.Add(engine.EditWindow); now.After(until) {
		return ruleBroken("edit_window_passed", "The message was sent at %s; WhatsApp lets a message be edited for %d minutes after sending (until %s).",
			sent.UTC().Format(time.RFC3339), int(engine.EditWindow/time.Minute), until.UTC().Format(time.RFC3339))
	}
	return nil
}

// sentAt is when m went out: when the network confirmed it, else when it was
// stored.
func sentAt(m *ent.Message) time.Time {
	if m.ConfirmedAt != nil {
		return *m.ConfirmedAt
	}
	return m.CreatedAt
}

// revokeRule says why m cannot be deleted for everyone, or nil: the account's
// own messages, and participants' messages in a group (where the network
// decides whether the account is an admin).
func revokeRule(m *ent.Message) error {
	switch {
	case m.WireType == "revoked":
		return ruleBroken("revoked", "The message was deleted for everyone already.")
	case !m.FromMe && engine.ChatKind(m.To) != engine.ChatGroup:
		return ruleBroken("not_own_message", "Only the sender can delete a message for everyone (in a group, an admin can delete a participant's).")
	}
	return nil
}

// ruleBroken is the conflict of a message action with a rule of the network,
// named in its details (path waMessageKey, code the rule).
func ruleBroken(rule, format string, args ...any) error {
	e := switchboard.Errorf(switchboard.ECONFLICT, format, args...)
	e.Details = []switchboard.Detail{{Path: "waMessageKey", Code: rule, Message: e.Message}}
	return e
}

// refused turns an engine's rejection of an action (the network's rule) into
// a conflict that names it.
func refused(err error) error {
	if errors.Is(err, engine.ErrRejected) {
		return ruleBroken("rejected", "The network refused it: %s.", err.Error())
	}
	return err
}

// setChatPresence is the use case behind setChatPresence.
func (r *Resolver) setChatPresence(ctx context.Context, chatID, state string) (bool, error) {
	if !slices.Contains(engine.ChatPresences, engine.ChatPresence(state)) {
		var p switchboard.Problems
		p.Add("state", "invalid_enum_value", "state must be one of typing, recording, paused")
		return false, p.Err(switchboard.EVALIDATION)
	}
	to, err := r.recipient(ctx, chatID)
	if err != nil {
		return false, err
	}
	pr, err := phoneFor[engine.ChatPresencer](ctx, r, to, "", "show typing or recording")
	if err != nil {
		return false, err
	}
	if err := pr.SetChatPresence(ctx, to, engine.ChatPresence(state)); err != nil {
		return false, refused(err)
	}
	return true, nil
}

// forwardMessage is the use case behind forwardMessage: the stored message's
// content, sent to toChatID as a new direct message marked forwarded.
func (r *Resolver) forwardMessage(ctx context.Context, key, toChatID string, chatID, engineID *string) (*ent.Message, error) {
	// A forward sends (the field's @scope, messages:write) what the message store
	// holds: it reads the store too, or a key that may only send could copy any
	// received message out to a chat of its choosing. The second scope is checked
	// here, before anything is read, as the directive names one.
	if _, err := viewer.Require(ctx, scopeReadStore); err != nil {
		return nil, err
	}
	m, err := r.storedMessage(ctx, key, chatID)
	if err != nil {
		return nil, err
	}
	in, err := r.forwardInput(ctx, m)
	if err != nil {
		return nil, err
	}
	in.EngineID = engineID
	to, err := r.recipient(ctx, toChatID)
	if err != nil {
		return nil, err
	}
	// The content was accepted when it was stored; a media URL is one
	// Switchboard serves or one checked when it was sent.
	d, err := buildDraft(to, in, r.now(), sendAtForbidden, r.mediaURLRule(ctx, true))
	if err != nil {
		return nil, err
	}
	d.ForwardedFrom = cmp.Or(m.WaSerialized, m.ID)
	if d.EngineID, err = r.sendingEngine(ctx, engineID); err != nil {
		return nil, err
	}
	return r.sendDraft(ctx, to, d, 0)
}

// forwardInput is the content of m as a message to send: its text, its poll,
// or its media (downloaded through the engine first when Switchboard does not
// hold it).
func (r *Resolver) forwardInput(ctx context.Context, m *ent.Message) (model.MessageInput, error) {
	in := model.MessageInput{Type: m.Type}
	switch {
	case m.WireType == "revoked":
		return in, ruleBroken("revoked", "The message was deleted for everyone; there is nothing to forward.")
	case m.Type == "text":
		in.Text = &m.Text
	case m.Type == "poll":
		in.PollQuestion, in.PollOptions, in.PollAllowMultiple = &m.PollQuestion, m.PollOptions, m.PollAllowMultiple
	case m.Type == "media":
		one := 1
		got, err := r.messageMedia(ctx, cmp.Or(m.WaSerialized, m.WaID), &m.To, &one)
		if err != nil {
			return in, err
		}
		if got.URL == nil {
			return in, ruleBroken("media_unavailable", "The message's media cannot be had now (%s); forward it again later.", deref(got.MediaUnavailable))
		}
		kind := mediaKindOf(m)
		in.MediaURL, in.MediaKind = got.URL, &kind
		if m.Text != "" {
			in.Text = &m.Text
		}
		if m.MediaFilename != "" {
			in.MediaFilename = &m.MediaFilename
		}
	default:
		return in, ruleBroken("not_forwardable", "A %s message cannot be forwarded.", m.Type)
	}
	return in, nil
}
