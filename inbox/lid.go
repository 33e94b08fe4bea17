package inbox

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/contact"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/outbox"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// LIDs: WhatsApp addresses a user by phone number (<digits>@c.us) or by LID
// (<digits>@lid). The store keeps one chat per person, the phone-number chat
// once the number is known. A contact row holds the mapping (jid the phone
// form, lid the LID); a person known only by LID has a row whose jid is the
// LID. Messages keep the key the network used (wa_serialized); their chat (to)
// and sender (from) are the phone form when the mapping is known.

// phoneOf is the phone-number chat id the store knows for the LID jid; "" when
// jid is no LID or its number is unknown.
func phoneOf(ctx context.Context, tx *ent.Tx, jid string) (string, error) {
	return phoneIn(ctx, tx.Contact, jid)
}

// phoneIn is phoneOf reading contacts.
func phoneIn(ctx context.Context, contacts *ent.ContactClient, jid string) (string, error) {
	if !engine.IsLID(jid) {
		return "", nil
	}
	pns, err := contacts.Query().Where(contact.Lid(jid), contact.JidHasSuffix("@c.us")).
		Limit(1).Select(contact.FieldJid).Strings(ctx)
	if err != nil || len(pns) == 0 {
		return "", err
	}
	return pns[0], nil
}

// lidOf is the LID the store knows for the phone-number chat id jid; "" when
// jid is no phone number or its LID is unknown.
func lidOf(ctx context.Context, tx *ent.Tx, jid string) (string, error) {
	if !engine.IsPhoneChat(jid) {
		return "", nil
	}
	lids, err := tx.Contact.Query().Where(contact.Jid(jid), contact.LidNEQ("")).
		Select(contact.FieldLid).Strings(ctx)
	if err != nil || len(lids) == 0 {
		return "", err
	}
	return lids[0], nil
}

// person is the id the store keeps a user under: the phone form of a LID whose
// number is known, else jid itself.
func person(ctx context.Context, tx *ent.Tx, jid string) (string, error) {
	pn, err := phoneOf(ctx, tx, jid)
	if err != nil || pn == "" {
		return jid, err
	}
	return pn, nil
}

// chatOfKey is the chat a message of key k goes to: the chat the engine named
// (Incoming.Chat), else the phone-number chat of a remote by LID whose number
// the store knows, else the key's remote.
func chatOfKey(ctx context.Context, tx *ent.Tx, k engine.Key, named string) (string, error) {
	if named != "" {
		return named, nil
	}
	return person(ctx, tx, k.Remote)
}

// keyForms are the serialized forms a stored message of key k may have: its
// own, and the same key with the other address of its remote when the store
// knows it (a message stored by LID, then reported by phone number, or the
// other way round, is the same message).
func keyForms(ctx context.Context, tx *ent.Tx, k engine.Key) ([]string, error) {
	other, err := otherAddress(ctx, tx, k.Remote)
	return withAddress(k, other), err
}

// otherAddress is the other form of the user jid the store knows (the phone
// number of a LID, the LID of a phone number); "" when none.
func otherAddress(ctx context.Context, tx *ent.Tx, jid string) (string, error) {
	other, err := phoneOf(ctx, tx, jid)
	if err == nil && other == "" {
		other, err = lidOf(ctx, tx, jid)
	}
	return other, err
}

// withAddress is the serialized key k, and k with the remote other unless
// other is "".
func withAddress(k engine.Key, other string) []string {
	forms := []string{k.Serialized()}
	if other == "" {
		return forms
	}
	alt := k
	alt.Remote = other
	return append(forms, alt.Serialized())
}

// historyAddresses resolves the messages of a history slice: the chat and
// sender each goes to, and the keys the store may hold them under, looking up
// each remote once.
type historyAddresses struct {
	others map[string]string // remote -> its other form, "" for none
}

