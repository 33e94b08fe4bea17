package gateway

import (
	"encoding/hex"
	"time"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/switchboardhq/switchboard/engine"
)

// content is what a message carries, in Switchboard's terms.
type content struct {
	typ      string // text, media, poll, location, vcard, unknown; "" for a message with no content
	text     string
	media    *engine.MediaInfo
	location *engine.Location
	contacts []engine.ContactCard
	rawType  string
	poll     []string
	ctx      *waE2E.ContextInfo
}

// fill sets the content fields of in.
func (c content) fill(in *engine.Incoming) {
	in.Type, in.Text, in.Media, in.Location, in.Contacts, in.RawType = c.typ, c.text, c.media, c.location, c.contacts, c.rawType
}

// contentOf classifies a (unwrapped) message. Every kind the network has is
// something: a kind Switchboard does not map is unknown, with its field name
// (eventMessage, ...) as its raw type; only a message without content is "".
func contentOf(m *waE2E.Message) content {
	switch {
	case m.GetConversation() != "":
		return content{typ: "text", text: m.GetConversation()}
	case m.GetExtendedTextMessage() != nil:
		x := m.GetExtendedTextMessage()
		return content{typ: "text", text: x.GetText(), ctx: x.GetContextInfo()}
	case m.GetImageMessage() != nil:
		x := m.GetImageMessage()
		return mediaContent(x.GetContextInfo(), x, engine.MediaInfo{Kind: "image", MimeType: x.GetMimetype(), Caption: x.GetCaption(),
			Size: size(x.GetFileLength()), SHA256: hex.EncodeToString(x.GetFileSHA256()), Width: int(x.GetWidth()), Height: int(x.GetHeight())})
	case m.GetVideoMessage() != nil:
		kind := "video"
		if m.GetVideoMessage().GetGifPlayback() {
			kind = "gif"
		}
		return videoContent(kind, m.GetVideoMessage())
	case m.GetPtvMessage() != nil:
		return videoContent("ptv", m.GetPtvMessage())
	case m.GetAudioMessage() != nil:
		x := m.GetAudioMessage()
		kind := "audio"
		if x.GetPTT() {
			kind = "voice"
		}
		return mediaContent(x.GetContextInfo(), x, engine.MediaInfo{Kind: kind, MimeType: x.GetMimetype(),
			Size: size(x.GetFileLength()), SHA256: hex.EncodeToString(x.GetFileSHA256()), Seconds: int(x.GetSeconds())})
	case m.GetDocumentMessage() != nil:
		x := m.GetDocumentMessage()
		return mediaContent(x.GetContextInfo(), x, engine.MediaInfo{Kind: "document", MimeType: x.GetMimetype(), Caption: x.GetCaption(),
			Filename: x.GetFileName(), Size: size(x.GetFileLength()), SHA256: hex.EncodeToString(x.GetFileSHA256())})
	case m.GetStickerMessage() != nil:
		x := m.GetStickerMessage()
		return mediaContent(x.GetContextInfo(), x, engine.MediaInfo{Kind: "sticker", MimeType: x.GetMimetype(),
			Size: size(x.GetFileLength()), SHA256: hex.EncodeToString(x.GetFileSHA256()), Width: int(x.GetWidth()), Height: int(x.GetHeight())})
	}
	if c, ok := placeOrCards(m); ok {
		return c
	}
	for _, p := range []*waE2E.PollCreationMessage{m.GetPollCreationMessage(), m.GetPollCreationMessageV2(), m.GetPollCreationMessageV3()} {
		if p != nil {
			c := content{typ: "poll", text: p.GetName(), ctx: p.GetContextInfo()}
			for _, o := range p.GetOptions() {
				c.poll = append(c.poll, o.GetOptionName())
			}
			return c
		}
	}
	if raw := rawKind(m); raw != "" {
		return content{typ: engine.TypeUnknown, rawType: raw}
	}
	return content{}
}

