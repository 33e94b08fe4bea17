package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	waCommon "go.mau.fi/whatsmeow/proto/waCommon"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// handle is the engine's whatsmeow event handler. It returns false when the
// sink did not take what the event became; whatsmeow then does not acknowledge
// the event to the server, which delivers it again.
func (e *Engine) handle(cl client, evt any) bool {
	if e.client() != cl {
		return true // a client replaced after a logout
	}
	ctx := context.Background()
	if ok, session := e.sessionEvent(ctx, cl, evt); session {
		return ok
	}
	if !e.conversationEvent(ctx, cl, evt) {
		e.sinkRefused() // reconnect soon: the network redelivers it then
		return false
	}
	return true
}

// sessionEvent applies an event about the session itself (pairing, connection,
// bans and locks) to the engine's state, and reports a connection's change when
// the engine reports them. session is false for any other event.
func (e *Engine) sessionEvent(ctx context.Context, cl client, evt any) (ok, session bool) {
	switch v := evt.(type) {
	case *events.QR:
		e.onQR(cl, v)
	case *events.PairSuccess:
		e.onPaired(v)
	case *events.PairError:
		e.setState(func(s *State) { s.LastError = "pairing failed: " + v.Error.Error() })
	case *events.Connected:
		return e.onConnected(ctx, cl), true
	case *events.Disconnected:
		return e.onDisconnected(ctx), true
	case *events.StreamReplaced:
		e.onReplaced() // retried a few times (recovery.go)
	case *events.LoggedOut:
		e.loggedOut(cl, "logged out by the phone: "+v.Reason.String())
	case *events.TemporaryBan:
		until := time.Now().Add(v.Expire)
		e.setState(func(s *State) {
			s.Status, s.Connected, s.BannedUntil, s.BanReason = StatusBanned, false, &until, v.String()
		})
		e.startConnecting() // waits out the ban, then connects again
	case *events.ConnectFailure:
		e.setState(func(s *State) { s.LastError = fmt.Sprintf("connect failure %d: %s", int(v.Reason), v.Message) })
	case *events.ClientOutdated:
		e.setState(func(s *State) { s.LastError = "the network says this client is outdated (update whatsmeow)" })
	case *events.NotifyAccountReachoutTimelock:
		e.setState(func(s *State) {
			if v.IsActive && v.TimeEnforcementEnds.After(time.Now()) {
				until := v.TimeEnforcementEnds.Time
				s.ReachoutTimelockedUntil, s.ReachoutEnforcement = &until, v.EnforcementType
			} else {
				s.ReachoutTimelockedUntil, s.ReachoutEnforcement = nil, ""
			}
		})
	default:
		return true, false
	}
	return true, true
}

// onQR keeps a batch of QR codes to show, wakes those waiting for one, and
// expires the batch once its last code has lived.
func (e *Engine) onQR(cl client, v *events.QR) {
	e.mu.Lock()
	e.qr, e.qrAt = append([]string(nil), v.Codes...), time.Now()
	e.qrBatch++
	batch := e.qrBatch
	close(e.qrWake)
	e.qrWake = make(chan struct{})
	e.mu.Unlock()
	e.setState(func(s *State) { s.Status = StatusPairing })
	life := qrFirst + time.Duration(max(len(v.Codes)-1, 0))*qrNext
	time.AfterFunc(life, func() { e.qrExpired(cl, batch) })
}

// onPaired drops the QR codes and records the paired device, connecting.
func (e *Engine) onPaired(v *events.PairSuccess) {
	e.mu.Lock()
	e.qr = nil
	close(e.qrWake)
	e.qrWake = make(chan struct{})
	e.mu.Unlock()
	e.setState(func(s *State) {
		s.Status, s.DeviceJID, s.Me, s.LastError = StatusConnecting, v.ID.String(), chatID(v.ID), ""
	})
}

// onConnected records the session online (and a ban that is over as lifted)
// and reports the connection when the engine reports session events.
func (e *Engine) onConnected(ctx context.Context, cl client) bool {
	own := cl.OwnID()
	e.setState(func(s *State) {
		s.Status, s.Connected, s.LastError = StatusConnected, true, ""
		if !own.IsEmpty() {
			s.DeviceJID, s.Me = own.String(), chatID(own)
		}
		if s.BannedUntil != nil && time.Now().After(*s.BannedUntil) {
			s.BannedUntil, s.BanReason = nil, ""
		}
	})
	if e.cfg.SessionEvents {
		return e.report(ctx, engine.Event{ID: fmt.Sprintf("wa_conn_%s_%d", e.cfg.EngineID, time.Now().UnixNano()), Type: engine.EventConnected})
	}
	return true
}

