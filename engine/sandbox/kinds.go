package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/engine"
)

// Kinds are the sandbox numbers whose contact answers a message with one of
// each kind of message, by the last four digits of the number: so every kind a
// phone sends can be received without a phone (README, "sandbox").
var Kinds = map[string]engine.Incoming{
	"6601": {Type: "media", Text: "Look at this", Media: &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: "Look at this", Width: 16, Height: 16}},
	"6602": {Type: "media", Media: &engine.MediaInfo{Kind: "voice", MimeType: "audio/ogg; codecs=opus", Seconds: 7}},
	"6603": {Type: "media", Media: &engine.MediaInfo{Kind: "document", MimeType: "application/pdf", Filename: "invoice-0042.pdf"}},
	"6604": {Type: "media", Media: &engine.MediaInfo{Kind: "sticker", MimeType: "image/webp", Width: 512, Height: 512}},
	"6605": {Type: engine.TypeLocation, Location: &engine.Location{Latitude: 51.5007, Longitude: -0.1246, Name: "Big Ben",
		Address: "Westminster, London SW1A 0AA"}},
	"6606": {Type: engine.TypeVCard, Contacts: []engine.ContactCard{{DisplayName: "Sandbox Support",
		VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Sandbox Support\nTEL;type=CELL;waid=15550009999:+1 555 000 9999\nEND:VCARD"}}},
	"6607": {Type: "media", Media: &engine.MediaInfo{Kind: "ptv", MimeType: "video/mp4",
		Width: 480, Height: 480, Seconds: 12}},
	"6608": {Type: engine.TypeVCard, Text: "2 contacts", Contacts: []engine.ContactCard{
		{DisplayName: "Ann", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nTEL:+15550001001\nEND:VCARD"},
		{DisplayName: "Bob", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL:+15550001002\nEND:VCARD"}}},
	"6609": {Type: engine.TypeUnknown, RawType: "eventMessage"},
}

// init sets the size and SHA-256 of each kind's media from the file its
// contact sends (kindMedia), as the network tells them.
func init() {
	for d, in := range Kinds {
		if in.Media != nil {
			data := kindMedia(d)
			sum := sha256.Sum256(data)
			in.Media.Size, in.Media.SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
		}
	}
}

// kindRef is the prefix of the reference (engine.MediaInfo.Ref) of a kind's
// media: the number's last four digits follow.
const kindRef = "kind:"

// kindMedia is the file the contact of the Kinds number ending in digits sends.
func kindMedia(digits string) []byte {
	n, _ := strconv.ParseUint(digits, 10, 64)
	return mediaBytes(Kinds[digits].Media.MimeType, n)
}

// kindSteps is what the network reports after the account wrote m (key) to a
// number of Kinds: its contact's message of that kind, quoting m, after 2.5x.
// None for other numbers.
func (e *Engine) kindSteps(m engine.Outgoing, key engine.Key) []step {
	digits := recipientDigits(numberOf(m.To))
	in, ok := Kinds[digits[max(0, len(digits)-4):]]
	echo := strings.HasSuffix(digits, EchoSuffix)
	if echo {
		in, ok = Echo(m), true
	}
	if !ok || !engine.IsPhoneChat(numberOf(m.To)) {
		return nil
	}
	in.Key = engine.Key{Remote: m.To, ID: "3EB2" + strings.ToUpper(key.ID[max(0, len(key.ID)-9):])}
	in.From, in.SenderName, in.QuotedKey = m.To, "Sandbox "+digits[max(0, len(digits)-4):], key.Serialized()
	if in.Media != nil && !echo { // a Kinds file, downloaded by its reference
		md := *in.Media
		md.Ref = []byte(kindRef + digits[max(0, len(digits)-4):])
		in.Media = &md
	}
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
