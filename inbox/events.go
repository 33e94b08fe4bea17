package inbox

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/view"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// apply applies what an engine observed to the database (status moves, incoming
// messages) and records the events it causes, inside tx. Applying the same event
// twice changes nothing more than applying it once.
func (h *Inbox) apply(ctx context.Context, tx *ent.Tx, ev engine.Event, sent sentMessages, kept arrivals) error {
	switch ev.Type {
	case engine.EventAck:
		return applyAck(ctx, tx, ev, sent)
	case engine.EventMessage:
		return applyIncoming(ctx, tx, ev, kept)
	case engine.EventReaction:
		if ev.Message == nil { // the account's own reaction
			return applyOwnReaction(ctx, tx, ev)
		}
		return applyMessageChange(ctx, tx, ev)
	case engine.EventPollVote, engine.EventEdited, engine.EventRevoked:
		return applyMessageChange(ctx, tx, ev)
	case engine.EventHistory:
		return applyHistory(ctx, tx, ev, kept)
	case engine.EventChat:
		return applyChat(ctx, tx, ev)
	case engine.EventPin:
		return applyPin(ctx, tx, ev)
	case engine.EventGroup:
		return applyGroupChange(ctx, tx, ev)
	case engine.EventCall:
		return outbox.Record(ctx, tx, wh.EventCallReceived, CallPayload(ev))
	case engine.EventBlock:
		return applyBlock(ctx, tx, ev)
	case engine.EventNewsletter:
		return applyNewsletter(ctx, tx, ev)
	case engine.EventStatus:
		return applyStatus(ctx, tx, ev)
	case engine.EventConnected, engine.EventGone:
		typ := wh.EventSessionConnected
		if ev.Type == engine.EventGone {
			typ = wh.EventSessionDisconnected
		}
		if err := markEngine(ctx, tx, ev); err != nil {
			return err
		}
		return outbox.Record(ctx, tx, typ, map[string]any{"engineId": ev.EngineID, "at": ev.At.UTC()})
	}
	return nil
}

// markEngine records a session change on the engine's row (if the engine has
// one): when it connected or disconnected, and its state. A gateway's host
// writes the gateway's finer state itself, in order, and this event may be
// applied after a later change: so a connection leaves a gateway's state alone,
// and a lost session turns DISCONNECTED only a state it does not explain
// (logged out, replaced, banned, unpaired and pairing stay). A remote engine's
// connection leaves those states alone too: they are what it reported.
func markEngine(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	u := tx.Engine.Update().Where(entengine.ID(ev.EngineID))
	state := tx.Engine.Update().Where(entengine.ID(ev.EngineID))
	if ev.Type == engine.EventConnected {
		u.SetConnectedAt(ev.At)
		// A remote engine reports its session's state in state frames (one may
		// be applied before this event): a connection leaves one it reported.
		state.Where(entengine.KindNEQ(entengine.KindGateway), entengine.StateNotIn(keptOnDisconnect...)).
			SetState(string(engine.StateConnected))
	} else {
		u.SetDisconnectedAt(ev.At)
		state.Where(entengine.StateNotIn(keptOnDisconnect...)).SetState(string(engine.StateDisconnected))
	}
	if err := u.Exec(ctx); err != nil {
		return err
	}
	return state.Exec(ctx)
}

// keptOnDisconnect are the engine states a lost session does not change.
var keptOnDisconnect = []string{string(engine.StateLoggedOut), string(engine.StateConflict),
	string(engine.StateBanned), string(engine.StateUnpaired), string(engine.StatePairing)}

