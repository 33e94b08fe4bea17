package inbox

import (
	"cmp"
	"context"
	stdsql "database/sql"
	"errors"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/chatmember"
	"github.com/switchboardhq/switchboard/ent/contact"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
)

// The conversation store: what engines report about chats, contacts and history
// is applied here, inside the transaction of apply, idempotently.

// historyChunk bounds the rows of one insert statement.
const historyChunk = 200

// applyHistory stores a slice of history: chats and contacts the store does not
// hold yet (with their state), group members, messages it does not hold yet (one
// row per network message), each chat's last message and how far back its
// history reaches.
func applyHistory(ctx context.Context, tx *ent.Tx, ev engine.Event, kept arrivals) error {
	h := ev.History
	if h == nil {
		return nil
	}
	for _, c := range h.Chats {
		id, err := person(ctx, tx, c.ID) // a chat by LID whose number is known is the phone chat
		if err != nil {
			return err
		}
		c.ID = id
		if err := upsertChat(ctx, tx, c, true, ev.EngineID); err != nil {
			return err
		}
	}
	for _, c := range h.Contacts {
		if err := upsertContact(ctx, tx, c, ev.EngineID); err != nil {
			return err
		}
		if c.LID != "" {
			if err := learnLID(ctx, tx, c.ID, c.LID, ev.At); err != nil {
				return err
			}
		}
	}
	touched := map[string]bool{}
	var book historyAddresses
	for start := 0; start < len(h.Messages); start += historyChunk {
		part := h.Messages[start:min(start+historyChunk, len(h.Messages))]
		creates, keys, err := historyRows(ctx, tx, &book, part, touched)
		if err != nil {
			return err
		}
		for i, c := range creates {
			c.SetEngineID(ev.EngineID)
			kept.reserved(ev.WorkspaceID, c, keys[i])
		}
		if len(creates) == 0 {
			continue
		}
		err = tx.Message.CreateBulk(creates...).
			OnConflictColumns(message.FieldWorkspaceID, message.FieldWaSerialized).DoNothing().Exec(ctx)
		if err != nil {
			return err
		}
	}
	for jid := range touched {
		if err := ensureChat(ctx, tx, jid, ev.EngineID); err != nil {
			return err
		}
		if err := summarize(ctx, tx, jid); err != nil {
			return err
		}
	}
	for _, c := range h.Coverage {
		id, err := person(ctx, tx, c.ChatID)
		if err != nil {
			return err
		}
		c.ChatID = id
		u := tx.Chat.Update().Where(chat.Jid(c.ChatID)).SetHistoryComplete(c.Complete)
		u.Where(chat.Or(chat.OldestLoadedAtIsNil(), chat.OldestLoadedAtGT(c.OldestAt)))
		if _, err := u.SetOldestLoadedAt(c.OldestAt).Save(ctx); err != nil {
			return err
		}
		if c.Complete {
			if _, err := tx.Chat.Update().Where(chat.Jid(c.ChatID)).SetHistoryComplete(true).Save(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// historyRows are the rows of the messages of a history slice the store does
// not hold under either form of their key (by LID or by phone number), each in
// the chat it goes to, and their keys; touched collects those chats.
func historyRows(ctx context.Context, tx *ent.Tx, book *historyAddresses, part []engine.HistoryMessage, touched map[string]bool) ([]*ent.MessageCreate, []string, error) {
	type resolved struct{ to, from, alt string }
	at := make([]resolved, len(part))
	var alts []string // the other forms of keys, to find messages held under them
	for i, m := range part {
		to, from, forms, err := book.resolve(ctx, tx, m)
		if err != nil {
			return nil, nil, err
		}
		at[i] = resolved{to: to, from: from}
		if len(forms) > 1 {
			at[i].alt = forms[1]
			alts = append(alts, forms[1])
		}
	}
	held := map[string]bool{}
	if len(alts) > 0 {
		found, err := tx.Message.Query().Where(message.WaSerializedIn(alts...)).Select(message.FieldWaSerialized).Strings(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, k := range found {
			held[k] = true
		}
	}
	creates, keys := make([]*ent.MessageCreate, 0, len(part)), make([]string, 0, len(part))
	for i, m := range part {
		if at[i].alt != "" && held[at[i].alt] {
			continue // the same message, held under its other address
		}
		creates = append(creates, historyRow(tx, m, at[i].to, at[i].from))
		keys = append(keys, m.Key.Serialized())
		touched[at[i].to] = true
	}
	return creates, keys, nil
}

// historyRow is the row of a message of a history sync, in the chat to, from
// the sender from.
func historyRow(tx *ent.Tx, m engine.HistoryMessage, to, from string) *ent.MessageCreate {
	status := messaging.StatusReceived
	if m.FromMe {
		status = messaging.StatusForAck(m.Ack)
	}
	typ := storedType(m)
	wire := m.WireType
	if wire == "" {
		wire = m.Incoming.WireType()
	}
	c := tx.Message.Create().SetOrigin(message.OriginHistory).SetTo(to).SetFrom(from).
		SetSenderName(m.SenderName).SetType(typ).SetWireType(wire).SetText(m.Text).
		SetMediaKind(m.MediaKind).SetMediaMime(m.MediaMime).SetMediaFilename(m.Filename).
		SetReplyTo(m.QuotedKey).SetReaction(m.Reaction).SetNillablePinnedUntil(m.PinnedUntil).
		SetStatus(string(status)).SetFromMe(m.FromMe).SetWaID(m.Key.ID).SetWaParticipant(m.Key.Participant).
		SetWaSerialized(m.Key.Serialized()).SetCreatedAt(m.At).SetUpdatedAt(m.At)
	withContent(c, m.Incoming)
	if m.FromMe {
		c.SetConfirmedAt(m.At)
	} else {
		c.SetReceivedAt(m.At)
	}
	if typ == "poll" {
		c.SetPollQuestion(m.Text).SetText("").SetPollOptions(m.Poll)
	}
	return c
}

// upsertChat stores what engineID says of a chat. A chat the store does not hold
// is created; of one it holds, the identity fields are refreshed and the state
// fields are set only when the engine set them and onlyNew is false. The
// members it lists are stored as engineID's.
func upsertChat(ctx context.Context, tx *ent.Tx, c engine.ChatState, onlyNew bool, engineID string) error {
	create := newChat(tx, c)
	if err := create.OnConflictColumns(chat.FieldWorkspaceID, chat.FieldJid).DoNothing().Exec(ctx); err != nil && !isNoRows(err) {
		return err
	}
	if onlyNew && c.Name == "" && c.Description == "" && c.Subscribers == 0 && c.Participants == nil && c.Role == "" && c.Muted == nil {
		return nil // nothing to tell a chat that exists
	}
	u := tx.Chat.Update().Where(chat.Jid(c.ID))
	if c.Name != "" {
		u.SetName(c.Name)
	}
	if c.Description != "" {
		u.SetDescription(c.Description)
	}
	if c.Subscribers > 0 {
		u.SetSubscribers(c.Subscribers)
	}
	if c.Invite != "" {
		u.SetInvite(c.Invite)
	}
	if c.Verification != "" {
		u.SetVerification(c.Verification)
	}
	if c.Role != "" {
		u.SetRole(c.Role)
	}
	u.SetNillableMuted(c.Muted)
	if !onlyNew {
		u.SetNillablePinned(c.Pinned).SetNillableArchived(c.Archived).SetNillableMarkedUnread(c.MarkedUnread).
			SetNillableUnreadCount(c.UnreadCount)
	}
	if c.Participants != nil {
		u.SetParticipantCount(len(c.Participants)).SetJoinApproval(c.JoinApproval)
	}
	if _, err := u.Save(ctx); err != nil {
		return err
	}
	if c.Participants == nil {
		return nil
	}
	if _, err := tx.ChatMember.Delete().Where(chatmember.ChatJid(c.ID)).Exec(ctx); err != nil {
		return err
	}
	creates := make([]*ent.ChatMemberCreate, len(c.Participants))
	for i, p := range c.Participants {
		creates[i] = tx.ChatMember.Create().SetChatJid(c.ID).SetMemberJid(p.ID).SetIsAdmin(p.IsAdmin || p.IsSuperAdmin).
			SetIsSuperAdmin(p.IsSuperAdmin).SetEngineID(engineID)
	}
	return tx.ChatMember.CreateBulk(creates...).Exec(ctx)
}

func kindOf(c engine.ChatState) string {
	if c.Kind != "" {
		return c.Kind
	}
	return engine.ChatKind(c.ID)
}

// newChat is the creation of the chat c describes.
func newChat(tx *ent.Tx, c engine.ChatState) *ent.ChatCreate {
	create := tx.Chat.Create().SetJid(c.ID).SetKind(chat.Kind(kindOf(c))).SetName(c.Name).
		SetOwner(c.Owner).SetDescription(c.Description).SetRestrict(c.Restrict).SetAnnounce(c.Announce).SetJoinApproval(c.JoinApproval).
		SetSubscribers(c.Subscribers).SetInvite(c.Invite).SetVerification(c.Verification).SetRole(c.Role).SetNillableMuted(c.Muted).
		SetNillablePinned(c.Pinned).SetNillableArchived(c.Archived).SetNillableMarkedUnread(c.MarkedUnread).
		SetNillableUnreadCount(c.UnreadCount)
	if c.CreatedAt != nil {
		create.SetCreatedAt(*c.CreatedAt)
	}
	if c.Participants != nil {
		create.SetParticipantCount(len(c.Participants))
	}
	return create
}

// ensureChat creates the chat a message belongs to when the store does not hold it.
func ensureChat(ctx context.Context, tx *ent.Tx, jid, engineID string) error {
	return upsertChat(ctx, tx, engine.ChatState{ID: jid}, true, engineID)
}

// upsertContact stores an address-book entry engineID reported; a known contact
// gets the names the engine knows now, and engineID as the engine that last
// reported it.
func upsertContact(ctx context.Context, tx *ent.Tx, c engine.ContactInfo, engineID string) error {
	if c.ID == "" {
		return nil
	}
	id, err := person(ctx, tx, c.ID)
	if err != nil {
		return err
	}
	c.ID = id
	err = tx.Contact.Create().SetJid(c.ID).SetName(c.Name).SetPushName(c.PushName).SetIsBusiness(c.IsBusiness).
		SetSaved(c.Saved).SetEngineID(engineID).OnConflictColumns(contact.FieldWorkspaceID, contact.FieldJid).DoNothing().Exec(ctx)
	if err != nil && !isNoRows(err) {
		return err
	}
	u := tx.Contact.Update().Where(contact.Jid(c.ID))
	if engineID != "" {
		u.SetEngineID(engineID)
	}
	if c.Name != "" {
		u.SetName(c.Name).SetSaved(true)
	}
	if c.PushName != "" {
		u.SetPushName(c.PushName)
	}
	if c.IsBusiness {
		u.SetIsBusiness(true)
	}
	if c.Changed != "" {
		u.ClearDetailsAt() // the next read of its details asks the network
	}
	if _, err = u.Save(ctx); err != nil || c.Changed == "" {
		return err
	}
	return contactUpdated(ctx, tx, c, engineID)
}

// knowContacts makes the recipients of direct chats, those of messages of the
// viewer's workspace, contacts (the reference's contact book is everyone the
// account messaged), each reported by its message's engine and without names
// when the store has none, in one statement; a contact the store holds is left
// as it is.
func knowContacts(ctx context.Context, tx *ent.Tx, ms []*ent.Message) error {
	seen := map[string]bool{}
	var creates []*ent.ContactCreate
	for _, m := range ms {
		if engine.ChatKind(m.To) != engine.ChatContact || seen[m.To] {
			continue
		}
		seen[m.To] = true
		creates = append(creates, tx.Contact.Create().SetJid(m.To).SetEngineID(m.EngineID))
	}
	if len(creates) == 0 {
		return nil
	}
	err := tx.Contact.CreateBulk(creates...).
		OnConflictColumns(contact.FieldWorkspaceID, contact.FieldJid).DoNothing().Exec(ctx)
	if err != nil && !isNoRows(err) {
		return err
	}
	return nil
}

// summarize sets a chat's last-message summary from its newest stored message,
// and the chat's engine from that message's, when it has one.
func summarize(ctx context.Context, tx *ent.Tx, jid string) error {
	last, err := tx.Message.Query().Where(message.To(jid), messaging.InStore()).
		Order(ent.Desc(message.FieldCreatedAt)).First(ctx)
	if ent.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	text := last.Text
	if text == "" {
		text = last.PollQuestion
	}
	u := tx.Chat.Update().Where(chat.Jid(jid)).SetLastMessageAt(last.CreatedAt).
		SetLastMessageText(text).SetLastMessageFromMe(last.FromMe)
	if last.EngineID != "" {
		u.SetEngineID(last.EngineID)
	}
	_, err = u.Save(ctx)
	return err
}

// touchChat puts m in its chat's summary, in one statement: the chat is made
// when the store does not hold it, counts one more unread message when unread is
// set, and takes m as its last message (and m's engine as its own, when m has
// one: the number the conversation last used) unless it holds a newer one. The upsert
// finds an existing chat through its unique (workspace_id, jid) index whatever
// the plan: as an update by jid, the generic plan PostgreSQL cached while the
// table was nearly empty read every chat of the workspace through another index
// (2,279 buffers, 2.2 ms a call with 7,000 chats).
func touchChat(ctx context.Context, tx *ent.Tx, m *ent.Message, unread bool) error {
	return touchChats(ctx, tx, []*ent.Message{m}, unread)
}

// touchChats is touchChat for messages of the viewer's workspace: a chat of
// several takes the newest as its last message (and counts each as unread), and
// the chats are upserted in one statement for those whose last message names
// its engine and one for the others.
func touchChats(ctx context.Context, tx *ent.Tx, ms []*ent.Message, unread bool) error {
	newest := map[string]*ent.Message{} // by chat
	count := map[string]int{}
	var chats []string
	for _, m := range ms {
		if cur, ok := newest[m.To]; !ok {
			chats = append(chats, m.To)
			newest[m.To] = m
		} else if !m.CreatedAt.Before(cur.CreatedAt) {
			newest[m.To] = m
		}
		count[m.To]++
	}
	var named, unnamed []*ent.ChatCreate
	for _, jid := range chats {
		m := newest[jid]
		create := newChat(tx, engine.ChatState{ID: jid}).SetLastMessageAt(m.CreatedAt).
			SetLastMessageText(cmp.Or(m.Text, m.PollQuestion)).SetLastMessageFromMe(m.FromMe)
		if unread {
			create.SetUnreadCount(count[jid])
		}
		if m.EngineID != "" {
			named = append(named, create.SetEngineID(m.EngineID))
		} else {
			unnamed = append(unnamed, create)
		}
	}
	if err := upsertSummaries(ctx, tx, named, true); err != nil {
		return err
	}
	return upsertSummaries(ctx, tx, unnamed, false)
}

// upsertSummaries inserts the chats of creates, or, for a chat the store holds,
// adds their unread counts and takes their last message (and their engine,
// withEngine) unless the chat holds a newer one; a chat that changes in
// neither way is not written.
func upsertSummaries(ctx context.Context, tx *ent.Tx, creates []*ent.ChatCreate, withEngine bool) error {
	if len(creates) == 0 {
		return nil
	}
	latest := []string{chat.FieldLastMessageAt, chat.FieldLastMessageText, chat.FieldLastMessageFromMe}
	if withEngine {
		latest = append(latest, chat.FieldEngineID)
	}
	// col is a column of the stored chat, new of the one proposed.
	col := func(b *entsql.Builder, c string) string { return b.Quote(chat.Table) + "." + b.Quote(c) }
	proposed := func(b *entsql.Builder, c string) string { return b.Quote("excluded") + "." + b.Quote(c) }
	newer := func(b *entsql.Builder) { // the message is not older than the chat's last message
		last := col(b, chat.FieldLastMessageAt)
		b.WriteString("(" + last + " IS NULL OR " + last + " <= " + proposed(b, chat.FieldLastMessageAt) + ")")
	}
	err := tx.Chat.CreateBulk(creates...).OnConflict(
		entsql.ConflictColumns(chat.FieldWorkspaceID, chat.FieldJid),
		entsql.ResolveWith(func(u *entsql.UpdateSet) {
			u.Set(chat.FieldUnreadCount, entsql.ExprFunc(func(b *entsql.Builder) {
				b.WriteString(col(b, chat.FieldUnreadCount) + " + " + proposed(b, chat.FieldUnreadCount))
			}))
			for _, f := range latest {
				u.Set(f, entsql.ExprFunc(func(b *entsql.Builder) {
					b.WriteString("CASE WHEN ")
					newer(b)
					b.WriteString(" THEN " + proposed(b, f) + " ELSE " + col(b, f) + " END")
				}))
			}
			u.SetExcluded(chat.FieldUpdatedAt)
		}),
		entsql.UpdateWhere(entsql.P(func(b *entsql.Builder) {
			b.WriteString(proposed(b, chat.FieldUnreadCount) + " > 0 OR ")
			newer(b)
		})),
	).Exec(ctx)
	if err != nil && !isNoRows(err) {
		return err
	}
	return nil
}

// WroteTo puts a message the account sends directly in its chat, inside the
// send's transaction: the chat exists as soon as the send is answered (reads
// such as pinned messages find it before any ack is applied), with the message
// as its last unless it holds a newer one. No unread is counted, and the
// delivery's touchChat later finds the same message and changes nothing.
func WroteTo(ctx context.Context, tx *ent.Tx, m *ent.Message) error {
	return touchChat(ctx, tx, m, false)
}

// applyChat applies a change of a chat's state on the phone.
func applyChat(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	if ev.Chat == nil {
		return nil
	}
	c := *ev.Chat
	id, err := person(ctx, tx, c.ID)
	if err != nil {
		return err
	}
	c.ID = id
	return upsertChat(ctx, tx, c, false, ev.EngineID)
}

// applyPin pins or unpins a stored message.
func applyPin(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	forms, err := keyForms(ctx, tx, ev.Key)
	if err != nil {
		return err
	}
	u := tx.Message.Update().Where(message.WaSerializedIn(forms...))
	if ev.Pinned > 0 {
		u.SetPinnedUntil(ev.At.Add(ev.Pinned))
	} else {
		u.ClearPinnedUntil()
	}
	_, err = u.Save(ctx)
	return err
}

// applyOwnReaction stores the account's own reaction to a message ("" removes it).
func applyOwnReaction(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	forms, err := keyForms(ctx, tx, ev.Key)
	if err != nil {
		return err
	}
	_, err = tx.Message.Update().Where(message.WaSerializedIn(forms...)).SetReaction(ev.Reaction).Save(ctx)
	return err
}

// isNoRows reports an upsert that did nothing (some drivers answer it with no rows).
func isNoRows(err error) bool {
	return errors.Is(err, stdsql.ErrNoRows)
}