// placeOrCards is the content of a location (shared once or live) or of
// contact cards; ok is false for any other message.
func placeOrCards(m *waE2E.Message) (content, bool) {
	switch {
	case m.GetLocationMessage() != nil:
		x := m.GetLocationMessage()
		return content{typ: engine.TypeLocation, ctx: x.GetContextInfo(), location: &engine.Location{
			Latitude: x.GetDegreesLatitude(), Longitude: x.GetDegreesLongitude(), Name: x.GetName(), Address: x.GetAddress()}}, true
	case m.GetLiveLocationMessage() != nil:
		x := m.GetLiveLocationMessage()
		return content{typ: engine.TypeLocation, text: x.GetCaption(), ctx: x.GetContextInfo(), location: &engine.Location{
			Latitude: x.GetDegreesLatitude(), Longitude: x.GetDegreesLongitude(), Live: true}}, true
	case m.GetContactMessage() != nil:
		x := m.GetContactMessage()
		return content{typ: engine.TypeVCard, ctx: x.GetContextInfo(),
			contacts: []engine.ContactCard{{DisplayName: x.GetDisplayName(), VCard: x.GetVcard()}}}, true
	case m.GetContactsArrayMessage() != nil:
		x := m.GetContactsArrayMessage()
		c := content{typ: engine.TypeVCard, text: x.GetDisplayName(), ctx: x.GetContextInfo()}
		for _, card := range x.GetContacts() {
			c.contacts = append(c.contacts, engine.ContactCard{DisplayName: card.GetDisplayName(), VCard: card.GetVcard()})
		}
		return c, true
	}
	return content{}, false
}

func videoContent(kind string, x *waE2E.VideoMessage) content {
	return mediaContent(x.GetContextInfo(), x, engine.MediaInfo{Kind: kind, MimeType: x.GetMimetype(), Caption: x.GetCaption(),
		Size: size(x.GetFileLength()), SHA256: hex.EncodeToString(x.GetFileSHA256()), Width: int(x.GetWidth()), Height: int(x.GetHeight()),
		Seconds: int(x.GetSeconds())})
}

// mediaContent is the content of a media message, downloadable from d: its
// caption is its text, and its reference is d's download keys (refOf).
func mediaContent(ci *waE2E.ContextInfo, d whatsmeow.DownloadableMessage, md engine.MediaInfo) content {
	md.Ref = refOf(d)
	return content{typ: "media", text: md.Caption, media: &md, ctx: ci}
}

// size is a file length the network reports, as engine.MediaInfo keeps it.
func size(n uint64) int64 { return int64(min(n, 1<<40)) }

// notContent are the fields of a message that carry no content of their own:
// keys, envelopes and what messageEvents maps before it looks for content.
var notContent = map[protoreflect.Name]bool{
	"senderKeyDistributionMessage": true, "fastRatchetKeySenderKeyDistributionMessage": true,
	"messageContextInfo": true, "protocolMessage": true, "reactionMessage": true, "encReactionMessage": true,
	"pollUpdateMessage": true, "pinInChatMessage": true, "keepInChatMessage": true,
	"deviceSentMessage": true, "ephemeralMessage": true, "viewOnceMessage": true, "viewOnceMessageV2": true,
	"viewOnceMessageV2Extension": true, "documentWithCaptionMessage": true, "editedMessage": true,
}

// rawKind is the field name of the kind of content m holds (of the lowest
// field number, when it holds several), "" when it holds none.
func rawKind(m *waE2E.Message) string {
	if m == nil {
		return ""
	}
	var found protoreflect.FieldDescriptor
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if !notContent[fd.Name()] && (found == nil || fd.Number() < found.Number()) {
			found = fd
		}
		return true
	})
	if found == nil {
		return ""
	}
	return string(found.Name())
}

// historyOf is a history message of incoming-shaped in with content c.
func historyOf(in engine.Incoming, c content, fromMe bool, at time.Time, ack engine.Ack) engine.HistoryMessage {
	hm := engine.HistoryMessage{Incoming: in, FromMe: fromMe, At: at, Ack: ack, WireType: in.WireType(), Poll: c.poll}
	if md := c.media; md != nil {
		hm.MediaKind, hm.MediaMime, hm.Filename = md.Kind, md.MimeType, md.Filename
	}
	return hm
}
