package gateway

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/switchboardhq/switchboard/engine"
)

// typedStore is a media store whose files have their own content type.
type typedStore map[string]struct{ data, ct string }

func (s typedStore) Get(_ context.Context, u string) ([]byte, string, string, bool, error) {
	f, ok := s[u]
	return []byte(f.data), f.ct, "file", ok, nil
}

// sentMedia is what a test reads of a sent media message: which field of the
// WhatsApp message carries it and how the network will show it.
type sentMedia struct {
	Field    string
	Upload   whatsmeow.MediaType
	Mimetype string
	Caption  string
	PTT      bool
	Gif      bool
}

// mediaOf reads the media of a sent message.
func mediaOf(m *waE2E.Message, up whatsmeow.MediaType) sentMedia {
	s := sentMedia{Upload: up}
	switch {
	case m.GetImageMessage() != nil:
		x := m.GetImageMessage()
		s.Field, s.Mimetype, s.Caption = "image", x.GetMimetype(), x.GetCaption()
	case m.GetStickerMessage() != nil:
		s.Field, s.Mimetype = "sticker", m.GetStickerMessage().GetMimetype()
	case m.GetPtvMessage() != nil:
		x := m.GetPtvMessage()
		s.Field, s.Mimetype, s.Caption, s.Gif = "ptv", x.GetMimetype(), x.GetCaption(), x.GetGifPlayback()
	case m.GetVideoMessage() != nil:
		x := m.GetVideoMessage()
		s.Field, s.Mimetype, s.Caption, s.Gif = "video", x.GetMimetype(), x.GetCaption(), x.GetGifPlayback()
	case m.GetAudioMessage() != nil:
		x := m.GetAudioMessage()
		s.Field, s.Mimetype, s.PTT = "audio", x.GetMimetype(), x.GetPTT()
	case m.GetDocumentMessage() != nil:
		x := m.GetDocumentMessage()
		s.Field, s.Mimetype, s.Caption = "document", x.GetMimetype(), x.GetCaption()
	}
	return s
}

// Every media kind goes out as what it is: a sticker as a sticker, a gif as a
// looping video, a voice note as a push-to-talk audio, a video note as a ptv,
// each uploaded as the media type its keys are derived for.
func TestSendEveryMediaKind(t *testing.T) {
	store := typedStore{
		"https://sb.example/m/pic":   {"JPEG", "image/jpeg"},
		"https://sb.example/m/webp":  {"WEBP", "image/webp"},
		"https://sb.example/m/mp4":   {"MP4", "video/mp4"},
		"https://sb.example/m/ogg":   {"OGG", "audio/ogg; codecs=opus"},
		"https://sb.example/m/mp3":   {"MP3", "audio/mpeg"},
		"https://sb.example/m/pdf":   {"PDF", "application/pdf"},
		"https://sb.example/m/other": {"BIN", "application/octet-stream"},
	}
	tests := []struct {
		kind, url, caption string
		want               sentMedia
	}{
		{"image", "pic", "look", sentMedia{Field: "image", Upload: whatsmeow.MediaImage, Mimetype: "image/jpeg", Caption: "look"}},
		{"sticker", "webp", "", sentMedia{Field: "sticker", Upload: whatsmeow.MediaImage, Mimetype: "image/webp"}},
		{"video", "mp4", "clip", sentMedia{Field: "video", Upload: whatsmeow.MediaVideo, Mimetype: "video/mp4", Caption: "clip"}},
		{"gif", "mp4", "", sentMedia{Field: "video", Upload: whatsmeow.MediaVideo, Mimetype: "video/mp4", Gif: true}},
		{"ptv", "mp4", "ignored", sentMedia{Field: "ptv", Upload: whatsmeow.MediaVideo, Mimetype: "video/mp4"}},
		{"voice", "ogg", "", sentMedia{Field: "audio", Upload: whatsmeow.MediaAudio, Mimetype: "audio/ogg; codecs=opus", PTT: true}},
		{"audio", "mp3", "", sentMedia{Field: "audio", Upload: whatsmeow.MediaAudio, Mimetype: "audio/mpeg"}},
		{"document", "pdf", "the invoice", sentMedia{Field: "document", Upload: whatsmeow.MediaDocument, Mimetype: "application/pdf", Caption: "the invoice"}},
		{"", "other", "", sentMedia{Field: "document", Upload: whatsmeow.MediaDocument, Mimetype: "application/octet-stream"}},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			h := newHarness(t, true, func(c *Config) { c.Media = store })
			out := engine.Outgoing{WireID: engine.WireID(tc.kind), To: "15552223333@c.us", Type: "media",
				MediaKind: tc.kind, MediaURL: "https://sb.example/m/" + tc.url, Text: tc.caption}
			if _, err := h.e.Send(context.Background(), out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, mediaOf(h.f.sent[0].msg, h.f.upTypes[0])); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
		})
	}
}

