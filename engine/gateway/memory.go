package gateway

import (
	"sync"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// The bounds of the engine's memories; the oldest entries go first. What the
// message store answers (Config.UnreadMessages, OldestMessage, PollOptions,
// and media through FetchMediaRef) is kept only as a small cache, or not at
// all; the lists kept for standalone use (no callbacks) stay bounded.
const (
	memoryLimit = 5000 // chats whose newest message is remembered; numbers checked
	cacheLimit  = 256  // media messages and polls: a cache before the store
	unreadChats = 1000 // chats whose unread messages are remembered, without UnreadMessages
	unreadLimit = 100  // unread messages remembered per chat
)

// fifo is a map that forgets its oldest keys beyond a limit.
type fifo[V any] struct {
	m     map[string]V
	order []string
	limit int
}

func newFIFO[V any](limit int) *fifo[V] { return &fifo[V]{m: map[string]V{}, limit: limit} }

func (f *fifo[V]) put(k string, v V) {
	if _, ok := f.m[k]; !ok {
		f.order = append(f.order, k)
		if len(f.order) > f.limit {
			delete(f.m, f.order[0])
			f.order = f.order[1:]
		}
	}
	f.m[k] = v
}

func (f *fifo[V]) get(k string) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

// seen is what the engine remembers of a message of a chat: the address it
// came on, its id and time, not the whole types.MessageInfo.
type seen struct {
	chat, sender types.JID
	id           types.MessageID
	at           time.Time
	fromMe       bool
	group        bool
}

func seenOf(info types.MessageInfo) seen {
	return seen{chat: info.Chat, sender: info.Sender, id: info.ID, at: info.Timestamp, fromMe: info.IsFromMe, group: info.IsGroup}
}

// memory is what the engine remembers, in this process only, of the messages it
// saw: media to download and poll options to name votes (small caches), each
// chat's newest message (the anchor of chat patches) and, when no callback of
// the store answers for them, each chat's oldest message (the anchor of history
// requests) and the incoming messages not marked read yet.
type memory struct {
	mu     sync.Mutex
	media  *fifo[*waE2E.Message]
	polls  *fifo[[]string]
	oldest *fifo[seen] // nil when the store answers (Config.OldestMessage)
	newest *fifo[seen]
	unread *fifo[[]seen] // nil when the store answers (Config.UnreadMessages)
	onWA   *fifo[bool]   // phone numbers checked on the network
}

// init sizes the memories; stored says which ones the message store answers
// for instead.
func (m *memory) init(oldestStored, unreadStored bool) {
	m.media, m.polls = newFIFO[*waE2E.Message](cacheLimit), newFIFO[[]string](cacheLimit)
	m.newest, m.onWA = newFIFO[seen](memoryLimit), newFIFO[bool](memoryLimit)
	if !oldestStored {
		m.oldest = newFIFO[seen](memoryLimit)
	}
	if !unreadStored {
		m.unread = newFIFO[[]seen](unreadChats)
	}
}

func (m *memory) onNetwork(user string) (bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.onWA.get(user)
}

func (m *memory) setOnNetwork(user string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onWA.put(user, on)
}

// saw notes a message of chat (a Switchboard chat id).
func (m *memory) saw(chat string, info types.MessageInfo, incoming bool) {
	s := seenOf(info)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.oldest != nil {
		if o, ok := m.oldest.get(chat); !ok || s.at.Before(o.at) {
			m.oldest.put(chat, s)
		}
	}
	if n, ok := m.newest.get(chat); !ok || !s.at.Before(n.at) {
		m.newest.put(chat, s)
	}
	if incoming && m.unread != nil {
		u, _ := m.unread.get(chat)
		if len(u) >= unreadLimit {
			u = u[1:]
		}
		m.unread.put(chat, append(u, s))
	}
}

func (m *memory) oldestOf(chat string, before time.Time) (seen, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.oldest == nil {
		return seen{}, false
	}
	o, ok := m.oldest.get(chat)
	if !ok || !o.at.Before(before.Add(time.Second)) {
		return seen{}, false
	}
	return o, true
}

func (m *memory) newestOf(chat string) (seen, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.newest.get(chat)
	return n, ok
}

func (m *memory) takeUnread(chat string) []seen {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unread == nil {
		return nil
	}
	u, _ := m.unread.get(chat)
	m.unread.put(chat, nil)
	return u
}

// putMedia remembers a media message for FetchMedia: what a download needs,
// without its thumbnail, caption or context.
func (m *memory) putMedia(key string, msg *waE2E.Message) {
	slim := proto.Clone(msg).(*waE2E.Message)
	if c := slim.GetImageMessage(); c != nil {
		c.JPEGThumbnail, c.Caption, c.ContextInfo = nil, nil, nil
	}
	if c := slim.GetVideoMessage(); c != nil {
		c.JPEGThumbnail, c.Caption, c.ContextInfo = nil, nil, nil
	}
	if c := slim.GetPtvMessage(); c != nil {
		c.JPEGThumbnail, c.Caption, c.ContextInfo = nil, nil, nil
	}
	if c := slim.GetDocumentMessage(); c != nil {
		c.JPEGThumbnail, c.Caption, c.ContextInfo = nil, nil, nil
	}
	if c := slim.GetAudioMessage(); c != nil {
		c.Waveform, c.ContextInfo = nil, nil
	}
	if c := slim.GetStickerMessage(); c != nil {
		c.PngThumbnail, c.ContextInfo = nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.media.put(key, slim)
}

func (m *memory) mediaOf(key string) (*waE2E.Message, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.media.get(key)
}

func (m *memory) putPoll(key string, options []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls.put(key, options)
}

func (m *memory) pollOf(key string) ([]string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.polls.get(key)
}

// info is the message info of a remembered message, as far as it is kept.
func (s seen) info() types.MessageInfo {
	return types.MessageInfo{MessageSource: types.MessageSource{Chat: s.chat, Sender: s.sender, IsFromMe: s.fromMe, IsGroup: s.group},
		ID: s.id, Timestamp: s.at}
}