// applyAck moves the message the ack is about. Acks are idempotent and may arrive
// out of order: a move backwards is ignored. sent holds the messages a batch's
// acks are about, read together beforehand (nil: read this one now); the move is
// a compare-and-set, so a row read a moment earlier is as good.
func applyAck(ctx context.Context, tx *ent.Tx, ev engine.Event, sent sentMessages) error {
	key := ev.Key.Serialized()
	m := sent[sentKey(ev.WorkspaceID, key)]
	if m == nil {
		var err error
		forms, err := keyForms(ctx, tx, ev.Key) // an ack by LID of a message sent by number, or the other way
		if err != nil {
			return err
		}
		m, err = tx.Message.Query().Where(message.WaSerializedIn(forms...), message.FromMe(true)).First(ctx)
		if ent.IsNotFound(err) {
			return nil // a message sent outside Switchboard
		} else if err != nil {
			return err
		}
	}
	to := messaging.StatusForAck(ev.Ack)
	var changes []messaging.Change
	if to == messaging.StatusFailed {
		changes = append(changes, messaging.WithReason(ev.Reason))
	}
	if m.EngineID == "" && ev.EngineID != "" {
		// An ack applied before the dispatch recorded its engine: the engine that
		// acks the message is the one that sent it.
		changes = append(changes, withEngine(ev.EngineID))
	}
	next, moved, err := messaging.MoveLatest(ctx, tx, m, to, ev.At, changes...)
	if err == nil && sent != nil {
		sent[sentKey(ev.WorkspaceID, key)] = next // a later ack of the batch starts from here
	}
	if err != nil || !moved || next.ReceivedAt == nil || m.ReceivedAt != nil {
		return err
	}
	// The first ack that proves delivery puts the message in its chat, and its
	// recipient among the contacts (someone the account messaged); later acks
	// (read, played) change nothing there.
	if err := knowContacts(ctx, tx, []*ent.Message{next}); err != nil {
		return err
	}
	return touchChat(ctx, tx, next, false)
}

// withEngine records the engine that sent a message.
func withEngine(engineID string) messaging.Change {
	return func(u *ent.MessageUpdate, next *ent.Message) {
		u.SetEngineID(engineID)
		next.EngineID = engineID
	}
}

// sentMessages are the account's messages that a batch of events acks, by
// workspace and network key.
type sentMessages map[string]*ent.Message

func sentKey(workspaceID, serialized string) string { return workspaceID + "\x00" + serialized }

// readAcked reads, in one query, the account's messages that the acks among
// evs are about: each by its key in the unique index of (workspace_id,
// wa_serialized), whatever the table's statistics (see storage.LookupEach).
func readAcked(ctx context.Context, tx *ent.Tx, evs []engine.Event) (sentMessages, error) {
	var keys [][]string
	for _, ev := range evs {
		if ev.Type == engine.EventAck {
			keys = append(keys, []string{ev.WorkspaceID, ev.Key.Serialized()})
		}
	}
	if len(keys) < 2 {
		return nil, nil // one ack reads its own message
	}
	msgs, err := tx.Message.Query().Where(message.FromMe(true)).
		Modify(storage.LookupEach([]string{message.FieldWorkspaceID, message.FieldWaSerialized}, keys)).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make(sentMessages, len(msgs))
	for _, m := range msgs {
		out[sentKey(m.WorkspaceID, m.WaSerialized)] = m
	}
	return out, nil
}

// applyIncoming stores a message someone sent the account, as the engine's that
// reported it. One row per network message: the same message reported twice
// (under another event id, or by a second engine: a group message both numbers
// of a workspace receive) finds its row and changes nothing, so it stays the
// first engine's.
func applyIncoming(ctx context.Context, tx *ent.Tx, ev engine.Event, kept arrivals) error {
	in := ev.Message
	if in == nil {
		return nil
	}
	serialized := in.Key.Serialized()
	forms, err := keyForms(ctx, tx, in.Key) // the same message seen by LID and by number is stored once
	if err != nil {
		return err
	}
	exists, err := tx.Message.Query().Where(message.WaSerializedIn(forms...)).Exist(ctx)
	if err != nil || exists {
		return err
	}
	to, err := chatOfKey(ctx, tx, in.Key, in.Chat)
	if err != nil {
		return err
	}
	from, err := person(ctx, tx, in.From)
	if err != nil {
		return err
	}
	create := tx.Message.Create().
		SetOrigin(message.OriginIncoming).SetTo(to).SetFrom(from).
		SetSenderName(in.SenderName).SetType(in.Type).SetText(in.Text).
		SetReplyTo(in.QuotedKey).SetStatus(string(messaging.StatusReceived)).SetFromMe(false).
		SetWaID(in.Key.ID).SetWaParticipant(in.Key.Participant).SetWaSerialized(serialized).
		SetWireType(in.WireType()).SetCreatedAt(ev.At).SetReceivedAt(ev.At).
		SetEngineID(ev.EngineID)
	kept.reserved(ev.WorkspaceID, create, serialized)
	m, err := withContent(create, *in).Save(ctx)
	if err != nil {
		return err
	}
	if err := upsertContact(ctx, tx, engine.ContactInfo{ID: from, PushName: in.SenderName}, ev.EngineID); err != nil {
		return err
	}
	if err := touchChat(ctx, tx, m, true); err != nil {
		return err
	}
	data := view.NewChatMessage(m, messaging.AckOf(m))
	if err := outbox.Record(ctx, tx, wh.EventNewMessageReceived, data); err != nil {
		return err
	}
	if in.QuotedKey == "" {
		return nil
	}
	quoted, err := keyFormsOf(ctx, tx, in.QuotedKey)
	if err != nil {
		return err
	}
	mine, err := tx.Message.Query().Where(message.WaSerializedIn(quoted...), message.FromMe(true)).Exist(ctx)
	if err != nil || !mine {
		return err
	}
	return outbox.Record(ctx, tx, wh.EventReplyToMyMessage, data)
}