// onDisconnected records the session offline and reports the loss of a
// connection that was up, when the engine reports session events.
func (e *Engine) onDisconnected(ctx context.Context) bool {
	was := e.State().Connected
	e.setState(func(s *State) {
		s.Connected = false
		if s.Status == StatusConnected || s.Status == StatusConnecting {
			s.Status = StatusDisconnected
		}
	})
	if e.cfg.SessionEvents && was {
		return e.report(ctx, engine.Event{ID: fmt.Sprintf("wa_gone_%s_%d", e.cfg.EngineID, time.Now().UnixNano()), Type: engine.EventGone})
	}
	return true
}

// conversationEvent reports what an event says of messages, chats, groups and
// contacts to the sink; other events are ignored.
func (e *Engine) conversationEvent(ctx context.Context, cl client, evt any) bool {
	switch v := evt.(type) {
	case *events.Receipt:
		return e.report(ctx, e.receiptEvents(ctx, cl, v)...)
	case *events.Message:
		return e.report(ctx, e.messageEvents(ctx, cl, v)...)
	case *events.HistorySync:
		return e.onHistory(ctx, cl, v)
	case *events.MediaRetry:
		e.retries.deliver(v)
		return true
	case *events.GroupInfo:
		return e.report(ctx, e.groupInfoEvents(ctx, cl, v)...)
	case *events.JoinedGroup:
		return e.report(ctx, e.joinedEvents(ctx, cl, v)...)
	case *events.Blocklist:
		return e.report(ctx, e.blocklistEvents(ctx, cl, v)...)
	case *events.Archive:
		a := v.Action.GetArchived()
		return e.report(ctx, e.chatEvent(ctx, cl, v.JID, v.Timestamp, "archive", &engine.ChatState{Archived: &a}))
	case *events.Pin:
		p := v.Action.GetPinned()
		return e.report(ctx, e.chatEvent(ctx, cl, v.JID, v.Timestamp, "pin", &engine.ChatState{Pinned: &p}))
	case *events.MarkChatAsRead:
		if v.Action.GetRead() {
			zero, no := 0, false
			return e.report(ctx, e.chatEvent(ctx, cl, v.JID, v.Timestamp, "read", &engine.ChatState{UnreadCount: &zero, MarkedUnread: &no}))
		}
		yes := true
		return e.report(ctx, e.chatEvent(ctx, cl, v.JID, v.Timestamp, "unread", &engine.ChatState{MarkedUnread: &yes}))
	case *events.Contact:
		c := engine.ContactInfo{ID: e.pnChatID(ctx, cl, v.JID, types.EmptyJID), Name: v.Action.GetFullName(), Saved: true}
		if c.Name == "" {
			c.Name = v.Action.GetFirstName()
		}
		return e.report(ctx, engine.Event{ID: "wa_contact_" + c.ID + "_" + fmt.Sprint(v.Timestamp.Unix()), Type: engine.EventHistory,
			At: v.Timestamp, History: &engine.History{Contacts: []engine.ContactInfo{c}}})
	case *events.CallOffer, *events.CallOfferNotice:
		return e.report(ctx, e.callEvent(ctx, cl, v))
	case *events.PushName:
		c := engine.ContactInfo{ID: e.pnChatID(ctx, cl, v.JID, v.JIDAlt), PushName: v.NewPushName}
		if v.OldPushName != "" { // a change, not the first sighting
			c.Changed = engine.ContactPushName
		}
		return e.report(ctx, engine.Event{ID: "wa_pushname_" + c.ID + "_" + digest(v.NewPushName), Type: engine.EventHistory,
			History: &engine.History{Contacts: []engine.ContactInfo{c}}})
	}
	if ev, ok := e.contactChange(ctx, cl, evt); ok {
		return e.report(ctx, ev)
	}
	if ev, ok := newsletterEvents(evt); ok {
		return e.report(ctx, ev)
	}
	return true
}