// A location and contact cards go out as WhatsApp's location, contact and
// contacts-array messages, with the context of a reply; what is sent is
// compared whole.
func TestSendLocationAndContactCards(t *testing.T) {
	ann := "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nTEL:+15550001001\nEND:VCARD"
	bob := "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL:+15550001002\nEND:VCARD"
	reply := &waE2E.ContextInfo{StanzaID: proto.String("ABC"), Participant: proto.String("15552223333@s.whatsapp.net"),
		QuotedMessage: &waE2E.Message{Conversation: proto.String("")}}
	tests := []struct {
		name string
		out  engine.Outgoing
		want *waE2E.Message
	}{
		{"location", engine.Outgoing{Type: engine.TypeLocation, Location: &engine.Location{Latitude: 51.5007, Longitude: -0.1246,
			Name: "Big Ben", Address: "Westminster, London SW1A 0AA"}},
			&waE2E.Message{LocationMessage: &waE2E.LocationMessage{DegreesLatitude: proto.Float64(51.5007),
				DegreesLongitude: proto.Float64(-0.1246), Name: proto.String("Big Ben"), Address: proto.String("Westminster, London SW1A 0AA")}}},
		{"bare location replying", engine.Outgoing{Type: engine.TypeLocation, Location: &engine.Location{Latitude: -33.8568, Longitude: 151.2153},
			ReplyTo: "false_15552223333@c.us_ABC"},
			&waE2E.Message{LocationMessage: &waE2E.LocationMessage{DegreesLatitude: proto.Float64(-33.8568),
				DegreesLongitude: proto.Float64(151.2153), ContextInfo: reply}}},
		{"one card", engine.Outgoing{Type: engine.TypeVCard, Contacts: []engine.ContactCard{{DisplayName: "Ann", VCard: ann}}},
			&waE2E.Message{ContactMessage: &waE2E.ContactMessage{DisplayName: proto.String("Ann"), Vcard: proto.String(ann)}}},
		{"two cards forwarded", engine.Outgoing{Type: engine.TypeVCard, Forwarded: true,
			Contacts: []engine.ContactCard{{DisplayName: "Ann", VCard: ann}, {DisplayName: "Bob", VCard: bob}}},
			&waE2E.Message{ContactsArrayMessage: &waE2E.ContactsArrayMessage{DisplayName: proto.String("2 contacts"),
				Contacts: []*waE2E.ContactMessage{
					{DisplayName: proto.String("Ann"), Vcard: proto.String(ann)},
					{DisplayName: proto.String("Bob"), Vcard: proto.String(bob)}},
				ContextInfo: &waE2E.ContextInfo{IsForwarded: proto.Bool(true), ForwardingScore: proto.Uint32(1)}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			tc.out.WireID, tc.out.To = engine.WireID(tc.name), "15552223333@c.us"
			if _, err := h.e.Send(context.Background(), tc.out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, h.f.sent[0].msg, protocmp.Transform()); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
		})
	}
}

// A location or contact card message without its content is refused for good
// before anything is sent.
func TestSendRefusesEmptyLocationAndCards(t *testing.T) {
	h := newHarness(t, true)
	for _, out := range []engine.Outgoing{{Type: engine.TypeLocation}, {Type: engine.TypeVCard}} {
		out.WireID, out.To = engine.WireID(out.Type), "15552223333@c.us"
		if _, err := h.e.Send(context.Background(), out); !errors.Is(err, engine.ErrRejected) {
			t.Errorf("%s without content: %v, want ErrRejected", out.Type, err)
		}
	}
	if len(h.f.sent) != 0 {
		t.Errorf("sent %d messages", len(h.f.sent))
	}
}
