package gateway

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// Every kind of message the network has becomes an Incoming with its content:
// one message of each kind goes through the fake, and the message event it
// becomes is compared whole. A kind Switchboard does not map is kept as
// unknown with its raw kind, never dropped.
func TestIncomingMessageOfEveryKind(t *testing.T) {
	sum := bytes.Repeat([]byte{0xab}, 32)
	hexSum := "abababababababababababababababababababababababababababababababab"
	vcard := "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL:+15550009999\nEND:VCARD"
	video := func(gif bool) *waE2E.VideoMessage {
		return &waE2E.VideoMessage{Mimetype: proto.String("video/mp4"), Caption: proto.String("clip"), FileLength: proto.Uint64(2048),
			FileSHA256: sum, Width: proto.Uint32(720), Height: proto.Uint32(1280), Seconds: proto.Uint32(9), GifPlayback: proto.Bool(gif)}
	}
	tests := []struct {
		name string
		msg  *waE2E.Message
		want engine.Incoming // its content fields
	}{
		{"text", &waE2E.Message{Conversation: proto.String("hi")}, engine.Incoming{Type: "text", Text: "hi"}},
		{"extended text", &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("see https://example.com")}},
			engine.Incoming{Type: "text", Text: "see https://example.com"}},
		{"image", &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Mimetype: proto.String("image/jpeg"), Caption: proto.String("pic"),
			FileLength: proto.Uint64(1234), FileSHA256: sum, Width: proto.Uint32(640), Height: proto.Uint32(480)}},
			engine.Incoming{Type: "media", Text: "pic", Media: &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: "pic",
				Size: 1234, SHA256: hexSum, Width: 640, Height: 480}}},
		{"video", &waE2E.Message{VideoMessage: video(false)}, engine.Incoming{Type: "media", Text: "clip", Media: &engine.MediaInfo{
			Kind: "video", MimeType: "video/mp4", Caption: "clip", Size: 2048, SHA256: hexSum, Width: 720, Height: 1280, Seconds: 9}}},
		{"gif", &waE2E.Message{VideoMessage: video(true)}, engine.Incoming{Type: "media", Text: "clip", Media: &engine.MediaInfo{
			Kind: "gif", MimeType: "video/mp4", Caption: "clip", Size: 2048, SHA256: hexSum, Width: 720, Height: 1280, Seconds: 9}}},
		{"video note", &waE2E.Message{PtvMessage: &waE2E.VideoMessage{Mimetype: proto.String("video/mp4"), Seconds: proto.Uint32(30),
			Width: proto.Uint32(480), Height: proto.Uint32(480)}},
			engine.Incoming{Type: "media", Media: &engine.MediaInfo{Kind: "ptv", MimeType: "video/mp4", Width: 480, Height: 480, Seconds: 30}}},
		{"audio", &waE2E.Message{AudioMessage: &waE2E.AudioMessage{Mimetype: proto.String("audio/mpeg"), Seconds: proto.Uint32(200), FileLength: proto.Uint64(99)}},
			engine.Incoming{Type: "media", Media: &engine.MediaInfo{Kind: "audio", MimeType: "audio/mpeg", Size: 99, Seconds: 200}}},
		{"voice note", &waE2E.Message{AudioMessage: &waE2E.AudioMessage{Mimetype: proto.String("audio/ogg; codecs=opus"), Seconds: proto.Uint32(4), PTT: proto.Bool(true)}},
			engine.Incoming{Type: "media", Media: &engine.MediaInfo{Kind: "voice", MimeType: "audio/ogg; codecs=opus", Seconds: 4}}},
		{"document", &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Mimetype: proto.String("application/pdf"), FileName: proto.String("q3.pdf"),
			FileLength: proto.Uint64(4096), FileSHA256: sum}},
			engine.Incoming{Type: "media", Media: &engine.MediaInfo{Kind: "document", MimeType: "application/pdf", Filename: "q3.pdf", Size: 4096, SHA256: hexSum}}},
		{"document with caption", &waE2E.Message{DocumentWithCaptionMessage: &waE2E.FutureProofMessage{Message: &waE2E.Message{
			DocumentMessage: &waE2E.DocumentMessage{Mimetype: proto.String("text/csv"), FileName: proto.String("a.csv"), Caption: proto.String("numbers")}}}},
			engine.Incoming{Type: "media", Text: "numbers", Media: &engine.MediaInfo{Kind: "document", MimeType: "text/csv", Filename: "a.csv", Caption: "numbers"}}},
		{"sticker", &waE2E.Message{StickerMessage: &waE2E.StickerMessage{Mimetype: proto.String("image/webp"), Width: proto.Uint32(512), Height: proto.Uint32(512)}},
			engine.Incoming{Type: "media", Media: &engine.MediaInfo{Kind: "sticker", MimeType: "image/webp", Width: 512, Height: 512}}},
		{"location", &waE2E.Message{LocationMessage: &waE2E.LocationMessage{DegreesLatitude: proto.Float64(-33.8568), DegreesLongitude: proto.Float64(151.2153),
			Name: proto.String("Opera House"), Address: proto.String("Bennelong Point, Sydney")}},
			engine.Incoming{Type: "location", Location: &engine.Location{Latitude: -33.8568, Longitude: 151.2153, Name: "Opera House", Address: "Bennelong Point, Sydney"}}},
		{"live location", &waE2E.Message{LiveLocationMessage: &waE2E.LiveLocationMessage{DegreesLatitude: proto.Float64(48.8584), DegreesLongitude: proto.Float64(2.2945),
			Caption: proto.String("on my way")}},
			engine.Incoming{Type: "location", Text: "on my way", Location: &engine.Location{Latitude: 48.8584, Longitude: 2.2945, Live: true}}},
		{"contact card", &waE2E.Message{ContactMessage: &waE2E.ContactMessage{DisplayName: proto.String("Bob"), Vcard: proto.String(vcard)}},
			engine.Incoming{Type: "vcard", Contacts: []engine.ContactCard{{DisplayName: "Bob", VCard: vcard}}}},
		{"contact cards", &waE2E.Message{ContactsArrayMessage: &waE2E.ContactsArrayMessage{DisplayName: proto.String("2 contacts"), Contacts: []*waE2E.ContactMessage{
			{DisplayName: proto.String("Bob"), Vcard: proto.String(vcard)}, {DisplayName: proto.String("Cy"), Vcard: proto.String("BEGIN:VCARD\nFN:Cy\nEND:VCARD")}}}},
			engine.Incoming{Type: "vcard", Text: "2 contacts", Contacts: []engine.ContactCard{{DisplayName: "Bob", VCard: vcard}, {DisplayName: "Cy", VCard: "BEGIN:VCARD\nFN:Cy\nEND:VCARD"}}}},
		{"poll", &waE2E.Message{PollCreationMessage: &waE2E.PollCreationMessage{Name: proto.String("Lunch?"), Options: []*waE2E.PollCreationMessage_Option{{OptionName: proto.String("Yes")}}}},
			engine.Incoming{Type: "poll", Text: "Lunch?"}},
		{"event (unknown)", &waE2E.Message{EventMessage: &waE2E.EventMessage{Name: proto.String("Party")},
			MessageContextInfo: &waE2E.MessageContextInfo{}},
			engine.Incoming{Type: "unknown", RawType: "eventMessage"}},
		{"group invite (unknown)", &waE2E.Message{GroupInviteMessage: &waE2E.GroupInviteMessage{GroupName: proto.String("G")}},
			engine.Incoming{Type: "unknown", RawType: "groupInviteMessage"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			if !h.f.emit(&events.Message{Info: msgInfo(contact, contact, "K1", false), Message: tc.msg}) {
				t.Fatal("handler failed")
			}
			key := engine.Key{Remote: "15552223333@c.us", ID: "K1"}
			want := tc.want
			want.Key, want.From, want.SenderName = key, "15552223333@c.us", "Ann"
			wantEvs := []engine.Event{{ID: "wa_msg_" + key.Serialized(), Type: engine.EventMessage, At: at, Key: key, Message: &want}}
			got := h.sink.take()
			if diff := cmp.Diff(wantEvs, got, ignoreEventMeta, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for _, ev := range got {
				if err := ev.Validate(); err != nil {
					t.Errorf("the event is invalid: %v", err)
				}
			}
		})
	}
}

// A message with no content (a key distribution alone) is no message.
func TestMessageWithoutContentIsNone(t *testing.T) {
	h := newHarness(t, true)
	msg := &waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{GroupID: proto.String("g")},
		MessageContextInfo: &waE2E.MessageContextInfo{}}
	if !h.f.emit(&events.Message{Info: msgInfo(contact, contact, "K2", false), Message: msg}) {
		t.Fatal("handler failed")
	}
	if got := h.sink.take(); len(got) != 0 {
		t.Errorf("events = %+v, want none", got)
	}
}
