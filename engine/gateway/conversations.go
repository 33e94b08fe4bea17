package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	waCommon "go.mau.fi/whatsmeow/proto/waCommon"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// lastOf is the newest message the engine saw in a chat, the anchor of chat
// patches (zero values when none: the patch then covers the whole chat).
func (e *Engine) lastOf(cl client, chat string, j types.JID) (time.Time, *waCommon.MessageKey) {
	n, ok := e.mem.newestOf(chat)
	if !ok {
		return time.Time{}, nil
	}
	k := &waCommon.MessageKey{RemoteJID: proto.String(j.String()), FromMe: proto.Bool(n.fromMe), ID: proto.String(n.id)}
	if n.group && !n.fromMe && !n.sender.IsEmpty() {
		k.Participant = proto.String(n.sender.ToNonAD().String())
	}
	return n.at, k
}

// MarkRead implements engine.ChatActor: read receipts for the incoming messages
// of the chat this process saw unread, and the chat marked read on the phone
// (app state).
func (e *Engine) MarkRead(ctx context.Context, chat string) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	j, err := parseChat(chat)
	if err != nil {
		return err
	}
	// Read receipts go to the address each message came on: a contact that
	// writes by LID is stored in its phone-number chat when the mapping is
	// known, but its phone expects the receipt on the LID chat.
	type to struct{ chat, sender types.JID }
	byAddress := map[to][]types.MessageID{}
	var last time.Time
	unread, err := e.unreadOf(ctx, cl, chat, j)
	if err != nil {
		return fmt.Errorf("gateway: mark read: %w", err)
	}
	for _, u := range unread {
		a := to{chat: u.chat.ToNonAD()}
		if a.chat.IsEmpty() {
			a.chat = j
		}
		if u.group {
			a.sender = u.sender
		}
		byAddress[a] = append(byAddress[a], u.id)
		if u.at.After(last) {
			last = u.at
		}
	}
	for a, ids := range byAddress {
		if err := cl.MarkRead(ctx, ids, last, a.chat, a.sender); err != nil {
			return fmt.Errorf("gateway: mark read: %w", err)
		}
	}
	ts, key := e.lastOf(cl, chat, j)
	if err := cl.SendAppState(ctx, appstate.BuildMarkChatAsRead(j, true, ts, key)); err != nil {
		return fmt.Errorf("gateway: mark read: %w", err)
	}
	zero, no := 0, false
	return e.reportNow(ctx, e.ownChat(chat, "read", &engine.ChatState{UnreadCount: &zero, MarkedUnread: &no}))
}

// unreadOf is the incoming messages of chat (j) not read yet: as the message
// store has them (Config.UnreadMessages), else as this process saw them, and
// for a phone-number chat also those it saw in the chat's LID chat before it
// knew the number (the store merged that chat into this one).
func (e *Engine) unreadOf(ctx context.Context, cl client, chat string, j types.JID) ([]seen, error) {
	if e.cfg.UnreadMessages != nil {
		return e.storedUnread(ctx, chat, j)
	}
	u := e.mem.takeUnread(chat)
	if j.Server != types.DefaultUserServer {
		return u, nil
	}
	if lid, err := cl.AltJID(ctx, j); err == nil && lid.Server == types.HiddenUserServer {
		u = append(u, e.mem.takeUnread(chatID(lid))...)
	}
	return u, nil
}

