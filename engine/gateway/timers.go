package gateway

import (
	"context"
	"database/sql"
	"errors"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A chat with disappearing messages on has a timer (seconds; 0 is off) that
// every message sent to it carries (ContextInfo.Expiration, with the time the
// timer was set in EphemeralSettingTimestamp); a message without it would stay
// on the recipients' phones. The gateway keeps each chat's timer in
// gateway_chat_timers, per device and chat, learned from:
//   - groups: the group's info (GroupEphemeral, asked once for a group never
//     seen before a send) and its changes (events.GroupInfo.Ephemeral);
//   - direct chats: the timer setting messages (protocol EPHEMERAL_SETTING, 0
//     turns it off) and the timer that messages in the chat carry
//     (ContextInfo.Expiration, in either direction);
//   - the history sync's conversations (EphemeralExpiration).
// A timer set before the one stored (by its setting time) does not replace it;
// a group's info (which tells no setting time) replaces whatever is stored.

// chatTimer is the timer of one chat and when it was set (unix seconds).
type chatTimer struct {
	seconds uint32
	setAt   int64
}

// putTimer records the timer of chat for device our unless a later one is
// stored; a snapshot (a group's info, which tells no setting time) replaces
// whatever is stored.
func (s *Store) putTimer(ctx context.Context, our, chat string, t chatTimer, snapshot bool) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO gateway_chat_timers (our_jid, chat_jid, seconds, set_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (our_jid, chat_jid) DO UPDATE SET seconds = excluded.seconds, set_at = excluded.set_at
		WHERE $5 OR gateway_chat_timers.set_at <= excluded.set_at`, our, chat, int64(t.seconds), t.setAt, snapshot)
	return err
}

// timer is the timer of the first of chats the store knows, the latest set
// when it knows several (a direct chat by phone number and by LID); ok false
// when it knows none.
func (s *Store) timer(ctx context.Context, our string, chats ...string) (t chatTimer, ok bool, err error) {
	for _, chat := range chats {
		var x chatTimer
		var secs int64
		err := s.db.QueryRowContext(ctx, `SELECT seconds, set_at FROM gateway_chat_timers WHERE our_jid = $1 AND chat_jid = $2`,
			our, chat).Scan(&secs, &x.setAt)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return chatTimer{}, false, err
		}
		x.seconds = uint32(secs)
		if !ok || x.setAt > t.setAt {
			t, ok = x, true
		}
	}
	return t, ok, nil
}

// setTimer records a chat's timer (see putTimer), logging a failure.
func (c *carefulClient) setTimer(ctx context.Context, chat types.JID, t chatTimer, snapshot bool) {
	st, our := c.e.cfg.Store, c.ownJID()
	if st == nil || our == "" || chat.IsEmpty() {
		return
	}
	if err := st.putTimer(ctx, our, chat.ToNonAD().String(), t, snapshot); err != nil {
		c.e.log.Warn("gateway: keep chat timer", "chat", chat, "err", err)
	}
}

// groupTimers records the timers of groups from their infos: snapshots without
// a setting time, which any later change replaces.
func (c *carefulClient) groupTimers(ctx context.Context, infos ...*types.GroupInfo) {
	for _, g := range infos {
		var t chatTimer
		if g.IsEphemeral {
			t.seconds = g.DisappearingTimer
		}
		c.setTimer(ctx, g.JID, t, true)
	}
}

// observeTimers learns chats' timers from an event (see the comment above).
func (c *carefulClient) observeTimers(ctx context.Context, evt any) {
	switch v := evt.(type) {
	case *events.Message:
		c.messageTimer(ctx, v)
	case *events.GroupInfo:
		if v.Ephemeral != nil {
			t := chatTimer{setAt: v.Timestamp.Unix()}
			if v.Ephemeral.IsEphemeral {
				t.seconds = v.Ephemeral.DisappearingTimer
			}
			c.setTimer(ctx, v.JID, t, false)
		}
	case *events.JoinedGroup:
		c.groupTimers(ctx, &v.GroupInfo)
	case *events.HistorySync:
		for _, conv := range v.Data.GetConversations() {
			if conv.EphemeralExpiration == nil && conv.EphemeralSettingTimestamp == nil {
				continue
			}
			if jid, err := types.ParseJID(conv.GetID()); err == nil {
				c.setTimer(ctx, jid, chatTimer{seconds: conv.GetEphemeralExpiration(), setAt: conv.GetEphemeralSettingTimestamp()}, false)
			}
		}
	}
}

// messageTimer learns a chat's timer from a message: a timer setting, or the
// timer the message carries.
func (c *carefulClient) messageTimer(ctx context.Context, v *events.Message) {
	at := v.Info.Timestamp.Unix()
	if p := v.Message.GetProtocolMessage(); p.GetType() == waE2E.ProtocolMessage_EPHEMERAL_SETTING {
		if ts := p.GetEphemeralSettingTimestamp(); ts > 0 {
			at = ts
		}
		c.setTimer(ctx, v.Info.Chat, chatTimer{seconds: p.GetEphemeralExpiration(), setAt: at}, false)
		return
	}
	ci := contextInfoOf(v.Message, false)
	if ci.GetExpiration() == 0 {
		return
	}
	if ts := ci.GetEphemeralSettingTimestamp(); ts > 0 {
		at = ts
	}
	c.setTimer(ctx, v.Info.Chat, chatTimer{seconds: ci.GetExpiration(), setAt: at}, false)
}

// chatTimer is the timer the store keeps for the chat to (by phone number
// or LID); a group never seen asks its info once (which keeps its timer), and
// answers its error. ok false when no timer is known.
func (c *carefulClient) chatTimer(ctx context.Context, to types.JID) (t chatTimer, ok bool, err error) {
	st, our := c.e.cfg.Store, c.ownJID()
	if st == nil || our == "" {
		return chatTimer{}, false, nil
	}
	chats := []string{to.ToNonAD().String()}
	if alt, err := c.client.AltJID(ctx, to); err == nil && !alt.IsEmpty() {
		chats = append(chats, alt.ToNonAD().String())
	}
	t, ok, err = st.timer(ctx, our, chats...)
	if err == nil && !ok && to.Server == types.GroupServer {
		// A group never seen: its info says its timer (and is kept, so once).
		if _, err = c.GetGroupInfo(ctx, to); err != nil {
			return chatTimer{}, false, err
		}
		t, ok, err = st.timer(ctx, our, chats...)
	}
	return t, ok, err
}

// applyTimer puts the timer of the chat to on msg, when it has one and msg is
// a kind that carries it (not a reaction, an edit or a deletion).
func (c *carefulClient) applyTimer(ctx context.Context, to types.JID, msg *waE2E.Message) {
	if c.e.cfg.Store == nil || c.ownJID() == "" || contextInfoOf(msg, false) == nil && !carriesContext(msg) {
		return
	}
	t, ok, err := c.chatTimer(ctx, to)
	if err != nil {
		c.e.log.Warn("gateway: read chat timer", "chat", to, "err", err)
	}
	if !ok || t.seconds == 0 {
		return
	}
	ci := contextInfoOf(msg, true)
	ci.Expiration = proto.Uint32(t.seconds)
	if t.setAt > 0 {
		ci.EphemeralSettingTimestamp = proto.Int64(t.setAt)
	}
}

// contextInfoName is the protobuf name of waE2E.ContextInfo.
var contextInfoName = (&waE2E.ContextInfo{}).ProtoReflect().Descriptor().FullName()

// carriesContext says whether msg is content that can carry a ContextInfo.
func carriesContext(msg *waE2E.Message) bool {
	if msg.Conversation != nil {
		return true
	}
	found := false
	msg.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if fd.Kind() == protoreflect.MessageKind && fd.Message().Fields().ByName("contextInfo") != nil {
			found = true
		}
		return !found
	})
	return found
}

// contextInfoOf is the ContextInfo of msg's content (the first field set that
// has one); nil when it has none, unless create, which makes one (a plain text
// becomes an extended text to carry it).
func contextInfoOf(msg *waE2E.Message, create bool) *waE2E.ContextInfo {
	if msg == nil {
		return nil
	}
	if msg.Conversation != nil && create {
		msg.ExtendedTextMessage = &waE2E.ExtendedTextMessage{Text: msg.Conversation}
		msg.Conversation = nil
	}
	var ci *waE2E.ContextInfo
	msg.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
			return true
		}
		sub := v.Message()
		cf := sub.Descriptor().Fields().ByName("contextInfo")
		if cf == nil || cf.Message() == nil || cf.Message().FullName() != contextInfoName {
			return true
		}
		if sub.Has(cf) {
			ci, _ = sub.Get(cf).Message().Interface().(*waE2E.ContextInfo)
		} else if create {
			ci, _ = sub.Mutable(cf).Message().Interface().(*waE2E.ContextInfo)
		}
		return ci == nil
	})
	return ci
}
