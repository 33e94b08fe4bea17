package gateway

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	waCommon "go.mau.fi/whatsmeow/proto/waCommon"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	waHistorySync "go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// A contact in LID addressing mode, as a real phone reports it: first by LID
// alone (its own LID chat), then with its number in SenderAlt (the mapping is
// reported once, before the message; the message keeps its LID key and names
// the phone chat), sent from the account's phone with RecipientAlt, and in a
// history sync (the conversation by LID with its PnJID).
func TestLIDAddressedMessagesAndMappings(t *testing.T) {
	h := newHarness(t, true)
	text := func(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }
	mapping := engine.Event{ID: "wa_lid_88882223333@lid_15552223333@c.us", Type: engine.EventHistory,
		History: &engine.History{Contacts: []engine.ContactInfo{{ID: "15552223333@c.us", LID: "88882223333@lid"}}}}
	byLID := func(id string) engine.Key { return engine.Key{Remote: "88882223333@lid", ID: id} }
	steps := []struct {
		name string
		evt  any
		want []engine.Event
	}{
		{"by LID alone: the LID chat", &events.Message{Info: lidInfo(contactLID, types.EmptyJID, h.f.lid, "L1", false), Message: text("one")},
			[]engine.Event{{ID: "wa_msg_false_88882223333@lid_L1", Type: engine.EventMessage, Key: byLID("L1"),
				Message: &engine.Incoming{Key: byLID("L1"), From: "88882223333@lid", SenderName: "Ann", Type: "text", Text: "one"}}}},
		{"with SenderAlt: the mapping, then the message in the phone chat", &events.Message{Info: lidInfo(contactLID, contact, h.f.lid, "L2", false), Message: text("two")},
			[]engine.Event{mapping, {ID: "wa_msg_false_88882223333@lid_L2", Type: engine.EventMessage, Key: byLID("L2"),
				Message: &engine.Incoming{Key: byLID("L2"), Chat: "15552223333@c.us", From: "15552223333@c.us", SenderName: "Ann", Type: "text", Text: "two"}}}},
		{"the mapping is reported once", &events.Message{Info: lidInfo(contactLID, contact, h.f.lid, "L3", false), Message: text("three")},
			[]engine.Event{{ID: "wa_msg_false_88882223333@lid_L3", Type: engine.EventMessage, Key: byLID("L3"),
				Message: &engine.Incoming{Key: byLID("L3"), Chat: "15552223333@c.us", From: "15552223333@c.us", SenderName: "Ann", Type: "text", Text: "three"}}}},
		{"sent from the account's phone with RecipientAlt", &events.Message{Info: lidInfo(contactLID, contact, h.f.lid, "L4", true), Message: text("four")},
			[]engine.Event{{ID: "wa_own_true_88882223333@lid_L4", Type: engine.EventHistory, History: &engine.History{Messages: []engine.HistoryMessage{{
				Incoming: engine.Incoming{Key: engine.Key{FromMe: true, Remote: "88882223333@lid", ID: "L4"}, Chat: "15552223333@c.us",
					From: "15550001111@c.us", SenderName: "Ann", Type: "text", Text: "four"},
				FromMe: true, At: at, Ack: engine.AckServer, WireType: "chat"}}}}}},
		{"a reaction to a message by LID names its LID key", &events.Message{Info: lidInfo(contactLID, contact, h.f.lid, "R1", false),
			Message: &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Key: lidKey("L2", true), Text: proto.String("👍")}}},
			[]engine.Event{{ID: "wa_reaction_false_88882223333@lid_R1", Type: engine.EventReaction, Key: byLID("L2"), Reaction: "👍",
				Message: &engine.Incoming{Key: byLID("R1"), From: "15552223333@c.us", SenderName: "Ann"}}}},
	}
	for _, s := range steps {
		if !h.f.emit(s.evt) {
			t.Fatalf("%s: handler failed", s.name)
		}
		if diff := cmp.Diff(s.want, h.sink.take(), ignoreEventMeta, cmpopts.IgnoreFields(engine.Event{}, "At"), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
	}

	// A history sync of the conversation by LID, with its number.
	h2 := newHarness(t, true)
	hs := &events.HistorySync{Data: &waHistorySync.HistorySync{SyncType: waHistorySync.HistorySync_RECENT.Enum(),
		Conversations: []*waHistorySync.Conversation{{ID: proto.String(contactLID.String()), PnJID: proto.String(contact.String()),
			Messages: []*waHistorySync.HistorySyncMsg{webMsg(contactLID, "H1", false, 1_800_000_000, "old")}}}}}
	if !h2.f.emit(hs) {
		t.Fatal("history: handler failed")
	}
	evs := h2.sink.take()
	if len(evs) != 2 || !cmp.Equal(evs[0].History.Contacts, mapping.History.Contacts) {
		t.Fatalf("history: want the mapping, then the conversation; got %+v", evs)
	}
	got := evs[1].History
	if got.Chats[0].ID != "15552223333@c.us" || got.Messages[0].Key != byLID("H1") || got.Messages[0].Chat != "15552223333@c.us" ||
		got.Coverage[0].ChatID != "15552223333@c.us" {
		t.Errorf("history by LID: chat %s, message %+v, coverage %+v; want the phone chat and the LID key", got.Chats[0].ID, got.Messages[0], got.Coverage)
	}
}

// lidKey is the network's key of a message of the LID chat.
func lidKey(id string, fromMe bool) *waCommon.MessageKey {
	return &waCommon.MessageKey{RemoteJID: proto.String(contactLID.String()), FromMe: proto.Bool(fromMe), ID: proto.String(id)}
}

// Replies, reactions and receipts go to the address the chat uses on the
// network: a reaction to a message that came by LID goes to the LID chat; a
// send to a LID goes to the LID; a send to a number whose LID whatsmeow knows
// goes out by LID (whatsmeow's own choice; the fake does as it does).
func TestActionsGoToTheNetworkAddress(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	h.f.alt[contact] = contactLID
	if err := h.e.React(ctx, engine.Key{Remote: "88882223333@lid", ID: "L2"}, "🎉"); err != nil {
		t.Fatal(err)
	}
	k, err := h.e.Send(ctx, engine.Outgoing{WireID: "3EB0LID1", To: "88882223333@lid", Type: "text", Text: "reply", ReplyTo: "false_88882223333@lid_L2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Send(ctx, engine.Outgoing{WireID: "3EB0PN1", To: "15552223333@c.us", Type: "text", Text: "by number"}); err != nil {
		t.Fatal(err)
	}
	type sent struct{ To, Wire, ReactionRemote string }
	var got []sent
	for _, s := range h.f.sent {
		got = append(got, sent{s.to.String(), s.wire.String(), s.msg.GetReactionMessage().GetKey().GetRemoteJID()})
	}
	want := []sent{
		{"88882223333@lid", "88882223333@lid", "88882223333@lid"},
		{"88882223333@lid", "88882223333@lid", ""},
		{"15552223333@s.whatsapp.net", "88882223333@lid", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sends (-want +got):\n%s", diff)
	}
	if k.Remote != "88882223333@lid" {
		t.Errorf("the key of a send to a LID is %+v; want the LID", k)
	}
	if q := h.f.sent[1].msg.GetExtendedTextMessage().GetContextInfo(); q.GetStanzaID() != "L2" {
		t.Errorf("reply quotes %q", q.GetStanzaID())
	}
}
