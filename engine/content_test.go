package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Validate checks the content of a message of every type: what its type needs,
// and bounds on every field, in live messages and in history alike.
func TestValidateContent(t *testing.T) {
	key := Key{Remote: "15551234567@c.us", ID: "3EB0AA"}
	msg := func(in Incoming) Event {
		in.Key, in.From = key, "15551234567@c.us"
		return Event{Type: EventMessage, Message: &in}
	}
	sum := strings.Repeat("ab", 32)
	tests := []validateCase{
		{"image", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "image", MimeType: "image/jpeg", Size: 10, SHA256: sum, Caption: "pic", Width: 640, Height: 480}}), ""},
		{"media without details (an older engine)", msg(Incoming{Type: "media"}), ""},
		{"video note", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "ptv", Seconds: 12}}), ""},
		{"location", msg(Incoming{Type: TypeLocation, Location: &Location{Latitude: -33.9, Longitude: 151.2, Name: "Opera"}}), ""},
		{"contact cards", msg(Incoming{Type: TypeVCard, Contacts: []ContactCard{{DisplayName: "Ann", VCard: "BEGIN:VCARD\nEND:VCARD"}}}), ""},
		{"unknown", msg(Incoming{Type: TypeUnknown, RawType: "eventMessage"}), ""},
		{"history image", Event{Type: EventHistory, History: &History{Messages: []HistoryMessage{{Incoming: Incoming{Key: key, Type: "media", Media: &MediaInfo{Kind: "image"}}}}}}, ""},

		{"odd media kind", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "hologram"}}), "message.media.kind must be one of [image video gif audio voice document sticker ptv]"},
		{"negative size", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "image", Size: -1}}), "message.media.size must be between 0 and 1099511627776"},
		{"huge width", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "image", Width: 1 << 20}}), "message.media.width must be between 0 and 65536"},
		{"negative duration", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "audio", Seconds: -3}}), "message.media.seconds must be between 0 and 604800"},
		{"bad digest", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "image", SHA256: "xyz"}}), "message.media.sha256 must be 64 lowercase hex digits"},
		{"long file name", msg(Incoming{Type: "media", Media: &MediaInfo{Kind: "document", Filename: strings.Repeat("a", 1025)}}), "message.media.filename is longer than 1024 bytes"},
		{"location without one", msg(Incoming{Type: TypeLocation}), "message.location is missing"},
		{"latitude out of range", msg(Incoming{Type: TypeLocation, Location: &Location{Latitude: 91}}), "message.location.latitude must be between -90 and 90"},
		{"longitude out of range", msg(Incoming{Type: TypeLocation, Location: &Location{Longitude: -180.5}}), "message.location.longitude must be between -180 and 180"},
		{"no cards", msg(Incoming{Type: TypeVCard}), "message.vCards must hold at least one contact card"},
		{"empty vCard", msg(Incoming{Type: TypeVCard, Contacts: []ContactCard{{DisplayName: "Ann"}}}), "message.vCards.0.vcard is missing"},
		{"long raw type", msg(Incoming{Type: TypeUnknown, RawType: strings.Repeat("x", MaxIDLen+1)}), "message.rawType is longer than 256 bytes"},
		{"history location out of range", Event{Type: EventHistory, History: &History{Messages: []HistoryMessage{{Incoming: Incoming{Key: key, Type: TypeLocation, Location: &Location{Latitude: -100}}}}}},
			"history.messages.0.location.latitude must be between -90 and 90"},
	}
	checkReasons(t, tests)
}

// Every message type has its wire type.
func TestIncomingWireType(t *testing.T) {
	card := ContactCard{VCard: "BEGIN:VCARD\nEND:VCARD"}
	got := map[string]string{}
	for name, in := range map[string]Incoming{
		"text": {Type: "text"}, "poll": {Type: "poll"}, "media without details": {Type: "media"},
		"image": {Type: "media", Media: &MediaInfo{Kind: "image"}}, "voice": {Type: "media", Media: &MediaInfo{Kind: "voice"}},
		"ptv": {Type: "media", Media: &MediaInfo{Kind: "ptv"}}, "gif": {Type: "media", Media: &MediaInfo{Kind: "gif"}},
		"location": {Type: TypeLocation}, "one card": {Type: TypeVCard, Contacts: []ContactCard{card}},
		"two cards": {Type: TypeVCard, Contacts: []ContactCard{card, card}}, "unknown": {Type: TypeUnknown},
	} {
		got[name] = in.WireType()
	}
	want := map[string]string{"text": "chat", "poll": "poll_creation", "media without details": "document", "image": "image",
		"voice": "ptt", "ptv": "ptv", "gif": "gif", "location": "location", "one card": "vcard", "two cards": "multi_vcard", "unknown": "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wire types (-want +got):\n%s", diff)
	}
}