// resolve is the chat, sender and key forms of m.
func (a *historyAddresses) resolve(ctx context.Context, tx *ent.Tx, m engine.HistoryMessage) (to, from string, forms []string, err error) {
	if a.others == nil {
		a.others = map[string]string{}
	}
	other, ok := a.others[m.Key.Remote]
	if !ok {
		if other, err = otherAddress(ctx, tx, m.Key.Remote); err != nil {
			return "", "", nil, err
		}
		a.others[m.Key.Remote] = other
	}
	to, from = m.Key.Remote, m.From
	if m.Chat != "" {
		to = m.Chat
	} else if engine.IsLID(to) && other != "" {
		to = other
	}
	if engine.IsLID(from) && from == m.Key.Remote && other != "" {
		from = other
	}
	return to, from, withAddress(m.Key, other), nil
}

// keyFormsOf is keyForms of a serialized key; a key that does not parse is
// its only form.
func keyFormsOf(ctx context.Context, tx *ent.Tx, serialized string) ([]string, error) {
	k, ok := engine.ParseKey(serialized)
	if !ok {
		return []string{serialized}, nil
	}
	return keyForms(ctx, tx, k)
}

// learnLID records that the phone-number contact pn is also the LID lid (the
// contact row of pn exists), and merges what the store holds of the person by
// LID into it: the LID-only contact's names, and the LID chat (mergeChat).
func learnLID(ctx context.Context, tx *ent.Tx, pn, lid string, at time.Time) error {
	byLID, err := tx.Contact.Query().Where(contact.Jid(lid)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return err
	}
	u := tx.Contact.Update().Where(contact.Jid(pn)).SetLid(lid)
	if byLID != nil {
		// The names the person had by LID fill what the phone form lacks.
		self, err := tx.Contact.Query().Where(contact.Jid(pn)).Only(ctx)
		if err != nil {
			return err
		}
		if self.Name == "" && byLID.Name != "" {
			u.SetName(byLID.Name)
		}
		if self.PushName == "" && byLID.PushName != "" {
			u.SetPushName(byLID.PushName)
		}
		if byLID.Saved {
			u.SetSaved(true)
		}
		if byLID.IsBusiness {
			u.SetIsBusiness(true)
		}
		if err := tx.Contact.DeleteOne(byLID).Exec(ctx); err != nil {
			return err
		}
	}
	// A LID belongs to one person: another row that claimed it is out of date.
	if _, err := tx.Contact.Update().Where(contact.Lid(lid), contact.JidNEQ(pn)).SetLid("").Save(ctx); err != nil {
		return err
	}
	if _, err := u.Save(ctx); err != nil {
		return err
	}
	return mergeChat(ctx, tx, lid, pn, at)
}

