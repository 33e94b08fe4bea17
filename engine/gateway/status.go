package gateway

import (
	"context"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// Statuses (WhatsApp's stories, docs/status.md). A status is a message to
// status@broadcast. whatsmeow's SendMessage sends it to the recipients the
// account's status privacy setting names (GetStatusPrivacy: all contacts,
// contacts except some, or only some) and lets no caller choose them, so the
// gateway posts to that audience only: a chosen audience is refused
// (engine.ErrAudience).

var _ engine.StatusPoster = (*Engine)(nil)

// PostStatus implements engine.StatusPoster.
func (e *Engine) PostStatus(ctx context.Context, s engine.StatusPost) (engine.Key, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.Key{}, err
	}
	if len(s.Audience) > 0 {
		return engine.Key{}, engine.ErrAudience
	}
	if s.WireID == "" {
		return engine.Key{}, fmt.Errorf("%w: no wire id", engine.ErrRejected)
	}
	var msg *waE2E.Message
	switch s.Type {
	case "text":
		x := &waE2E.ExtendedTextMessage{Text: proto.String(s.Text),
			Font: waE2E.ExtendedTextMessage_FontType(s.Font).Enum()}
		if s.BackgroundArgb != 0 {
			x.BackgroundArgb = proto.Uint32(s.BackgroundArgb)
		}
		if s.TextArgb != 0 {
			x.TextArgb = proto.Uint32(s.TextArgb)
		}
		msg = &waE2E.Message{ExtendedTextMessage: x}
	case "media":
		out := engine.Outgoing{Type: "media", MediaURL: s.MediaURL, MediaKind: s.MediaKind}
		if msg, err = e.buildMedia(ctx, cl, out, s.Text, nil); err != nil {
			return engine.Key{}, err
		}
	default:
		return engine.Key{}, fmt.Errorf("%w: status type %q", engine.ErrRejected, s.Type)
	}
	resp, err := cl.SendMessage(ctx, types.StatusBroadcastJID, msg, whatsmeow.SendRequestExtra{ID: types.MessageID(s.WireID)})
	if err != nil {
		return engine.Key{}, classifySend(err)
	}
	key := engine.Key{FromMe: true, Remote: engine.StatusChat, ID: string(resp.ID)}
	if key.ID == "" {
		key.ID = s.WireID
	}
	return key, nil
}

// RevokeStatus implements engine.StatusPoster: a revoke of the account's
// status, sent to status@broadcast.
func (e *Engine) RevokeStatus(ctx context.Context, id string) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	chat := types.StatusBroadcastJID
	if _, err := cl.SendMessage(ctx, chat, cl.BuildRevoke(chat, types.EmptyJID, types.MessageID(id))); err != nil {
		return classifySend(err)
	}
	return nil
}

// statusEvents maps a message to status@broadcast: a contact's status ->
// EventStatus, its revoke -> EventStatus with Revoked. The account's own
// statuses (posted from the phone) and other protocol messages are ignored.
func (e *Engine) statusEvents(ctx context.Context, cl client, v *events.Message) []engine.Event {
	info := v.Info
	src := e.sourceOf(ctx, cl, info)
	if src.fromMe {
		return nil
	}
	at := info.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	key := engine.Key{Remote: engine.StatusChat, ID: string(info.ID), Participant: src.sender}
	st := &engine.StatusUpdate{Key: key, From: src.sender, SenderName: info.PushName}
	m := unwrap(v.Message)
	if pm := m.GetProtocolMessage(); pm != nil {
		if pm.GetType() != waE2E.ProtocolMessage_REVOKE {
			return nil
		}
		st.Key.ID, st.Revoked = pm.GetKey().GetID(), true
		return []engine.Event{{ID: "wa_statusrevoke_" + key.Serialized(), Type: engine.EventStatus, At: at, Key: st.Key, Status: st}}
	}
	c := contentOf(m)
	if c.typ == "" {
		return nil
	}
	st.Type, st.Text, st.Media = c.typ, c.text, c.media
	if st.Media != nil && st.Text == "" {
		st.Text = st.Media.Caption
	}
	if st.Type != "text" && st.Type != "media" {
		st.Type = "unknown"
	}
	if x := m.GetExtendedTextMessage(); x != nil {
		st.BackgroundArgb, st.Font = x.GetBackgroundArgb(), int(x.GetFont())
	}
	return []engine.Event{{ID: "wa_status_" + key.Serialized(), Type: engine.EventStatus, At: at, Key: key, Status: st}}
}