// chatEvent is an EventChat about the chat j with the state fields of cs.
func (e *Engine) chatEvent(ctx context.Context, cl client, j types.JID, at time.Time, what string, cs *engine.ChatState) engine.Event {
	cs.ID = e.pnChatID(ctx, cl, j, types.EmptyJID)
	cs.Kind = engine.ChatKind(cs.ID)
	return engine.Event{ID: fmt.Sprintf("wa_chat_%s_%s_%d", cs.ID, what, at.UnixNano()), Type: engine.EventChat, At: at, Chat: cs}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// receiptEvents maps a receipt to acks: delivered -> AckDevice, read -> AckRead,
// played -> AckPlayed. Receipts sent by the account's own devices (sender,
// read-self, played-self, or any receipt whose sender is the account) and the
// other receipt types (retry, server-error, inactive, peer_msg, hist_sync) are
// not statuses of an outgoing message and are ignored.
func (e *Engine) receiptEvents(ctx context.Context, cl client, r *events.Receipt) []engine.Event {
	if r.IsFromMe || isMe(cl, r.Sender) {
		return nil
	}
	var ack engine.Ack
	switch r.Type {
	case types.ReceiptTypeDelivered:
		ack = engine.AckDevice
	case types.ReceiptTypeRead:
		ack = engine.AckRead
	case types.ReceiptTypePlayed:
		ack = engine.AckPlayed
	default:
		return nil
	}
	remote := chatID(r.Chat)
	if !r.IsGroup {
		remote = e.pnChatID(ctx, cl, r.Chat, r.SenderAlt)
	}
	evs := make([]engine.Event, 0, len(r.MessageIDs))
	for _, id := range r.MessageIDs {
		evs = append(evs, engine.Event{
			ID:   fmt.Sprintf("wa_ack_%s_%s_%d", remote, id, ack),
			Type: engine.EventAck, At: r.Timestamp, Ack: ack,
			Key: engine.Key{FromMe: true, Remote: remote, ID: id},
		})
	}
	return evs
}

// source is where a message was seen: its chat (Switchboard chat id), its
// sender and whether the chat is a group.
type source struct {
	chat   string
	addr   string // the address the network used for the chat: chat, or its LID
	sender string
	group  bool
	fromMe bool
	other  types.JID // the other party of a direct chat
}

func (e *Engine) sourceOf(ctx context.Context, cl client, info types.MessageInfo) source {
	s := source{group: info.IsGroup, fromMe: info.IsFromMe || isMe(cl, info.Sender)}
	if info.IsGroup {
		s.chat = chatID(info.Chat)
	} else {
		alt := info.SenderAlt
		if s.fromMe {
			alt = info.RecipientAlt
		}
		s.chat = e.pnChatID(ctx, cl, info.Chat, alt)
		s.addr = chatID(info.Chat)
		s.other = info.Chat
	}
	s.sender = e.pnChatID(ctx, cl, info.Sender, info.SenderAlt)
	if s.fromMe {
		s.sender = chatID(cl.OwnID())
	}
	return s
}

// remote is the remote of the keys of messages of src: the address the
// network used (a LID chat's LID, even when the message is kept in the
// phone-number chat).
func (src source) remote() string {
	if src.addr != "" {
		return src.addr
	}
	return src.chat
}

// chatIfMoved is the chat of a message of src when its key's remote is not it
// (engine.Incoming.Chat); "" otherwise.
func (src source) chatIfMoved() string {
	if src.remote() == src.chat {
		return ""
	}
	return src.chat
}

// keyOf is the key of a message of src with the network id id.
func (src source) keyOf(id string) engine.Key {
	k := engine.Key{FromMe: src.fromMe, Remote: src.remote(), ID: id}
	if src.group && !src.fromMe {
		k.Participant = src.sender
	}
	return k
}

// targetKey is the key of the message a reaction, edit, revoke, pin or vote of
// src is about. The network's key is written from the point of view of the
// sender of the reaction: FromMe means the reactor wrote the target.
func (e *Engine) targetKey(ctx context.Context, cl client, src source, sender types.JID, mk *waCommon.MessageKey) engine.Key {
	var author types.JID
	switch {
	case mk.GetFromMe():
		author = sender
	case mk.GetParticipant() != "":
		author, _ = types.ParseJID(mk.GetParticipant())
	case !src.group && src.fromMe:
		author = src.other
	case !src.group:
		author = cl.OwnID()
	}
	fromMe := isMe(cl, author) || (src.fromMe && mk.GetFromMe())
	k := engine.Key{FromMe: fromMe, Remote: src.remote(), ID: mk.GetID()}
	if src.group && !fromMe && !author.IsEmpty() {
		k.Participant = e.pnChatID(ctx, cl, author, types.EmptyJID)
	}
	return k
}

// quotedKey is the serialized key of the message a message of src replies to.
func (e *Engine) quotedKey(ctx context.Context, cl client, src source, ci *waE2E.ContextInfo) string {
	if ci.GetStanzaID() == "" {
		return ""
	}
	author, _ := types.ParseJID(ci.GetParticipant())
	fromMe := isMe(cl, author)
	k := engine.Key{FromMe: fromMe, Remote: src.remote(), ID: ci.GetStanzaID()}
	if src.group && !fromMe && !author.IsEmpty() {
		k.Participant = e.pnChatID(ctx, cl, author, types.EmptyJID)
	}
	return k.Serialized()
}

// unwrap takes a message out of the envelopes that only change how it is shown.
func unwrap(m *waE2E.Message) *waE2E.Message {
	for i := 0; i < 5 && m != nil; i++ {
		switch {
		case m.GetDeviceSentMessage().GetMessage() != nil:
			m = m.GetDeviceSentMessage().GetMessage()
		case m.GetEphemeralMessage().GetMessage() != nil:
			m = m.GetEphemeralMessage().GetMessage()
		case m.GetViewOnceMessage().GetMessage() != nil:
			m = m.GetViewOnceMessage().GetMessage()
		case m.GetViewOnceMessageV2().GetMessage() != nil:
			m = m.GetViewOnceMessageV2().GetMessage()
		case m.GetViewOnceMessageV2Extension().GetMessage() != nil:
			m = m.GetViewOnceMessageV2Extension().GetMessage()
		case m.GetDocumentWithCaptionMessage().GetMessage() != nil:
			m = m.GetDocumentWithCaptionMessage().GetMessage()
		case m.GetEditedMessage().GetMessage() != nil:
			m = m.GetEditedMessage().GetMessage()
		default:
			return m
		}
	}
	return m
}

// defaultPin is how long a pin without a stated duration lasts (WhatsApp's
// default choice is 7 days).
const defaultPin = 7 * 24 * time.Hour

// messageEvents maps a message event: content -> EventMessage (or, sent from the
// account's phone, an EventHistory with the message as FromMe); protocol edit ->
// EventEdited; revoke -> EventRevoked; reaction -> EventReaction; poll update ->
// EventPollVote (decrypted); pin in chat -> EventPin (and message_pinned for a
// group); a status -> EventStatus (status.go). Broadcast lists are ignored.
func (e *Engine) messageEvents(ctx context.Context, cl client, v *events.Message) []engine.Event {
	info := v.Info
	if info.Chat == types.StatusBroadcastJID {
		return e.statusEvents(ctx, cl, v) // status.go
	}
	if info.Chat.Server == types.BroadcastServer || info.Chat.IsEmpty() {
		return nil
	}
	src := e.sourceOf(ctx, cl, info)
	at := info.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	msg := seenMessage{v: v, src: src, key: src.keyOf(info.ID), at: at}
	m := unwrap(v.Message)
	if pm := m.GetProtocolMessage(); pm != nil {
		return e.protocolEvents(ctx, cl, msg, pm)
	}
	if r := m.GetReactionMessage(); r != nil {
		target := e.targetKey(ctx, cl, src, info.Sender, r.GetKey())
		ev := engine.Event{ID: msg.id("reaction"), Type: engine.EventReaction, At: at, Key: target, Reaction: r.GetText()}
		if !src.fromMe {
			ev.Message = msg.who() // nil: the account's own reaction, made on the phone
		}
		return []engine.Event{ev}
	}
	if pu := m.GetPollUpdateMessage(); pu != nil {
		target := e.targetKey(ctx, cl, src, info.Sender, pu.GetPollCreationMessageKey())
		vote, err := cl.DecryptPollVote(ctx, v)
		if err != nil {
			e.log.Warn("gateway: undecryptable poll vote dropped", "key", msg.key.Serialized(), "err", err)
			return nil
		}
		return []engine.Event{{ID: msg.id("vote"), Type: engine.EventPollVote, At: at, Key: target,
			Votes: e.voteNames(ctx, target, vote.GetSelectedOptions()), Message: msg.who()}}
	}
	if pin := m.GetPinInChatMessage(); pin != nil {
		return e.pinEvents(ctx, cl, msg, pin)
	}
	return e.contentEvents(ctx, cl, msg, m)
}

// seenMessage is what the parts of messageEvents share about one message event.
type seenMessage struct {
	v   *events.Message
	src source
	key engine.Key
	at  time.Time
}

// id is the id of the event of this kind the message becomes.
func (msg seenMessage) id(kind string) string { return "wa_" + kind + "_" + msg.key.Serialized() }

// who is the message's sender, as an Incoming without content.
func (msg seenMessage) who() *engine.Incoming {
	return &engine.Incoming{Key: msg.key, From: msg.src.sender, SenderName: msg.v.Info.PushName}
}

// protocolEvents maps a protocol message: a revoke or an edit of an earlier
// message; nil for the other kinds.
func (e *Engine) protocolEvents(ctx context.Context, cl client, msg seenMessage, pm *waE2E.ProtocolMessage) []engine.Event {
	info := msg.v.Info
	target := e.targetKey(ctx, cl, msg.src, info.Sender, pm.GetKey())
	switch pm.GetType() {
	case waE2E.ProtocolMessage_REVOKE:
		return []engine.Event{{ID: msg.id("revoke"), Type: engine.EventRevoked, At: msg.at, Key: target,
			Message: &engine.Incoming{Key: target, From: msg.src.sender, SenderName: info.PushName}}}
	case waE2E.ProtocolMessage_MESSAGE_EDIT:
		in := engine.Incoming{Key: target, From: msg.src.sender, SenderName: info.PushName}
		contentOf(unwrap(pm.GetEditedMessage())).fill(&in)
		if in.Type == "" {
			in.Type = "text"
		}
		return []engine.Event{{ID: msg.id("edit"), Type: engine.EventEdited, At: msg.at, Key: target, Message: &in}}
	}
	return nil
}

// pinEvents maps a pin in chat (for defaultPin unless the message says how
// long; an unpin is a zero duration), and in a group also its message_pinned.
func (e *Engine) pinEvents(ctx context.Context, cl client, msg seenMessage, pin *waE2E.PinInChatMessage) []engine.Event {
	target := e.targetKey(ctx, cl, msg.src, msg.v.Info.Sender, pin.GetKey())
	var d time.Duration
	if pin.GetType() == waE2E.PinInChatMessage_PIN_FOR_ALL {
		d = defaultPin
		if s := msg.v.Message.GetMessageContextInfo().GetMessageAddOnDurationInSecs(); s > 0 {
			d = time.Duration(s) * time.Second
		}
	}
	evs := []engine.Event{{ID: msg.id("pin"), Type: engine.EventPin, At: msg.at, Key: target, Pinned: d}}
	if msg.src.group && d > 0 {
		evs = append(evs, engine.Event{ID: msg.id("grouppin"), Type: engine.EventGroup, At: msg.at, Group: &engine.GroupChange{
			GroupID: msg.src.chat, Action: "message_pinned", By: msg.src.sender, Value: target.Serialized(), Me: chatID(cl.OwnID())}})
	}
	return evs
}

// contentEvents maps a message with content m: an EventMessage, or, sent from
// the account's phone, an EventHistory with the message as FromMe. It keeps
// media and polls in memory for later downloads and votes; nil when m carries
// nothing Switchboard stores.
func (e *Engine) contentEvents(ctx context.Context, cl client, msg seenMessage, m *waE2E.Message) []engine.Event {
	c := contentOf(m)
	if c.typ == "" {
		return nil
	}
	key := msg.key
	switch c.typ {
	case "media":
		e.mem.putMedia(key.Serialized(), m)
	case "poll":
		e.mem.putPoll(key.Serialized(), c.poll)
	}
	e.mem.saw(msg.src.chat, msg.v.Info, !msg.src.fromMe)
	in := engine.Incoming{Key: key, Chat: msg.src.chatIfMoved(), From: msg.src.sender, SenderName: msg.v.Info.PushName,
		QuotedKey: e.quotedKey(ctx, cl, msg.src, c.ctx)}
	c.fill(&in)
	if msg.src.fromMe {
		// Sent from the account's phone: stored like history, as the account's own.
		hm := historyOf(in, c, true, msg.at, engine.AckServer)
		return []engine.Event{{ID: msg.id("own"), Type: engine.EventHistory, At: msg.at,
			History: &engine.History{Messages: []engine.HistoryMessage{hm}}}}
	}
	return []engine.Event{{ID: msg.id("msg"), Type: engine.EventMessage, At: msg.at, Key: key, Message: &in}}
}

// voteNames names the options of a vote by their hashes (SHA-256 of the option
// name); an option of a poll the engine does not know is reported as
// "sha256:<hex>".
func (e *Engine) voteNames(ctx context.Context, poll engine.Key, hashes [][]byte) []string {
	options, ok := e.mem.pollOf(poll.Serialized())
	if !ok && e.cfg.PollOptions != nil {
		if o, err := e.cfg.PollOptions(ctx, poll); err == nil {
			options = o
		}
	}
	byHash := map[string]string{}
	for _, o := range options {
		sum := sha256.Sum256([]byte(o))
		byHash[string(sum[:])] = o
	}
	out := make([]string, 0, len(hashes))
	for _, h := range hashes {
		if name, ok := byHash[string(h)]; ok {
			out = append(out, name)
		} else {
			out = append(out, "sha256:"+hex.EncodeToString(h))
		}
	}
	return out
}
