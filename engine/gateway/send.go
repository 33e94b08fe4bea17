package gateway

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// Send implements engine.Engine. The message goes out under the id chosen and
// stored before the send (m.WireID, see engine.WireID: "3EB0" and 18 uppercase
// hex digits, the shape of WhatsApp's own ids), so a retry after a crash sends
// the same message id again, which the recipient's devices take once.
func (e *Engine) Send(ctx context.Context, m engine.Outgoing) (engine.Key, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.Key{}, err
	}
	to, err := parseChat(m.To)
	if err != nil {
		return engine.Key{}, err
	}
	if err := e.checkRecipients(ctx, cl, []types.JID{to}); err != nil {
		return engine.Key{}, err
	}
	if m.WireID == "" {
		return engine.Key{}, fmt.Errorf("%w: no wire id", engine.ErrRejected)
	}
	msg, err := e.build(ctx, cl, to, m)
	if err != nil {
		return engine.Key{}, err
	}
	resp, err := cl.SendMessage(ctx, to, msg, whatsmeow.SendRequestExtra{ID: types.MessageID(m.WireID)})
	if err != nil {
		return engine.Key{}, classifySend(err)
	}
	key := engine.Key{FromMe: true, Remote: m.To, ID: string(resp.ID)}
	if key.ID == "" {
		key.ID = m.WireID
	}
	if m.Type == "poll" {
		e.mem.putPoll(key.Serialized(), m.PollOptions)
	}
	at := resp.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	e.mem.saw(m.To, types.MessageInfo{MessageSource: types.MessageSource{Chat: to, IsFromMe: true}, ID: key.ID, Timestamp: at}, false)
	return key, nil
}

// SendBatch implements engine.BatchSender. WhatsApp takes one message per
// request, so the batch is sent one by one, in order; the first transient
// failure fails the rest of the batch with it (they stay pending).
func (e *Engine) SendBatch(ctx context.Context, ms []engine.Outgoing) []engine.Sent {
	out := make([]engine.Sent, len(ms))
	// One lookup for every recipient of the batch the engine has not checked yet.
	if cl, err := e.ready(); err == nil {
		var tos []types.JID
		for _, m := range ms {
			if j, err := parseChat(m.To); err == nil {
				tos = append(tos, j)
			}
		}
		_ = e.checkRecipients(ctx, cl, tos)
	}
	for i, m := range ms {
		key, err := e.Send(ctx, m)
		out[i] = engine.Sent{Key: key, Err: err}
		if err != nil && !errors.Is(err, engine.ErrRejected) {
			for j := i + 1; j < len(ms); j++ {
				out[j].Err = err
			}
			break
		}
	}
	return out
}

// checkRecipients asks the network, once per phone number and process, whether
// direct recipients are on WhatsApp: a message to a number that is not is
// rejected (engine.ErrRejected) instead of vanishing. It returns the error of
// the first recipient that is not; a failed lookup is transient.
func (e *Engine) checkRecipients(ctx context.Context, cl client, tos []types.JID) error {
	var ask []string
	seen := map[string]bool{}
	for _, j := range tos {
		if j.Server != types.DefaultUserServer || seen[j.User] {
			continue
		}
		seen[j.User] = true
		if _, known := e.mem.onNetwork(j.User); !known {
			ask = append(ask, "+"+j.User)
		}
	}
	if len(ask) > 0 {
		res, err := cl.IsOnWhatsApp(ctx, ask)
		if err != nil {
			return fmt.Errorf("gateway: check recipients: %w", err)
		}
		for _, r := range res {
			e.mem.setOnNetwork(strings.TrimPrefix(r.Query, "+"), r.IsIn)
		}
	}
	for _, j := range tos {
		if on, known := e.mem.onNetwork(j.User); j.Server == types.DefaultUserServer && known && !on {
			return fmt.Errorf("%w: %s is not on WhatsApp", engine.ErrRejected, chatID(j))
		}
	}
	return nil
}

// mentionRE is the inline mention of Switchboard's text: @[Name](<digits>@c.us).
var mentionRE = regexp.MustCompile(`@\[([^\]\n]{1,100})\]\(([0-9]+)@c[.]us\)`)

// mentions rewrites inline mentions to WhatsApp's "@<digits>" and lists the
// mentioned JIDs (from the text and from m.Mentions).
func mentions(text string, extra []string) (string, []string) {
	var jids []string
	add := func(digits string) {
		j := digits + "@" + types.DefaultUserServer
		for _, x := range jids {
			if x == j {
				return
			}
		}
		jids = append(jids, j)
	}
	text = mentionRE.ReplaceAllStringFunc(text, func(s string) string {
		sub := mentionRE.FindStringSubmatch(s)
		add(sub[2])
		return "@" + sub[2]
	})
	for _, m := range extra {
		if j, err := parseChat(m); err == nil && j.Server == types.DefaultUserServer {
			add(j.User)
		}
	}
	return text, jids
}

