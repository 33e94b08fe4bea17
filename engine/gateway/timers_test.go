package gateway

import (
	"context"
	"testing"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	waHistorySync "go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

const week = 7 * 24 * 60 * 60

// timerSetting is the protocol message a phone sends when a chat's timer changes.
func timerSetting(chat types.JID, id string, seconds uint32, setAt time.Time) *events.Message {
	info := msgInfo(chat, chat, id, false)
	info.Timestamp = setAt
	return &events.Message{Info: info, Message: &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_EPHEMERAL_SETTING.Enum(), EphemeralExpiration: proto.Uint32(seconds)}}}
}

// expirationOf is the timer an outgoing message carries (0: none).
func expirationOf(m *waE2E.Message) uint32 { return contextInfoOf(m, false).GetExpiration() }

// TestOutgoingMessagesHonourTheChatsTimer: the timers the fake network
// announces (a contact's setting, a message carrying one, a group's info and
// its change, the history sync) are on every kind of message sent to the chat,
// until the timer is turned off; reactions carry none.
func TestOutgoingMessagesHonourTheChatsTimer(t *testing.T) {
	testStores(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		h := newHarness(t, true, withStore(st))
		h.f.groups[group] = &types.GroupInfo{JID: group, GroupEphemeral: types.GroupEphemeral{IsEphemeral: true, DisappearingTimer: 86400}}
		other := types.NewJID("15556667777", types.DefaultUserServer)
		h.f.alt[contact], h.f.alt[contactLID] = contactLID, contact
		n := 0
		send := func(m engine.Outgoing) uint32 {
			t.Helper()
			n++
			m.WireID = engine.WireID("msg_t" + string(rune('a'+n)))
			if _, err := h.e.Send(ctx, m); err != nil {
				t.Fatal(err)
			}
			return expirationOf(h.f.sent[len(h.f.sent)-1].msg)
		}
		text := func(to types.JID) uint32 { return send(engine.Outgoing{To: chatID(to), Type: "text", Text: "hi"}) }

		if got := text(contact); got != 0 {
			t.Errorf("no timer announced: expiration %d", got)
		}
		h.f.emit(timerSetting(contactLID, "SET1", week, at)) // the contact's phone, by LID
		kinds := []engine.Outgoing{
			{Type: "text", Text: "hi"},
			{Type: "text", Text: "a reply", ReplyTo: engine.Key{Remote: chatID(contact), ID: "IN1"}.Serialized()},
			{Type: "poll", PollQuestion: "Lunch?", PollOptions: []string{"Sushi", "Pizza"}},
			{Type: engine.TypeLocation, Location: &engine.Location{Latitude: 1, Longitude: 2}},
			{Type: engine.TypeVCard, Contacts: []engine.ContactCard{{DisplayName: "Ann", VCard: "BEGIN:VCARD\nEND:VCARD"}}},
		}
		for _, k := range kinds {
			k.To = chatID(contact)
			if got := send(k); got != week {
				t.Errorf("%s to a chat with a week's timer: expiration %d", k.Type, got)
			}
		}
		if ci := contextInfoOf(h.f.sent[len(h.f.sent)-1].msg, false); ci.GetEphemeralSettingTimestamp() != at.Unix() {
			t.Errorf("setting timestamp %d", ci.GetEphemeralSettingTimestamp())
		}
		if err := h.e.React(ctx, engine.Key{Remote: chatID(contact), ID: "IN1"}, "👍"); err != nil {
			t.Fatal(err)
		}
		if got := expirationOf(h.f.sent[len(h.f.sent)-1].msg); got != 0 {
			t.Errorf("reaction expiration %d", got)
		}
		h.f.emit(timerSetting(contact, "SET0", 0, at.Add(-time.Hour))) // an older setting, delivered late
		if got := text(contact); got != week {
			t.Errorf("after a stale setting: expiration %d", got)
		}
		h.f.emit(timerSetting(contact, "SET2", 0, at.Add(time.Hour))) // turned off
		if got := text(contact); got != 0 {
			t.Errorf("after the timer was turned off: expiration %d", got)
		}

		// A message carrying a timer sets it.
		in := &events.Message{Info: msgInfo(other, other, "IN9", false), Message: &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
			Text: proto.String("hey"), ContextInfo: &waE2E.ContextInfo{Expiration: proto.Uint32(86400)}}}}
		h.f.emit(in)
		if got := text(other); got != 86400 {
			t.Errorf("after a message with a day's timer: expiration %d", got)
		}

		// A group's timer comes from its info, then from its changes.
		if got := text(group); got != 86400 {
			t.Errorf("group with a day's timer: expiration %d", got)
		}
		h.f.emit(&events.GroupInfo{JID: group, Timestamp: time.Now().Add(time.Minute), Ephemeral: &types.GroupEphemeral{IsEphemeral: false}})
		if got := text(group); got != 0 {
			t.Errorf("group after its timer went off: expiration %d", got)
		}

		// The history sync says a chat's timer.
		third := types.NewJID("15558889999", types.DefaultUserServer)
		h.f.emit(&events.HistorySync{Data: &waHistorySync.HistorySync{SyncType: waHistorySync.HistorySync_RECENT.Enum(),
			Conversations: []*waHistorySync.Conversation{{ID: proto.String(third.String()), EphemeralExpiration: proto.Uint32(90 * 86400),
				EphemeralSettingTimestamp: proto.Int64(at.Unix())}}}})
		if got := text(third); got != 90*86400 {
			t.Errorf("chat from the history sync: expiration %d", got)
		}

		// Another engine on the store (a restart) knows the timers.
		_ = h.e.Close()
		h2 := newHarness(t, true, withStore(st))
		if _, err := h2.e.Send(ctx, engine.Outgoing{WireID: engine.WireID("msg_tz"), To: chatID(other), Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		if got := expirationOf(h2.f.sent[0].msg); got != 86400 {
			t.Errorf("after a restart: expiration %d", got)
		}
	})
}
