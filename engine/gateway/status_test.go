package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	waCommon "go.mau.fi/whatsmeow/proto/waCommon"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// A text status is an ExtendedTextMessage sent to status@broadcast under its
// wire id, with its colours and font; a chosen audience is refused before
// anything is sent; a deletion is a revoke sent to status@broadcast.
func TestPostStatusSendsToStatusBroadcast(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	key, err := h.e.PostStatus(ctx, engine.StatusPost{WireID: "3EB0AAAAAAAAAAAAAAAAAA", Type: "text", Text: "Open today",
		BackgroundArgb: 0xFF1E88E5, TextArgb: 0xFFFFFFFF, Font: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := (engine.Key{FromMe: true, Remote: "status@broadcast", ID: "3EB0AAAAAAAAAAAAAAAAAA"}); key != want {
		t.Errorf("key %+v, want %+v", key, want)
	}
	if len(h.f.sent) != 1 {
		t.Fatalf("sent %d messages", len(h.f.sent))
	}
	s := h.f.sent[0]
	if s.to != types.StatusBroadcastJID || len(s.extra) != 1 || s.extra[0].ID != "3EB0AAAAAAAAAAAAAAAAAA" {
		t.Errorf("sent to %s with %+v", s.to, s.extra)
	}
	want := &waE2E.ExtendedTextMessage{Text: proto.String("Open today"), BackgroundArgb: proto.Uint32(0xFF1E88E5),
		TextArgb: proto.Uint32(0xFFFFFFFF), Font: waE2E.ExtendedTextMessage_FB_SCRIPT.Enum()}
	if !proto.Equal(want, s.msg.GetExtendedTextMessage()) {
		t.Errorf("message %v, want %v", s.msg, want)
	}

	_, err = h.e.PostStatus(ctx, engine.StatusPost{WireID: "3EB0BBBBBBBBBBBBBBBBBB", Type: "text", Text: "x", Audience: []string{"15552223333@c.us"}})
	if !errors.Is(err, engine.ErrAudience) || !errors.Is(err, engine.ErrRejected) || len(h.f.sent) != 1 {
		t.Errorf("a chosen audience: %v, sent %d", err, len(h.f.sent))
	}

	if err := h.e.RevokeStatus(ctx, "3EB0AAAAAAAAAAAAAAAAAA"); err != nil {
		t.Fatal(err)
	}
	if len(h.f.sent) != 2 || h.f.sent[1].to != types.StatusBroadcastJID {
		t.Fatalf("revoke sent %+v", h.f.sent)
	}
	pm := h.f.sent[1].msg.GetProtocolMessage()
	if pm.GetType() != waE2E.ProtocolMessage_REVOKE || pm.GetKey().GetID() != "3EB0AAAAAAAAAAAAAAAAAA" ||
		pm.GetKey().GetRemoteJID() != "status@broadcast" || !pm.GetKey().GetFromMe() {
		t.Errorf("revoke %v", pm)
	}
}

// A contact's message to status@broadcast is a status event (text with its
// colour and font, media with its caption), its revoke a revoked status; the
// account's own statuses are not reported, and no message event is made.
func TestIncomingStatuses(t *testing.T) {
	h := newHarness(t, true)
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ann := types.NewJID("15552223333", types.DefaultUserServer)
	info := func(id string, fromMe bool) types.MessageInfo {
		src := types.MessageSource{Chat: types.StatusBroadcastJID, Sender: ann, IsFromMe: fromMe}
		if fromMe {
			src.Sender = types.NewJID("15550001111", types.DefaultUserServer)
		}
		return types.MessageInfo{MessageSource: src, ID: id, PushName: "Ann", Timestamp: at}
	}
	h.f.emit(&events.Message{Info: info("S1", false), Message: &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
		Text: proto.String("hello"), BackgroundArgb: proto.Uint32(0xFF000000), Font: waE2E.ExtendedTextMessage_SYSTEM_BOLD.Enum()}}})
	h.f.emit(&events.Message{Info: info("S2", false), Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		Caption: proto.String("look"), Mimetype: proto.String("image/jpeg")}}})
	h.f.emit(&events.Message{Info: info("S3", false), Message: &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_REVOKE.Enum(), Key: &waCommon.MessageKey{RemoteJID: proto.String("status@broadcast"), ID: proto.String("S1")}}}})
	h.f.emit(&events.Message{Info: info("S4", true), Message: &waE2E.Message{Conversation: proto.String("mine")}})
	var got []engine.StatusUpdate
	for _, ev := range h.sink.take() {
		switch ev.Type {
		case engine.EventStatus:
			if !ev.At.Equal(at) || ev.Key != ev.Status.Key || ev.Validate() != nil {
				t.Errorf("event %s at %s: %v", ev.ID, ev.At, ev.Validate())
			}
			st := *ev.Status
			if st.Media != nil {
				st.Media = &engine.MediaInfo{Kind: st.Media.Kind, MimeType: st.Media.MimeType, Caption: st.Media.Caption}
			}
			got = append(got, st)
		case engine.EventMessage:
			t.Errorf("a status became a message: %+v", ev.Message)
		}
	}
	key := func(id string) engine.Key {
		return engine.Key{Remote: "status@broadcast", ID: id, Participant: "15552223333@c.us"}
	}
	want := []engine.StatusUpdate{
		{Key: key("S1"), From: "15552223333@c.us", SenderName: "Ann", Type: "text", Text: "hello", BackgroundArgb: 0xFF000000, Font: 6},
		{Key: key("S2"), From: "15552223333@c.us", SenderName: "Ann", Type: "media", Text: "look",
			Media: &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: "look"}},
		{Key: key("S1"), From: "15552223333@c.us", SenderName: "Ann", Revoked: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
