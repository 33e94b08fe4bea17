package messaging

import (
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
)

// MaxText is the most characters (runes) a message's text may have: the bound of
// the text an API request gives and of a campaign's text after substitution.
const MaxText = 4096

// Draft is a validated, normalized message about to be stored: what the API's
// send and schedule requests and a campaign's step make alike. Media bytes are
// already stored; MediaURL names them.
type Draft struct {
	To                string     `json:"to"`
	Type              string     `json:"type"`
	Text              string     `json:"text,omitempty"`
	MediaURL          string     `json:"mediaUrl,omitempty"`
	MediaContentType  string     `json:"mediaContentType,omitempty"`
	MediaKind         string     `json:"mediaKind,omitempty"`
	MediaFilename     string     `json:"mediaFilename,omitempty"`
	PollQuestion      string     `json:"pollQuestion,omitempty"`
	PollOptions       []string   `json:"pollOptions,omitempty"`
	PollAllowMultiple *bool      `json:"pollAllowMultiple,omitempty"`
	SendAt            *time.Time `json:"sendAt,omitempty"`
	ReplyTo           string     `json:"replyTo,omitempty"`
	Secret            string     `json:"secret,omitempty"`
	Mentions          []string   `json:"mentions,omitempty"`
}

// NewMessage builds, on client, the message d describes, with id, of origin, made
// at now; its wire type follows from its type and media kind. The caller adds
// what is its own (a campaign's ids) and stores it with Queue or QueueOne.
func NewMessage(client *ent.Client, d *Draft, origin message.Origin, id string, now time.Time) *ent.MessageCreate {
	c := client.Message.Create().SetID(id).SetOrigin(origin).SetTo(d.To).SetType(d.Type).
		SetText(d.Text).SetMediaURL(d.MediaURL).SetMediaKind(d.MediaKind).
		SetMediaFilename(d.MediaFilename).SetPollQuestion(d.PollQuestion).
		SetNillablePollAllowMultiple(d.PollAllowMultiple).SetNillableSendAt(d.SendAt).
		SetReplyTo(d.ReplyTo).SetSecret(d.Secret).
		SetWireType(engine.WireType(d.Type, d.MediaKind)).SetMediaMime(d.MediaContentType).
		SetCreatedAt(now)
	if d.PollOptions != nil {
		c.SetPollOptions(d.PollOptions)
	}
	if d.Mentions != nil {
		c.SetMentions(d.Mentions)
	}
	return c
}
