package gateway

import (
	"context"
	"fmt"
	"time"

	waHistorySync "go.mau.fi/whatsmeow/proto/waHistorySync"
	waWeb "go.mau.fi/whatsmeow/proto/waWeb"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// HistoryPageSize is how many messages one on-demand history request asks the
// phone for (whatsmeow's recommendation).
const HistoryPageSize = 50

// historySlice bounds the events of a history sync handed to the sink at once.
const historySlice = 50

// historyResult is what an on-demand history answer held for one chat.
type historyResult struct {
	messages int
	oldest   time.Time
	complete bool
}

// onHistory maps a history sync: the push names become contacts; each
// conversation becomes one EventHistory with the chat's state, its messages and
// how far back they reach (Complete when the phone says the history ends
// there). An on-demand answer also wakes the LoadOlder waiting for its chat.
func (e *Engine) onHistory(ctx context.Context, cl client, v *events.HistorySync) bool {
	d := v.Data
	if d == nil {
		return true
	}
	typ := d.GetSyncType()
	chunk := historyChunk(cl, int(typ), d.GetChunkOrder())
	var evs []engine.Event
	var contacts []engine.ContactInfo
	for _, p := range d.GetPushnames() {
		j, err := types.ParseJID(p.GetID())
		if err != nil || p.GetPushname() == "" {
			continue
		}
		contacts = append(contacts, engine.ContactInfo{ID: e.pnChatID(ctx, cl, j, types.EmptyJID), PushName: p.GetPushname()})
	}
	if len(contacts) > 0 {
		evs = append(evs, engine.Event{ID: "wa_hs_" + chunk + "_contacts", Type: engine.EventHistory, History: &engine.History{Contacts: contacts}})
	}
	results := map[string]historyResult{}
	for _, conv := range d.GetConversations() {
		h, cid, res, ok := e.conversation(ctx, cl, conv, typ == waHistorySync.HistorySync_ON_DEMAND)
		if !ok {
			continue
		}
		results[cid] = res
		id := "wa_hs_" + chunk + "_" + cid
		if typ == waHistorySync.HistorySync_ON_DEMAND {
			id = fmt.Sprintf("wa_hso_%s_%d_%d", cid, res.oldest.Unix(), res.messages)
		}
		evs = append(evs, engine.Event{ID: id, Type: engine.EventHistory, History: h})
	}
	// A bootstrap sync holds thousands of chats: report them in slices, each
	// stored at once (the ids make a redelivered slice harmless).
	for len(evs) > 0 {
		n := min(len(evs), historySlice)
		if !e.reportPersist(ctx, evs[:n]...) {
			return false
		}
		evs = evs[n:]
	}
	e.setState(func(s *State) { s.HasSynced = true })
	if typ == waHistorySync.HistorySync_ON_DEMAND {
		e.histMu.Lock()
		for cid, res := range results {
			for _, ch := range e.histWait[cid] {
				ch <- res
			}
			delete(e.histWait, cid)
		}
		e.histMu.Unlock()
	}
	return true
}

// historyChunk names a chunk of a history sync in its events' ids
// (wa_hs_<chunk>_<chat>): the device's pairing, the sync type and the chunk's
// order. The same chunk delivered again has the same ids (the sink stores it
// once); the history a phone sends after it is linked again (a new pairing)
// has new ones, so it is not dropped as a duplicate of the earlier pairing's.
func historyChunk(cl client, typ int, order uint32) string {
	if p := cl.Pairing(); p != "" {
		return fmt.Sprintf("%s_%d_%d", p, typ, order)
	}
	return fmt.Sprintf("%d_%d", typ, order)
}

// conversation maps one conversation of a history sync.
func (e *Engine) conversation(ctx context.Context, cl client, conv *waHistorySync.Conversation, onDemand bool) (*engine.History, string, historyResult, bool) {
	j, err := types.ParseJID(conv.GetID())
	if err != nil || j.Server == types.BroadcastServer {
		return nil, "", historyResult{}, false
	}
	alt := types.EmptyJID
	if pn, err := types.ParseJID(conv.GetPnJID()); err == nil {
		alt = pn
	}
	cid := e.pnChatID(ctx, cl, j, alt)
	cs := engine.ChatState{ID: cid, Kind: engine.ChatKind(cid), Name: conv.GetName()}
	if cs.Name == "" {
		cs.Name = conv.GetDisplayName()
	}
	if conv.Archived != nil {
		a := conv.GetArchived()
		cs.Archived = &a
	}
	if conv.Pinned != nil {
		p := conv.GetPinned() > 0
		cs.Pinned = &p
	}
	if conv.UnreadCount != nil {
		n := int(conv.GetUnreadCount())
		cs.UnreadCount = &n
	}
	if conv.MarkedAsUnread != nil {
		u := conv.GetMarkedAsUnread()
		cs.MarkedUnread = &u
	}
	if cs.Description == "" {
		cs.Description = conv.GetDescription()
	}
	src := source{chat: cid, addr: chatID(j), group: j.Server == types.GroupServer, other: j}
	var msgs []engine.HistoryMessage
	var oldest time.Time
	for _, hm := range conv.GetMessages() {
		m, ok := e.historyMessage(ctx, cl, src, hm.GetMessage())
		if !ok {
			continue
		}
		msgs = append(msgs, m)
		if oldest.IsZero() || m.At.Before(oldest) {
			oldest = m.At
		}
	}
	h := &engine.History{Messages: msgs}
	if !onDemand {
		h.Chats = []engine.ChatState{cs}
	}
	res := historyResult{messages: len(msgs), oldest: oldest, complete: conv.GetEndOfHistoryTransfer()}
	if len(msgs) > 0 || res.complete {
		cov := engine.Coverage{ChatID: cid, OldestAt: oldest, Complete: res.complete}
		h.Coverage = []engine.Coverage{cov}
	}
	return h, cid, res, true
}

// historyMessage maps one message of a history sync.
func (e *Engine) historyMessage(ctx context.Context, cl client, src source, wm *waWeb.WebMessageInfo) (engine.HistoryMessage, bool) {
	mk := wm.GetKey()
	if mk == nil || mk.GetID() == "" {
		return engine.HistoryMessage{}, false
	}
	m := unwrap(wm.GetMessage())
	c := contentOf(m)
	if c.typ == "" {
		return engine.HistoryMessage{}, false
	}
	at := time.Unix(int64(wm.GetMessageTimestamp()), 0)
	fromMe := mk.GetFromMe()
	var sender types.JID
	switch {
	case fromMe:
		sender = cl.OwnID()
	case src.group:
		p := wm.GetParticipant()
		if p == "" {
			p = mk.GetParticipant()
		}
		sender, _ = types.ParseJID(p)
	default:
		sender = src.other
	}
	s := src
	s.fromMe = fromMe
	s.sender = e.pnChatID(ctx, cl, sender, types.EmptyJID)
	if fromMe {
		s.sender = chatID(cl.OwnID())
	}
	key := s.keyOf(mk.GetID())
	in := engine.Incoming{Key: key, Chat: s.chatIfMoved(), From: s.sender, SenderName: wm.GetPushName(),
		QuotedKey: e.quotedKey(ctx, cl, s, c.ctx)}
	c.fill(&in)
	ack := engine.AckServer
	if fromMe {
		if st := wm.GetStatus(); st == waWeb.WebMessageInfo_ERROR {
			ack = engine.AckError
		} else if st > 0 {
			ack = engine.Ack(int(st) - 1)
		}
	}
	hm := historyOf(in, c, fromMe, at, ack)
	for _, r := range wm.GetReactions() {
		if r.GetKey().GetFromMe() {
			hm.Reaction = r.GetText()
		}
	}
	info := types.MessageInfo{MessageSource: types.MessageSource{Chat: src.other, IsFromMe: fromMe, IsGroup: src.group, Sender: sender},
		ID: mk.GetID(), Timestamp: at}
	if src.group {
		info.Chat, _ = parseChat(src.chat)
	}
	switch c.typ {
	case "media":
		e.mem.putMedia(key.Serialized(), m)
	case "poll":
		e.mem.putPoll(key.Serialized(), c.poll)
	}
	e.mem.saw(src.chat, info, false)
	return hm, true
}

// LoadOlder implements engine.HistoryLoader: it asks the phone for the
// HistoryPageSize messages before the oldest message the engine knows of the
// chat older than before (Config.OldestMessage, else what this process saw),
// waits for the phone's answer (Config.HistoryTimeout; ErrPhoneTimeout), which
// is reported through the sink as an EventHistory, and says what it held. A
// chat with no known message to anchor the request is Unavailable.
func (e *Engine) LoadOlder(ctx context.Context, chat string, before time.Time) (engine.HistoryPage, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.HistoryPage{}, err
	}
	j, err := parseChat(chat)
	if err != nil {
		return engine.HistoryPage{}, err
	}
	info, ok := types.MessageInfo{}, false
	if e.cfg.OldestMessage != nil {
		k, at, found, err := e.cfg.OldestMessage(ctx, chat, before)
		if err != nil {
			return engine.HistoryPage{}, err
		}
		if found {
			info, ok = types.MessageInfo{MessageSource: types.MessageSource{Chat: j, IsFromMe: k.FromMe, IsGroup: j.Server == types.GroupServer},
				ID: k.ID, Timestamp: at}, true
		}
	}
	if !ok {
		var o seen
		o, ok = e.mem.oldestOf(chat, before)
		info = o.info()
		if info.Chat.IsEmpty() {
			info.Chat = j
		}
	}
	if !ok {
		return engine.HistoryPage{Unavailable: true, OldestAt: before}, nil
	}
	ch := make(chan historyResult, 1)
	e.histMu.Lock()
	e.histWait[chat] = append(e.histWait[chat], ch)
	e.histMu.Unlock()
	defer func() {
		e.histMu.Lock()
		list := e.histWait[chat]
		for i, c := range list {
			if c == ch {
				e.histWait[chat] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(e.histWait[chat]) == 0 {
			delete(e.histWait, chat)
		}
		e.histMu.Unlock()
	}()
	if _, err := cl.SendPeerMessage(ctx, cl.BuildHistorySyncRequest(&info, HistoryPageSize)); err != nil {
		return engine.HistoryPage{}, fmt.Errorf("gateway: history request: %w", err)
	}
	t := time.NewTimer(e.cfg.HistoryTimeout)
	defer t.Stop()
	select {
	case res := <-ch:
		oldest := res.oldest
		if oldest.IsZero() || info.Timestamp.Before(oldest) {
			oldest = info.Timestamp
		}
		return engine.HistoryPage{Messages: res.messages, OldestAt: oldest, More: !res.complete && res.messages > 0}, nil
	case <-t.C:
		return engine.HistoryPage{}, ErrPhoneTimeout
	case <-ctx.Done():
		return engine.HistoryPage{}, ctx.Err()
	}
}
