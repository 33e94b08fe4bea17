package sandbox

import (
	"strings"

	"github.com/switchboardhq/switchboard/engine"
)

// Kinds are the sandbox numbers whose contact answers a message with one of
// each kind of message, by the last four digits of the number: so every kind a
// phone sends can be received without a phone (README, "sandbox").
var Kinds = map[string]engine.Incoming{
	"6601": {Type: "media", Text: "Look at this", Media: &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: "Look at this",
		Size: 48213, SHA256: sandboxSum, Width: 1280, Height: 960}},
	"6602": {Type: "media", Media: &engine.MediaInfo{Kind: "voice", MimeType: "audio/ogg; codecs=opus", Size: 9120, SHA256: sandboxSum, Seconds: 7}},
	"6603": {Type: "media", Media: &engine.MediaInfo{Kind: "document", MimeType: "application/pdf", Filename: "invoice-0042.pdf",
		Size: 183004, SHA256: sandboxSum}},
	"6604": {Type: "media", Media: &engine.MediaInfo{Kind: "sticker", MimeType: "image/webp", Size: 20480, SHA256: sandboxSum, Width: 512, Height: 512}},
	"6605": {Type: engine.TypeLocation, Location: &engine.Location{Latitude: 51.5007, Longitude: -0.1246, Name: "Big Ben",
		Address: "Westminster, London SW1A 0AA"}},
	"6606": {Type: engine.TypeVCard, Contacts: []engine.ContactCard{{DisplayName: "Sandbox Support",
		VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Sandbox Support\nTEL;type=CELL;waid=15550009999:+1 555 000 9999\nEND:VCARD"}}},
	"6607": {Type: "media", Media: &engine.MediaInfo{Kind: "ptv", MimeType: "video/mp4", Size: 802816, SHA256: sandboxSum,
		Width: 480, Height: 480, Seconds: 12}},
	"6608": {Type: engine.TypeVCard, Text: "2 contacts", Contacts: []engine.ContactCard{
		{DisplayName: "Ann", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nTEL:+15550001001\nEND:VCARD"},
		{DisplayName: "Bob", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL:+15550001002\nEND:VCARD"}}},
	"6609": {Type: engine.TypeUnknown, RawType: "eventMessage"},
}

// sandboxSum is the SHA-256 the sandbox reports for its media.
const sandboxSum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// kindSteps is what the network reports after the account wrote m (key) to a
// number of Kinds: its contact's message of that kind, quoting m, after 2.5x.
// None for other numbers.
func (e *Engine) kindSteps(m engine.Outgoing, key engine.Key) []step {
	digits := recipientDigits(numberOf(m.To))
	in, ok := Kinds[digits[max(0, len(digits)-4):]]
	if strings.HasSuffix(digits, EchoSuffix) {
		in, ok = Echo(m), true
	}
	if !ok || !engine.IsPhoneChat(numberOf(m.To)) {
		return nil
	}
	in.Key = engine.Key{Remote: m.To, ID: "3EB2" + strings.ToUpper(key.ID[max(0, len(key.ID)-9):])}
	in.From, in.SenderName, in.QuotedKey = m.To, "Sandbox "+digits[max(0, len(digits)-4):], key.Serialized()
	return []step{{2.5, e.event(engine.Event{Type: engine.EventMessage, Key: in.Key, Message: &in})}}
}

// EchoSuffix ends the sandbox numbers whose contact sends back what it got
// (Echo), quoting it, after 2.5x: so a kind the account sends is seen coming
// in too.
const EchoSuffix = "6600"

// Echo is the message a contact of an EchoSuffix number sends back for m: the
// same content (text, location, contact cards, a poll's question as text,
// media of the same kind, caption and file name).
func Echo(m engine.Outgoing) engine.Incoming {
	in := engine.Incoming{Type: m.Type, Text: m.Text, Location: m.Location, Contacts: m.Contacts}
	switch m.Type {
	case "poll":
		in.Type, in.Text = "text", m.PollQuestion
	case "media":
		in.Media = &engine.MediaInfo{Kind: m.MediaKind, Filename: m.MediaFilename, Caption: m.Text}
		if in.Media.Kind == "" {
			in.Media.Kind = "document"
		}
	}
	return in
}
