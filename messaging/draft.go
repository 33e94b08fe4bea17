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
	// Location is the place a location message shares.
	Location *engine.Location `json:"location,omitempty"`
	// Contacts are the contact cards of a vcard message.
	Contacts []engine.ContactCard `json:"contacts,omitempty"`
	// Typing is how long "typing…" shows before the message goes (0: none).
	Typing time.Duration `json:"typing,omitempty"`
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
		SetWireType(engine.ContentWireType(d.Type, d.MediaKind, len(d.Contacts))).SetMediaMime(d.MediaContentType).
		SetCreatedAt(now)
	if d.PollOptions != nil {
		c.SetPollOptions(d.PollOptions)
	}
	if d.Mentions != nil {
		c.SetMentions(d.Mentions)
	}
	if l := d.Location; l != nil {
		c.SetLatitude(l.Latitude).SetLongitude(l.Longitude).SetLocationName(l.Name).SetLocationAddress(l.Address)
	}
	if len(d.Contacts) > 0 {
		c.SetVcards(CardsOf(d.Contacts)).SetVcardNames(CardNamesOf(d.Contacts))
	}
	if d.Typing > 0 {
		c.SetTypingMs(int(d.Typing.Milliseconds()))
	}
	return c
}

// CardsOf lists the vCards of cards, in order (a message row's vcards).
func CardsOf(cards []engine.ContactCard) []string {
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = c.VCard
	}
	return out
}

// CardNamesOf lists the shown names of cards, in order (a message row's vcard_names).
func CardNamesOf(cards []engine.ContactCard) []string {
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = c.DisplayName
	}
	return out
}

// LocationOf is the place message m shares, nil when it shares none.
func LocationOf(m *ent.Message) *engine.Location {
	if m.Latitude == nil || m.Longitude == nil {
		return nil
	}
	return &engine.Location{Latitude: *m.Latitude, Longitude: *m.Longitude, Name: m.LocationName, Address: m.LocationAddress}
}

// ContactsOf are the contact cards message m shares, nil when it shares none.
func ContactsOf(m *ent.Message) []engine.ContactCard {
	var out []engine.ContactCard
	for i, card := range m.Vcards {
		c := engine.ContactCard{VCard: card}
		if i < len(m.VcardNames) {
			c.DisplayName = m.VcardNames[i]
		}
		out = append(out, c)
	}
	return out
}
