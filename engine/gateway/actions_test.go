package gateway

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
)

// sentKey is what the test checks of a protocol message's key.
type sentKey struct {
	Remote, ID, Participant string
	FromMe                  bool
}

func keyOf(pm *waE2E.ProtocolMessage) sentKey {
	k := pm.GetKey()
	return sentKey{Remote: k.GetRemoteJID(), ID: k.GetID(), Participant: k.GetParticipant(), FromMe: k.GetFromMe()}
}

// An edit goes out as whatsmeow's MESSAGE_EDIT of the account's message, with
// the new text (or caption), and is reported as an EventEdited by the account.
func TestEditSendsTheEditOfTheOwnMessage(t *testing.T) {
	tests := []struct {
		name, text, kind string
		want             func(*waE2E.Message) string
		wantType         string
	}{
		{"text", "fixed", "", func(m *waE2E.Message) string { return m.GetConversation() }, "text"},
		{"mention", "hi @[Ann](15552223333@c.us)", "", func(m *waE2E.Message) string { return m.GetExtendedTextMessage().GetText() }, "text"},
		{"image caption", "new caption", "image", func(m *waE2E.Message) string { return m.GetImageMessage().GetCaption() }, "media"},
		{"video caption", "clip", "video", func(m *waE2E.Message) string { return m.GetVideoMessage().GetCaption() }, "media"},
		{"document caption", "the file", "document", func(m *waE2E.Message) string { return m.GetDocumentMessage().GetCaption() }, "media"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, true)
			key := engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "3EB0MINE"}
			if err := h.e.Edit(ctx, key, tt.text, tt.kind); err != nil {
				t.Fatal(err)
			}
			if len(h.f.sent) != 1 {
				t.Fatalf("sent %d messages, want 1", len(h.f.sent))
			}
			s := h.f.sent[0]
			pm := s.msg.GetEditedMessage().GetMessage().GetProtocolMessage()
			if pm.GetType() != waE2E.ProtocolMessage_MESSAGE_EDIT {
				t.Fatalf("type %v, want MESSAGE_EDIT", pm.GetType())
			}
			if diff := cmp.Diff(sentKey{Remote: "15552223333@s.whatsapp.net", ID: "3EB0MINE", FromMe: true}, keyOf(pm)); diff != "" {
				t.Errorf("edited key (-want +got):\n%s", diff)
			}
			wantText := tt.text
			if tt.name == "mention" {
				wantText = "hi @15552223333"
			}
			if got := tt.want(pm.GetEditedMessage()); got != wantText {
				t.Errorf("new content %q, want %q", got, wantText)
			}
			evs := h.sink.take()
			if len(evs) != 1 || evs[0].Type != engine.EventEdited || evs[0].Key != key || evs[0].Message == nil ||
				evs[0].Message.Text != tt.text || evs[0].Message.Type != tt.wantType || evs[0].Message.From != "15550001111@c.us" {
				t.Errorf("events %+v", evs)
			}
		})
	}
}

func TestEditRefusesSomeoneElsesMessage(t *testing.T) {
	h := newHarness(t, true)
	err := h.e.Edit(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "THEIRS"}, "x", "")
	if !errors.Is(err, engine.ErrRejected) || len(h.f.sent) != 0 {
		t.Errorf("err %v, sent %d", err, len(h.f.sent))
	}
}

// A revoke goes out as whatsmeow's REVOKE protocol message: of the account's
// own message (fromMe, no participant), or as a group admin of a participant's
// message (its sender named); a contact's message in a direct chat cannot be.
func TestRevokeSendsTheRevoke(t *testing.T) {
	tests := []struct {
		name    string
		key     engine.Key
		want    sentKey
		wantErr bool
	}{
		{"own", engine.Key{FromMe: true, Remote: "15552223333@c.us", ID: "MINE"},
			sentKey{Remote: "15552223333@s.whatsapp.net", ID: "MINE", FromMe: true}, false},
		{"own in group", engine.Key{FromMe: true, Remote: "1203630001@g.us", ID: "MINEG"},
			sentKey{Remote: "1203630001@g.us", ID: "MINEG", FromMe: true}, false},
		{"participant's as admin", engine.Key{Remote: "1203630001@g.us", ID: "THEIRS", Participant: "15552223333@c.us"},
			sentKey{Remote: "1203630001@g.us", ID: "THEIRS", Participant: "15552223333@s.whatsapp.net"}, false},
		{"contact's in a direct chat", engine.Key{Remote: "15552223333@c.us", ID: "THEIRS"}, sentKey{}, true},
		{"participant's, not as admin", engine.Key{Remote: "1203630002@g.us", ID: "THEIRS", Participant: "15552223333@c.us"}, sentKey{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, true)
			me := types.NewJID("15550001111", types.DefaultUserServer)
			for g, admin := range map[string]bool{"1203630001": true, "1203630002": false} {
				j := types.NewJID(g, types.GroupServer)
				h.f.groups[j] = &types.GroupInfo{JID: j, Participants: []types.GroupParticipant{{JID: me, IsAdmin: admin}}}
			}
			err := h.e.Revoke(context.Background(), tt.key)
			if tt.wantErr {
				if !errors.Is(err, engine.ErrRejected) || len(h.f.sent) != 0 {
					t.Fatalf("err %v, sent %d; want rejected, none sent", err, len(h.f.sent))
				}
				return
			}
			if err != nil || len(h.f.sent) != 1 {
				t.Fatalf("err %v, sent %d", err, len(h.f.sent))
			}
			pm := h.f.sent[0].msg.GetProtocolMessage()
			if pm.GetType() != waE2E.ProtocolMessage_REVOKE {
				t.Fatalf("type %v, want REVOKE", pm.GetType())
			}
			if diff := cmp.Diff(tt.want, keyOf(pm)); diff != "" {
				t.Errorf("revoked key (-want +got):\n%s", diff)
			}
			evs := h.sink.take()
			if len(evs) != 1 || evs[0].Type != engine.EventRevoked || evs[0].Key != tt.key {
				t.Errorf("events %+v", evs)
			}
		})
	}
}

func TestSetChatPresence(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	for _, s := range engine.ChatPresences {
		if err := h.e.SetChatPresence(ctx, "15552223333@c.us", s); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.e.SetChatPresence(ctx, "15552223333@c.us", "dancing"); !errors.Is(err, engine.ErrRejected) {
		t.Errorf("unknown presence: %v", err)
	}
	h.f.mu.Lock()
	got := slices.Clone(h.f.presence)
	h.f.mu.Unlock()
	want := []string{"15552223333@s.whatsapp.net composing", "15552223333@s.whatsapp.net composing audio", "15552223333@s.whatsapp.net paused"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("presence (-want +got):\n%s", diff)
	}
}

// A forwarded message carries WhatsApp's forwarded context.
func TestSendMarksAForwardedMessage(t *testing.T) {
	h := newHarness(t, true)
	_, err := h.e.Send(context.Background(), engine.Outgoing{WireID: "3EB0FWD", To: "15552223333@c.us", Type: "text", Text: "fwd", Forwarded: true})
	if err != nil {
		t.Fatal(err)
	}
	x := h.f.sent[0].msg.GetExtendedTextMessage()
	if x.GetText() != "fwd" || !x.GetContextInfo().GetIsForwarded() || x.GetContextInfo().GetForwardingScore() != 1 {
		t.Errorf("forwarded message %v", h.f.sent[0].msg)
	}
}
