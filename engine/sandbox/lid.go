package sandbox

import (
	"strings"

	"github.com/switchboardhq/switchboard/engine"
)

// LIDs in the sandbox: a number ending in 77 first appears by LID only. Its
// chat in the world's history is its LID chat, the address book knows it only
// by LID (no saved name), and the network reveals its number when the account
// writes to it, by LID or by number: 2.4x the ack delay after the send the
// network reports the mapping (a contact with id and lid), and at 2.5x the
// contact replies, by LID, in its phone-number chat. The LID of a sandbox
// number is LIDOf(number): 9, then the number's digits reversed.

// LIDOf is the sandbox's LID of the phone-number chat id phone
// (<digits>@c.us): "9" and the digits reversed, @lid.
func LIDOf(phone string) string {
	return "9" + reversed(recipientDigits(phone)) + "@lid"
}

// reversed is s with its bytes in the other order.
func reversed(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// numberOf is the phone-number chat id of a sandbox LID (LIDOf reversed), or
// jid itself when it is no LID of the sandbox's.
func numberOf(jid string) string {
	if !engine.IsLID(jid) || !strings.HasPrefix(jid, "9") {
		return jid
	}
	user, _, _ := strings.Cut(jid[1:], "@")
	return reversed(user) + "@c.us"
}

// hidesNumber reports whether the sandbox number phone first appears by LID
// only: numbers ending in 77.
func hidesNumber(phone string) bool {
	return engine.IsPhoneChat(phone) && strings.HasSuffix(recipientDigits(phone), "77")
}

// revealSteps is what the network reports after the account wrote m (key) to a
// number that hides behind its LID: the mapping, then the contact's reply by
// LID in its phone-number chat. None for other numbers.
func (e *Engine) revealSteps(m engine.Outgoing, key engine.Key) []step {
	phone := numberOf(m.To)
	if !hidesNumber(phone) {
		return nil
	}
	lid := LIDOf(phone)
	mapping := engine.Event{Type: engine.EventHistory, History: &engine.History{Contacts: []engine.ContactInfo{{ID: phone, LID: lid}}}}
	replyKey := engine.Key{Remote: lid, ID: "3EB1" + strings.ToUpper(key.ID[max(0, len(key.ID)-9):])}
	reply := engine.Incoming{Key: replyKey, Chat: phone, From: phone, SenderName: "Sandbox 0077", Type: "text",
		Text: "Thanks, got it!", QuotedKey: key.Serialized()}
	return []step{
		{2.4, e.event(mapping)},
		{2.5, e.event(engine.Event{Type: engine.EventMessage, Key: replyKey, Message: &reply})},
	}
}

// addressBook is the world's contacts as the phone reports them: a contact
// that hides its number by its LID, without a saved name.
func (w *world) addressBook() []engine.ContactInfo {
	out := make([]engine.ContactInfo, len(w.contacts))
	for i, c := range w.contacts {
		if hidesNumber(c.ID) {
			c = engine.ContactInfo{ID: LIDOf(c.ID), PushName: c.PushName, IsBusiness: c.IsBusiness}
		}
		out[i] = c
	}
	return out
}
