package gateway

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// A contact that writes by LID is stored in its phone-number chat once the
// mapping is known, but its read receipts go to the LID chat the messages came
// on, not to the phone number (issue 28).
func TestMarkReadAnswersOnTheLIDAddress(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	// Seen by LID before the number was known: in the LID chat, which the
	// store merges into the phone chat once the mapping comes.
	h.f.emit(&events.Message{Info: msgInfo(contactLID, contactLID, "EARLY", false), Message: &waE2E.Message{Conversation: proto.String("first")}})
	h.sink.take()
	h.f.alt[contactLID], h.f.alt[contact] = contact, contactLID
	h.f.emit(&events.Message{Info: msgInfo(contactLID, contactLID, "BYLID", false), Message: &waE2E.Message{Conversation: proto.String("hi")}})
	h.f.emit(&events.Message{Info: msgInfo(contact, contact, "BYPN", false), Message: &waE2E.Message{Conversation: proto.String("hello")}})
	var chats, remotes []string
	for _, ev := range h.sink.take() {
		if ev.Message != nil {
			chat := ev.Message.Chat
			if chat == "" {
				chat = ev.Message.Key.Remote
			}
			chats = append(chats, chat)
			remotes = append(remotes, ev.Message.Key.Remote)
		}
	}
	if diff := cmp.Diff([]string{"15552223333@c.us", "15552223333@c.us"}, chats); diff != "" {
		t.Fatalf("chats of the messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"88882223333@lid", "15552223333@c.us"}, remotes); diff != "" {
		t.Fatalf("keys of the messages: the address they came on (-want +got):\n%s", diff)
	}
	if err := h.e.MarkRead(ctx, "15552223333@c.us"); err != nil {
		t.Fatal(err)
	}
	got := map[string][]types.MessageID{}
	for _, r := range h.f.reads {
		got[r.chat.String()] = append(got[r.chat.String()], r.ids...)
	}
	want := map[string][]types.MessageID{"88882223333@lid": {"BYLID", "EARLY"}, "15552223333@s.whatsapp.net": {"BYPN"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read receipts by address (-want +got):\n%s", diff)
	}
}

func TestChatActions(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	h.f.emit(&events.Message{Info: msgInfo(contact, contact, "IN1", false), Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Mimetype: proto.String("image/jpeg"),
		DirectPath: proto.String("/v/in1"), MediaKey: []byte("key")}}})
	h.sink.take()
	if err := h.e.MarkRead(ctx, "15552223333@c.us"); err != nil {
		t.Fatal(err)
	}
	if len(h.f.reads) != 1 || h.f.reads[0].ids[0] != "IN1" || len(h.f.appState) != 1 {
		t.Errorf("reads %+v, app state %d", h.f.reads, len(h.f.appState))
	}
	if err := h.e.SetArchived(ctx, "15552223333@c.us", true); err != nil {
		t.Fatal(err)
	}
	inKey := engine.Key{Remote: "15552223333@c.us", ID: "IN1"}
	if err := h.e.React(ctx, inKey, "🎉"); err != nil {
		t.Fatal(err)
	}
	if r := h.f.sent[0].msg.GetReactionMessage(); r.GetText() != "🎉" || r.GetKey().GetID() != "IN1" || r.GetKey().GetFromMe() {
		t.Errorf("reaction %v", r)
	}
	if err := h.e.Pin(ctx, inKey, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if p := h.f.sent[1].msg; p.GetPinInChatMessage().GetType() != waE2E.PinInChatMessage_PIN_FOR_ALL || p.GetMessageContextInfo().GetMessageAddOnDurationInSecs() != 86400 {
		t.Errorf("pin %v", p)
	}
	var types_ []engine.EventType
	for _, ev := range h.sink.take() {
		types_ = append(types_, ev.Type)
		if ev.Type == engine.EventReaction && ev.Message != nil {
			t.Error("the account's own reaction carries a sender")
		}
	}
	if diff := cmp.Diff([]engine.EventType{engine.EventChat, engine.EventChat, engine.EventReaction, engine.EventPin}, types_); diff != "" {
		t.Errorf("events: %s", diff)
	}
	h.f.download = []byte("JPEG")
	m, err := h.e.FetchMedia(ctx, inKey)
	if err != nil || readAll(t, m) != "JPEG" || m.MimeType != "image/jpeg" {
		t.Errorf("media %+v %v", m, err)
	}
	if _, err := h.e.FetchMedia(ctx, engine.Key{Remote: "15552223333@c.us", ID: "NOPE"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown media: %v", err)
	}
	if err := h.e.ShowTyping(ctx, "15552223333@c.us", 20*time.Millisecond); err != nil {
		t.Errorf("typing: %v", err)
	}
	h.f.mu.Lock()
	typed := slices.Clone(h.f.presence)
	h.f.mu.Unlock()
	if want := []string{"15552223333@s.whatsapp.net composing", "15552223333@s.whatsapp.net paused"}; !slices.Equal(typed, want) {
		t.Errorf("typing presence = %v, want %v", typed, want)
	}
	nl, err := h.e.CreateNewsletter(ctx, "News", "What is new")
	if err != nil || nl.ID != "120363999@newsletter" || nl.Kind != engine.ChatNewsletter || nl.Invite == "" || nl.Description != "What is new" {
		t.Errorf("newsletter %+v %v", nl, err)
	}
}
