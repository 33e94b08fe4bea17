package conformance

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Kinds of journal entries: a frame, or a connection opening or closing.
const (
	entryFrame = "frame"
	entryOpen  = "open"
	entryClose = "close"
)

// entry is one thing the proxy saw: a frame in one direction, or a connection
// (link) opening or closing.
type entry struct {
	kind string
	link int
	at   time.Time
	// frames
	toServer bool
	raw      []byte
	head     head
	// closes: the code and who sent it ("engine", "server" or "kit"); 0 when
	// the connection dropped without one.
	code int
	by   string
}

// head is the part of a frame every check reads.
type head struct {
	Type     string          `json:"type"`
	ID       string          `json:"id"`
	Method   string          `json:"method"`
	Result   json.RawMessage `json:"result"`
	Error    *wireError      `json:"error"`
	Events   []eventHead     `json:"events"`
	Rejected []struct {
		Index  int    `json:"index"`
		Reason string `json:"reason"`
	} `json:"rejected"`
	// welcome and hello
	HeartbeatMs  int64    `json:"heartbeatMs"`
	TTLMs        int64    `json:"ttlMs"`
	MaxFrame     int64    `json:"maxFrame"`
	MaxBatch     int      `json:"maxBatch"`
	Kind         string   `json:"kind"`
	Capabilities []string `json:"capabilities"`
	Version      int      `json:"version"`
	Versions     []int    `json:"versions"`
	FrameType    string   `json:"frameType"`
}

// eventHead is what the checks read of an event.
type eventHead struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Ack  int    `json:"ack"`
	Key  struct {
		Remote string `json:"remote"`
		ID     string `json:"id"`
	} `json:"key"`
}

// wireError is a reply's or an ack's error.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// journal is everything the proxy saw, in order; waiters are woken on every
// new entry.
type journal struct {
	mu      sync.Mutex
	entries []entry
	changed chan struct{}
}

func newJournal() *journal { return &journal{changed: make(chan struct{})} }

func (j *journal) add(e entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e.at = time.Now()
	j.entries = append(j.entries, e)
	close(j.changed)
	j.changed = make(chan struct{})
}

// len is the number of entries so far: a position to wait from.
func (j *journal) len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.entries)
}

// snapshot returns the entries so far.
func (j *journal) snapshot() []entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]entry(nil), j.entries...)
}

// wait returns the first entry at or after position from that match accepts,
// and its position, waiting for it until ctx ends.
func (j *journal) wait(ctx context.Context, from int, match func(entry) bool) (entry, int, error) {
	for {
		j.mu.Lock()
		for i := from; i < len(j.entries); i++ {
			if match(j.entries[i]) {
				e := j.entries[i]
				j.mu.Unlock()
				return e, i, nil
			}
		}
		from = len(j.entries)
		changed := j.changed
		j.mu.Unlock()
		select {
		case <-ctx.Done():
			return entry{}, from, ctx.Err()
		case <-changed:
		}
	}
}

// has reports whether an entry so far matches.
func (j *journal) has(match func(entry) bool) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.hasLocked(match)
}

// hasLocked is has for a caller holding j.mu (a matcher passed to wait).
func (j *journal) hasLocked(match func(entry) bool) bool {
	for _, e := range j.entries {
		if match(e) {
			return true
		}
	}
	return false
}

// Matchers of entries.

func engineFrame(link int, typ string) func(entry) bool {
	return func(e entry) bool {
		return e.kind == entryFrame && e.link == link && e.toServer && e.head.Type == typ
	}
}

func serverFrame(link int, typ string) func(entry) bool {
	return func(e entry) bool {
		return e.kind == entryFrame && e.link == link && !e.toServer && e.head.Type == typ
	}
}

func replyTo(id string) func(entry) bool {
	return func(e entry) bool {
		return e.kind == entryFrame && e.toServer && e.head.Type == "reply" && e.head.ID == id
	}
}

func opened(e entry) bool { return e.kind == entryOpen }

func closedLink(link int) func(entry) bool {
	return func(e entry) bool { return e.kind == entryClose && e.link == link }
}