// messageChange is the data of reaction, poll vote, edit and revoke events.
type messageChange struct {
	MessageKey string    `json:"messageKey"`
	ChatID     string    `json:"chatId"`
	From       string    `json:"from,omitempty"`
	FromMe     bool      `json:"fromMe"`
	Reaction   *string   `json:"reaction,omitempty"`
	Votes      []string  `json:"selectedOptions,omitempty"`
	Text       string    `json:"text,omitempty"`
	At         time.Time `json:"timestamp"`
}

var changeEvents = map[engine.EventType]string{
	engine.EventReaction: wh.EventMessageReaction,
	engine.EventPollVote: wh.EventPollVote,
	engine.EventEdited:   wh.EventMessageEdited,
	engine.EventRevoked:  wh.EventMessageDeletedRevoked,
}

// applyMessageChange records a reaction, vote, edit or revoke of a message; an
// edit or revoke of a stored incoming message also changes its text.
func applyMessageChange(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	chatID, err := person(ctx, tx, ev.Key.Remote)
	if err != nil {
		return err
	}
	data := messageChange{MessageKey: ev.Key.Serialized(), ChatID: chatID, FromMe: ev.Key.FromMe, At: ev.At.UTC()}
	if ev.Message != nil {
		data.From, data.Text = ev.Message.From, ev.Message.Text
	}
	switch ev.Type {
	case engine.EventReaction:
		r := ev.Reaction
		data.Reaction = &r // "" removes a reaction
	case engine.EventPollVote:
		data.Votes = append([]string{}, ev.Votes...)
	}
	switch ev.Type {
	case engine.EventEdited, engine.EventRevoked:
		text := data.Text
		if ev.Type == engine.EventRevoked {
			text = ""
		}
		forms, err := keyForms(ctx, tx, ev.Key)
		if err != nil {
			return err
		}
		u := tx.Message.Update().Where(message.WaSerializedIn(forms...)).SetText(text)
		if ev.Type == engine.EventRevoked {
			u.SetWireType("revoked")
		}
		if _, err := u.Save(ctx); err != nil {
			return err
		}
	}
	return outbox.Record(ctx, tx, changeEvents[ev.Type], data)
}

// groupChange is the data of group events.
type groupChange struct {
	GroupID      string    `json:"groupId"`
	Action       string    `json:"action"`
	Participants []string  `json:"participants,omitempty"`
	By           string    `json:"by,omitempty"`
	Value        string    `json:"value,omitempty"`
	At           time.Time `json:"timestamp"`
}

// GroupEvents maps a group change's action to its event type.
var GroupEvents = map[string]string{
	"joined_via_link":       wh.EventParticipantJoinedViaLink,
	"added":                 wh.EventParticipantAddedByAdmin,
	"left":                  wh.EventParticipantLeftGroup,
	"kicked":                wh.EventParticipantKickedFromGroup,
	"admin_changed":         wh.EventGroupAdminChanged,
	"name_changed":          wh.EventGroupNameChanged,
	"description_changed":   wh.EventGroupDescriptionChanged,
	"message_pinned":        wh.EventGroupMessagePinned,
	engine.GroupJoinRequest: wh.EventGroupJoinRequest,
}

// applyGroupChange stores a group change (see storeGroupChange) and records its
// event, for the actions that have one.
func applyGroupChange(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	g := ev.Group
	if g == nil {
		return nil
	}
	if err := storeGroupChange(ctx, tx, g, ev.At, ev.EngineID); err != nil {
		return err
	}
	typ, ok := GroupEvents[g.Action]
	if !ok {
		return nil
	}
	data := groupChange{GroupID: g.GroupID, Action: g.Action, Participants: g.Participants, By: g.By, Value: g.Value, At: ev.At.UTC()}
	return outbox.Record(ctx, tx, typ, data)
}
