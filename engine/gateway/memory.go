package gateway

import (
	"sync"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// memoryLimit bounds each of the engine's memories; the oldest entries go first.
const memoryLimit = 5000

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

// seen is what the engine remembers of a message of a chat.
type seen struct {
	info types.MessageInfo
}

// memory is what the engine remembers, in this process only, of the messages it
// saw: media to download, poll options to name votes, each chat's oldest and
// newest message (the anchors of history requests and chat patches) and the
// incoming messages not marked read yet.
type memory struct {
	mu     sync.Mutex
	media  *fifo[*waE2E.Message]
	polls  *fifo[[]string]
	oldest *fifo[seen]
	newest *fifo[seen]
	unread *fifo[[]seen]
	onWA   *fifo[bool] // phone numbers checked on the network
}

func (m *memory) init() {
	m.media, m.polls = newFIFO[*waE2E.Message](memoryLimit), newFIFO[[]string](memoryLimit)
	m.oldest, m.newest, m.unread = newFIFO[seen](memoryLimit), newFIFO[seen](memoryLimit), newFIFO[[]seen](memoryLimit)
	m.onWA = newFIFO[bool](memoryLimit)
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
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.oldest.get(chat); !ok || info.Timestamp.Before(o.info.Timestamp) {
		m.oldest.put(chat, seen{info})
	}
	if n, ok := m.newest.get(chat); !ok || !info.Timestamp.Before(n.info.Timestamp) {
		m.newest.put(chat, seen{info})
	}
	if incoming {
		u, _ := m.unread.get(chat)
		if len(u) >= 100 {
			u = u[1:]
		}
		m.unread.put(chat, append(u, seen{info}))
	}
}

func (m *memory) oldestOf(chat string, before time.Time) (types.MessageInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.oldest.get(chat)
	if !ok || !o.info.Timestamp.Before(before.Add(time.Second)) {
		return types.MessageInfo{}, false
	}
	return o.info, true
}

func (m *memory) newestOf(chat string) (types.MessageInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.newest.get(chat)
	return n.info, ok
}

func (m *memory) takeUnread(chat string) []seen {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, _ := m.unread.get(chat)
	m.unread.put(chat, nil)
	return u
}

func (m *memory) putMedia(key string, msg *waE2E.Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.media.put(key, msg)
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
