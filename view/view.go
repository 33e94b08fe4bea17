// Package view renders domain records in the JSON shapes of the spec. The REST
// facade answers with them and webhook events carry them as data, so a message looks
// the same wherever a client meets it.
package view

import (
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
)

// Key is the spec's waMessageKey object.
type Key struct {
	FromMe      bool   `json:"fromMe"`
	Remote      string `json:"remote,omitempty"`
	ID          string `json:"id,omitempty"`
	Serialized  string `json:"_serialized,omitempty"`
	Participant string `json:"participant,omitempty"`
}

// Message is the spec's Message object (scheduled or direct send).
type Message struct {
	ID                string                   `json:"id"`
	WaMessageKey      *Key                     `json:"waMessageKey,omitempty"`
	To                string                   `json:"to"`
	Type              string                   `json:"type"`
	Text              string                   `json:"text,omitempty"`
	MediaURL          string                   `json:"mediaUrl,omitempty"`
	MediaKind         string                   `json:"mediaKind,omitempty"`
	PollQuestion      string                   `json:"pollQuestion,omitempty"`
	PollOptions       []string                 `json:"pollOptions,omitempty"`
	PollAllowMultiple *bool                    `json:"pollAllowMultiple,omitempty"`
	Status            string                   `json:"status"`
	SendAt            *time.Time               `json:"sendAt,omitempty"`
	CreatedAt         time.Time                `json:"createdAt"`
	ConfirmedAt       *time.Time               `json:"confirmedAt,omitempty"`
	ReceivedAt        *time.Time               `json:"receivedAt,omitempty"`
	ReadAt            *time.Time               `json:"readAt,omitempty"`
	PlayedAt          *time.Time               `json:"playedAt,omitempty"`
	FailedAt          *time.Time               `json:"failedAt,omitempty"`
	FailureReason     string                   `json:"failureReason,omitempty"`
	Secret            string                   `json:"secret,omitempty"`
	LinkPreview       *switchboard.LinkPreview `json:"linkPreview,omitempty"`
	// CampaignID names the campaign that sent the message (a Switchboard addition).
	CampaignID string `json:"campaignId,omitempty"`
	// EngineID names the engine (number) the message goes or went through: the
	// one it names before it is sent, the one that sent it after (a Switchboard
	// addition).
	EngineID string `json:"engineId,omitempty"`
	// ForwardedFrom is the key of the stored message this one forwards (a
	// Switchboard addition).
	ForwardedFrom string `json:"forwardedFrom,omitempty"`
	// Location is the place a location message shares (a Switchboard addition).
	Location *Location `json:"location,omitempty"`
	// Contacts are the contact cards of a vcard message (a Switchboard addition).
	Contacts []VCard `json:"contacts,omitempty"`
}

// PublicID is the id clients use for m: the queue id of a queued or scheduled
// message, the serialized network key of a direct or incoming one.
func PublicID(m *ent.Message) string {
	if m.Origin != message.OriginScheduled && m.WaSerialized != "" {
		return m.WaSerialized
	}
	return m.ID
}

// MessageKey returns m's network key, or nil before the network has one.
func MessageKey(m *ent.Message) *Key {
	if m.WaSerialized == "" {
		return nil
	}
	k, ok := engine.ParseKey(m.WaSerialized)
	if !ok {
		return nil
	}
	return &Key{FromMe: k.FromMe, Remote: k.Remote, ID: k.ID, Serialized: m.WaSerialized, Participant: k.Participant}
}

// NewMessage renders m as the spec's Message. The network key is shown once the
// network accepted the message (confirmed).
func NewMessage(m *ent.Message) Message {
	v := Message{
		ID: PublicID(m), To: m.To, Type: m.Type, Text: m.Text, MediaURL: m.MediaURL,
		MediaKind: m.MediaKind, PollQuestion: m.PollQuestion, PollOptions: m.PollOptions,
		PollAllowMultiple: m.PollAllowMultiple, Status: m.Status, SendAt: utc(m.SendAt),
		CreatedAt: m.CreatedAt.UTC(), ConfirmedAt: utc(m.ConfirmedAt), ReceivedAt: utc(m.ReceivedAt),
		ReadAt: utc(m.ReadAt), PlayedAt: utc(m.PlayedAt), FailedAt: utc(m.FailedAt),
		FailureReason: m.FailureReason, Secret: m.Secret, LinkPreview: m.LinkPreview, EngineID: m.EngineID,
		ForwardedFrom: m.ForwardedFrom,
	}
	if m.CampaignID != nil {
		v.CampaignID = *m.CampaignID
	}
	c := NewContent(m)
	v.Location, v.Contacts = c.Location, c.VCards
	if m.ConfirmedAt != nil {
		v.WaMessageKey = MessageKey(m)
	}
	return v
}