// ChatMerged is the data of the chat.merged event: the LID chat From was
// merged into the phone-number chat To.
type ChatMerged struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"timestamp"`
}

// mergeChat moves the chat lid into the chat pn: its messages (a message the
// phone chat holds already, under its other key form, is kept once: the phone
// chat's row, pinned if either was), its unread count (added; a message
// counted unread in both, once), its state
// (pinned or marked unread if either was, archived only if both were, its name
// if the phone chat has none), then drops the LID chat and records chat.merged.
// Nothing happens when the store holds nothing of the LID chat.
func mergeChat(ctx context.Context, tx *ent.Tx, lid, pn string, at time.Time) error {
	from, err := tx.Chat.Query().Where(chat.Jid(lid)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return err
	}
	moved, twins, err := moveMessages(ctx, tx, lid, pn)
	if err != nil || (from == nil && moved == 0) {
		return err
	}
	fresh, err := tx.Chat.Query().Where(chat.Jid(pn)).Exist(ctx)
	if err != nil {
		return err
	}
	fresh = !fresh
	var engineID string // the number the LID chat was talking on, for a phone chat new here
	if from != nil {
		engineID = from.EngineID
	}
	if err := ensureChat(ctx, tx, pn, engineID); err != nil {
		return err
	}
	if from != nil {
		// A message counted unread in both chats counts once.
		from.UnreadCount = max(0, from.UnreadCount-twins)
		if err := mergeChatState(ctx, tx, from, pn, fresh); err != nil {
			return err
		}
		if err := tx.Chat.DeleteOne(from).Exec(ctx); err != nil {
			return err
		}
	}
	if err := summarize(ctx, tx, pn); err != nil {
		return err
	}
	return outbox.Record(ctx, tx, wh.EventChatMerged, ChatMerged{From: lid, To: pn, At: at.UTC()})
}

// moveMessages moves the messages of the chat lid to the chat pn (their key
// stays: the address the network used) and says how many there were, and how
// many incoming ones it dropped as twins: a message the phone chat holds already
// under the other form of its key is dropped from the LID chat, its pin carried
// over.
func moveMessages(ctx context.Context, tx *ent.Tx, lid, pn string) (moved, twins int, err error) {
	msgs, err := tx.Message.Query().Where(message.To(lid)).All(ctx)
	if err != nil || len(msgs) == 0 {
		return 0, 0, err
	}
	var ids []string
	for _, m := range msgs {
		if m.WaID != "" { // not sent yet: no network key
			ids = append(ids, m.WaID)
		}
	}
	held, err := tx.Message.Query().Where(message.To(pn), message.WaIDIn(ids...)).All(ctx)
	if err != nil {
		return 0, 0, err
	}
	type twinKey struct {
		id, participant string
		fromMe          bool
	}
	byKey := make(map[twinKey]*ent.Message, len(held))
	for _, h := range held {
		byKey[twinKey{h.WaID, h.WaParticipant, h.FromMe}] = h
	}
	for _, m := range msgs {
		twin := byKey[twinKey{m.WaID, m.WaParticipant, m.FromMe}]
		if twin == nil || m.WaID == "" {
			continue
		}
		if m.PinnedUntil != nil && (twin.PinnedUntil == nil || twin.PinnedUntil.Before(*m.PinnedUntil)) {
			if err := tx.Message.UpdateOne(twin).SetPinnedUntil(*m.PinnedUntil).Exec(ctx); err != nil {
				return 0, 0, err
			}
		}
		if err := tx.Message.DeleteOne(m).Exec(ctx); err != nil {
			return 0, 0, err
		}
		if !m.FromMe {
			twins++
		}
	}
	if _, err := tx.Message.Update().Where(message.To(lid), message.From(lid)).SetFrom(pn).Save(ctx); err != nil {
		return 0, 0, err
	}
	_, err = tx.Message.Update().Where(message.To(lid)).SetTo(pn).Save(ctx)
	return len(msgs), twins, err
}

// mergeChatState folds the state of the LID chat from into the chat pn (fresh:
// made for the merge, so it takes the LID chat's archive state as it is).
func mergeChatState(ctx context.Context, tx *ent.Tx, from *ent.Chat, pn string, fresh bool) error {
	to, err := tx.Chat.Query().Where(chat.Jid(pn)).Only(ctx)
	if err != nil {
		return err
	}
	u := tx.Chat.UpdateOne(to).AddUnreadCount(from.UnreadCount).
		SetPinned(to.Pinned || from.Pinned).SetMarkedUnread(to.MarkedUnread || from.MarkedUnread)
	// A chat the account kept in view stays in view.
	u.SetArchived((to.Archived || fresh) && from.Archived)
	if to.Name == "" && from.Name != "" {
		u.SetName(from.Name)
	}
	if o := from.OldestLoadedAt; o != nil && (to.OldestLoadedAt == nil || o.Before(*to.OldestLoadedAt)) {
		u.SetOldestLoadedAt(*o).SetHistoryComplete(from.HistoryComplete)
	}
	return u.Exec(ctx)
}

// Person is the id the store keeps the user jid under: the phone-number chat id
// of a LID whose number is known (its LID chat was merged into that one), else
// jid itself.
func (s Store) Person(ctx context.Context, jid string) (string, error) {
	pn, err := phoneIn(ctx, s.Client.Contact, jid)
	if err != nil || pn == "" {
		return jid, err
	}
	return pn, nil
}

// Contact returns the stored contact id names, by its chat id or by its LID;
// an ent not-found error when there is none.
func (s Store) Contact(ctx context.Context, id string) (*ent.Contact, error) {
	q := s.Client.Contact.Query().Where(contact.Jid(id))
	if engine.IsLID(id) {
		q = s.Client.Contact.Query().Where(contact.Or(contact.Jid(id), contact.Lid(id)))
	}
	return q.First(ctx)
}