// storedUnread is the unread incoming messages of chat (j) the store has.
func (e *Engine) storedUnread(ctx context.Context, chat string, j types.JID) ([]seen, error) {
	stored, err := e.cfg.UnreadMessages(ctx, chat)
	if err != nil {
		return nil, err
	}
	out := make([]seen, 0, len(stored))
	for _, u := range stored {
		// The phone expects the receipt on the address its message came on:
		// the key's (a LID chat's messages are stored in the phone chat).
		addr := j
		if a, err := parseChat(u.Key.Remote); err == nil && u.Key.Remote != "" {
			addr = a
		}
		s := seen{chat: addr, id: u.Key.ID, at: u.At, group: j.Server == types.GroupServer}
		if s.group && u.Key.Participant != "" {
			if p, err := parseChat(u.Key.Participant); err == nil {
				s.sender = p
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ownChat is an EventChat the account caused now.
func (e *Engine) ownChat(chat, what string, cs *engine.ChatState) engine.Event {
	cs.ID, cs.Kind = chat, engine.ChatKind(chat)
	return engine.Event{ID: "wa_ownchat_" + what + "_" + switchboard.RandomToken(8), Type: engine.EventChat, At: time.Now(), Chat: cs}
}

// SetArchived implements engine.ChatActor (app state; archiving also unpins).
func (e *Engine) SetArchived(ctx context.Context, chat string, archived bool) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	j, err := parseChat(chat)
	if err != nil {
		return err
	}
	ts, key := e.lastOf(cl, chat, j)
	if err := cl.SendAppState(ctx, appstate.BuildArchive(j, archived, ts, key)); err != nil {
		return fmt.Errorf("gateway: archive: %w", err)
	}
	cs := &engine.ChatState{Archived: &archived}
	if archived {
		no := false
		cs.Pinned = &no
	}
	return e.reportNow(ctx, e.ownChat(chat, "archive", cs))
}

// senderOf is the JID of the author of the message key k names (empty for the
// account's own messages).
func senderOf(k engine.Key) types.JID {
	switch {
	case k.FromMe:
		return types.EmptyJID
	case k.Participant != "":
		j, _ := parseChat(k.Participant)
		return j
	}
	j, _ := parseChat(k.Remote)
	return j
}

// React implements engine.ChatActor: the account reacts to a message (emoji ""
// removes its reaction).
func (e *Engine) React(ctx context.Context, key engine.Key, emoji string) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	chat, err := parseChat(key.Remote)
	if err != nil {
		return err
	}
	if _, err := cl.SendMessage(ctx, chat, cl.BuildReaction(chat, senderOf(key), key.ID, emoji)); err != nil {
		return classifySend(err)
	}
	return e.reportNow(ctx, engine.Event{ID: "wa_ownreact_" + switchboard.RandomToken(8), Type: engine.EventReaction, At: time.Now(), Key: key, Reaction: emoji})
}

// Pin implements engine.ChatActor: pins a message in its chat for d (WhatsApp
// offers 24 hours, 7 days and 30 days), or unpins it (d == 0).
func (e *Engine) Pin(ctx context.Context, key engine.Key, d time.Duration) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	chat, err := parseChat(key.Remote)
	if err != nil {
		return err
	}
	mk := &waCommon.MessageKey{RemoteJID: proto.String(chat.String()), FromMe: proto.Bool(key.FromMe), ID: proto.String(key.ID)}
	if s := senderOf(key); !key.FromMe && chat.Server == types.GroupServer && !s.IsEmpty() {
		mk.Participant = proto.String(s.String())
	}
	typ := waE2E.PinInChatMessage_PIN_FOR_ALL
	if d <= 0 {
		typ = waE2E.PinInChatMessage_UNPIN_FOR_ALL
	}
	msg := &waE2E.Message{PinInChatMessage: &waE2E.PinInChatMessage{Key: mk, Type: typ.Enum(), SenderTimestampMS: proto.Int64(time.Now().UnixMilli())}}
	if d > 0 {
		msg.MessageContextInfo = &waE2E.MessageContextInfo{MessageAddOnDurationInSecs: proto.Uint32(uint32(d / time.Second))}
	}
	if _, err := cl.SendMessage(ctx, chat, msg); err != nil {
		return classifySend(err)
	}
	return e.reportNow(ctx, engine.Event{ID: "wa_ownpin_" + switchboard.RandomToken(8), Type: engine.EventPin, At: time.Now(), Key: key, Pinned: d})
}

// FetchMedia implements engine.MediaFetcher for messages this process saw (live
// or in a history sync); others are engine.ErrNotFound. Switchboard asks
// FetchMediaRef instead, with the reference it kept of the message.
func (e *Engine) FetchMedia(ctx context.Context, key engine.Key) (engine.Media, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.Media{}, err
	}
	m, ok := e.mem.mediaOf(key.Serialized())
	if !ok {
		return engine.Media{}, engine.ErrNotFound
	}
	var d whatsmeow.DownloadableMessage
	var mime, name string
	switch {
	case m.GetImageMessage() != nil:
		d, mime = m.GetImageMessage(), m.GetImageMessage().GetMimetype()
	case m.GetVideoMessage() != nil:
		d, mime = m.GetVideoMessage(), m.GetVideoMessage().GetMimetype()
	case m.GetPtvMessage() != nil: // a video note
		d, mime = m.GetPtvMessage(), m.GetPtvMessage().GetMimetype()
	case m.GetAudioMessage() != nil:
		d, mime = m.GetAudioMessage(), m.GetAudioMessage().GetMimetype()
	case m.GetDocumentMessage() != nil:
		d, mime, name = m.GetDocumentMessage(), m.GetDocumentMessage().GetMimetype(), m.GetDocumentMessage().GetFileName()
	case m.GetStickerMessage() != nil:
		d, mime = m.GetStickerMessage(), m.GetStickerMessage().GetMimetype()
	default:
		return engine.Media{}, engine.ErrNotFound
	}
	var r mediaRef
	if ref := refOf(d); ref == nil || json.Unmarshal(ref, &r) != nil {
		return engine.Media{}, engine.ErrNotFound
	}
	got, err := e.download(ctx, cl, key, &r)
	got.MimeType, got.Filename = mime, name
	return got, err
}

// ShowTyping implements engine.Typist: the typing presence in chat for d, then
// paused (the message that follows would clear it too).
func (e *Engine) ShowTyping(ctx context.Context, chat string, d time.Duration) error {
	if err := e.SetChatPresence(ctx, chat, engine.PresenceTyping); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	if err := e.SetChatPresence(context.WithoutCancel(ctx), chat, engine.PresencePaused); err != nil {
		return err
	}
	return ctx.Err()
}

// CreateNewsletter implements engine.NewsletterCreator.
func (e *Engine) CreateNewsletter(ctx context.Context, name, description string) (engine.ChatState, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.ChatState{}, err
	}
	md, err := cl.CreateNewsletter(ctx, whatsmeow.CreateNewsletterParams{Name: name, Description: description})
	if err != nil {
		return engine.ChatState{}, fmt.Errorf("gateway: create newsletter: %w", err)
	}
	s := engine.ChatState{ID: md.ID.String(), Kind: engine.ChatNewsletter, Name: md.ThreadMeta.Name.Text,
		Description: md.ThreadMeta.Description.Text, Subscribers: md.ThreadMeta.SubscriberCount,
		Verification: string(md.ThreadMeta.VerificationState), Role: engine.NewsletterOwner}
	if s.Name == "" {
		s.Name = name
	}
	if s.Description == "" {
		s.Description = description
	}
	if code := md.ThreadMeta.InviteCode; code != "" {
		s.Invite = "https://whatsapp.com/channel/" + code
	}
	if t := md.ThreadMeta.CreationTime.Time; !t.IsZero() {
		t = t.UTC()
		s.CreatedAt = &t
	}
	return s, e.reportNow(ctx, engine.Event{ID: "wa_newsletter_" + s.ID, Type: engine.EventChat, At: time.Now(), Chat: &s})
}