// ChatMessage is the spec's chat message shape (GET /v1/messages/{id}, latest chats).
type ChatMessage struct {
	WaMessageKey  Key                      `json:"waMessageKey"`
	ChatID        string                   `json:"chatId"`
	From          string                   `json:"from"`
	Author        string                   `json:"author,omitempty"`
	SenderName    string                   `json:"senderName,omitempty"`
	Timestamp     time.Time                `json:"timestamp"`
	Text          string                   `json:"text,omitempty"`
	Type          string                   `json:"type"`
	FromMe        bool                     `json:"fromMe"`
	Ack           int                      `json:"ack"`
	MediaURL      string                   `json:"mediaUrl,omitempty"`
	Filename      string                   `json:"filename,omitempty"`
	LinkPreview   *switchboard.LinkPreview `json:"linkPreview,omitempty"`
	QuotedMessage *QuotedMessage           `json:"quotedMessage,omitempty"`
	// EngineID names the engine (number) that sent or received the message (a
	// Switchboard addition).
	EngineID string `json:"engineId,omitempty"`
	Content
}

// QuotedMessage is the message a chat message replies to.
type QuotedMessage struct {
	WaMessageKey Key    `json:"waMessageKey"`
	Text         string `json:"text,omitempty"`
	Type         string `json:"type,omitempty"`
	Author       string `json:"author,omitempty"`
}

// NewQuotedMessage renders the message a reply quotes: its key, and what the store
// holds of it (q may be nil when the store does not hold it).
func NewQuotedMessage(key string, q *ent.Message) *QuotedMessage {
	k, ok := engine.ParseKey(key)
	if !ok {
		return nil
	}
	v := &QuotedMessage{WaMessageKey: Key{FromMe: k.FromMe, Remote: k.Remote, ID: k.ID, Serialized: key, Participant: k.Participant}}
	if q != nil {
		v.Text, v.Type, v.Author = q.Text, q.Type, q.WaParticipant
		if q.FromMe {
			v.Author = "me"
		} else if v.Author == "" {
			v.Author = q.From
		}
	}
	return v
}

// ChatMessageFields are the message columns NewChatMessage (with its ack, from
// the status, and its quotedMessage, from reply_to) reads: a list read only to
// be rendered in this shape selects no others.
var ChatMessageFields = []string{
	message.FieldTo, message.FieldFrom, message.FieldSenderName, message.FieldCreatedAt,
	message.FieldConfirmedAt, message.FieldText, message.FieldType, message.FieldFromMe,
	message.FieldStatus, message.FieldMediaURL, message.FieldMediaFilename,
	message.FieldLinkPreview, message.FieldWaSerialized, message.FieldWaParticipant,
	message.FieldReplyTo, message.FieldEngineID,
	message.FieldWireType, message.FieldMediaKind, message.FieldMediaMime, message.FieldMediaSize,
	message.FieldMediaSha256, message.FieldMediaWidth, message.FieldMediaHeight, message.FieldMediaSeconds,
	message.FieldLatitude, message.FieldLongitude, message.FieldLocationName, message.FieldLocationAddress,
	message.FieldVcards, message.FieldVcardNames, message.FieldRawType,
}

// NewChatMessage renders m as the spec's chat message. ack is the network ack.
func NewChatMessage(m *ent.Message, ack int) ChatMessage {
	v := ChatMessage{
		ChatID: m.To, From: m.From, SenderName: m.SenderName, Timestamp: m.CreatedAt.UTC(),
		Text: m.Text, Type: m.Type, FromMe: m.FromMe, Ack: ack, MediaURL: m.MediaURL,
		Filename: m.MediaFilename, LinkPreview: m.LinkPreview, EngineID: m.EngineID, Content: NewContent(m),
	}
	if k := MessageKey(m); k != nil {
		v.WaMessageKey = *k
	} else {
		v.WaMessageKey = Key{FromMe: m.FromMe, Remote: m.To}
	}
	if m.ConfirmedAt != nil {
		v.Timestamp = m.ConfirmedAt.UTC()
	}
	if v.From == "" && m.FromMe {
		v.From = "me"
	}
	if m.WaParticipant != "" {
		v.Author = m.WaParticipant
	}
	return v
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
