package gateway

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/switchboardhq/switchboard/engine"
)

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