// contextInfo carries mentions and the quoted message of a reply; nil when
// there are none.
func (e *Engine) contextInfo(cl client, to types.JID, replyTo string, mentioned []string) *waE2E.ContextInfo {
	var ci waE2E.ContextInfo
	used := false
	if len(mentioned) > 0 {
		ci.MentionedJID, used = mentioned, true
	}
	if k, ok := engine.ParseKey(replyTo); ok {
		ci.StanzaID = proto.String(k.ID)
		// The quoted content is not known here; WhatsApp shows the quote from the
		// recipient's own copy of the message.
		ci.QuotedMessage = &waE2E.Message{Conversation: proto.String("")}
		var sender types.JID
		switch {
		case k.FromMe:
			sender = cl.OwnID().ToNonAD()
		case k.Participant != "":
			sender, _ = parseChat(k.Participant)
		default:
			sender, _ = parseChat(k.Remote)
		}
		if !sender.IsEmpty() {
			ci.Participant = proto.String(sender.String())
		}
		if to.Server == types.GroupServer {
			ci.RemoteJID = proto.String(to.String())
		}
		used = true
	}
	if !used {
		return nil
	}
	return &ci
}

// forwarded marks ci (nil: a new one) as the context of a forwarded message
// when it is one; WhatsApp then shows "Forwarded".
func forwarded(ci *waE2E.ContextInfo, is bool) *waE2E.ContextInfo {
	if !is {
		return ci
	}
	if ci == nil {
		ci = &waE2E.ContextInfo{}
	}
	ci.IsForwarded, ci.ForwardingScore = proto.Bool(true), proto.Uint32(1)
	return ci
}

// build turns an outgoing message into its WhatsApp message.
func (e *Engine) build(ctx context.Context, cl client, to types.JID, m engine.Outgoing) (*waE2E.Message, error) {
	text, mentioned := mentions(m.Text, m.Mentions)
	ci := forwarded(e.contextInfo(cl, to, m.ReplyTo, mentioned), m.Forwarded)
	switch m.Type {
	case "text", "":
		if ci == nil && m.LinkPreview == nil {
			return &waE2E.Message{Conversation: proto.String(text)}, nil
		}
		x := &waE2E.ExtendedTextMessage{Text: proto.String(text), ContextInfo: ci}
		if lp := m.LinkPreview; lp != nil {
			x.Title, x.Description = proto.String(lp.Title), proto.String(lp.Description)
			if lp.CanonicalURL != "" {
				x.MatchedText = proto.String(lp.CanonicalURL)
			}
		}
		return &waE2E.Message{ExtendedTextMessage: x}, nil
	case "poll":
		selectable := 1
		if m.PollAllowMultiple {
			selectable = 0 // any number
		}
		msg := cl.BuildPollCreation(m.PollQuestion, m.PollOptions, selectable)
		if ci != nil {
			for _, p := range []*waE2E.PollCreationMessage{msg.GetPollCreationMessage(), msg.GetPollCreationMessageV3()} {
				if p != nil {
					p.ContextInfo = ci
				}
			}
		}
		return msg, nil
	case "media":
		return e.buildMedia(ctx, cl, m, text, ci)
	case engine.TypeLocation:
		return buildLocation(m.Location, ci)
	case engine.TypeVCard:
		return buildContacts(m.Contacts, ci)
	}
	return nil, fmt.Errorf("%w: unknown message type %q", engine.ErrRejected, m.Type)
}

// buildLocation is the WhatsApp message of a location.
func buildLocation(l *engine.Location, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: a location message without its location", engine.ErrRejected)
	}
	loc := &waE2E.LocationMessage{DegreesLatitude: proto.Float64(l.Latitude), DegreesLongitude: proto.Float64(l.Longitude), ContextInfo: ci}
	if l.Name != "" {
		loc.Name = proto.String(l.Name)
	}
	if l.Address != "" {
		loc.Address = proto.String(l.Address)
	}
	return &waE2E.Message{LocationMessage: loc}, nil
}

// buildContacts is the WhatsApp message of contact cards: a contact message for
// one, a contacts array for more (shown as "<n> contacts").
func buildContacts(cards []engine.ContactCard, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	if len(cards) == 0 {
		return nil, fmt.Errorf("%w: a contact card message without cards", engine.ErrRejected)
	}
	msgs := make([]*waE2E.ContactMessage, len(cards))
	for i, c := range cards {
		msgs[i] = &waE2E.ContactMessage{DisplayName: proto.String(c.DisplayName), Vcard: proto.String(c.VCard)}
	}
	if len(msgs) == 1 {
		msgs[0].ContextInfo = ci
		return &waE2E.Message{ContactMessage: msgs[0]}, nil
	}
	return &waE2E.Message{ContactsArrayMessage: &waE2E.ContactsArrayMessage{
		DisplayName: proto.String(fmt.Sprintf("%d contacts", len(msgs))), Contacts: msgs, ContextInfo: ci}}, nil
}
