package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// With the message store answering for unread messages, MarkRead sends the
// receipts of the messages the store names, each to the address its key
// names (a LID chat's messages are stored in the phone chat), and the engine
// keeps no unread list of its own however many messages come.
func TestMarkReadFromTheStore(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var asked []string
	h := newHarness(t, true, func(c *Config) {
		c.UnreadMessages = func(_ context.Context, chat string) ([]Unread, error) {
			asked = append(asked, chat)
			return []Unread{
				{Key: engine.Key{Remote: "88882223333@lid", ID: "BYLID"}, At: at},
				{Key: engine.Key{Remote: "15552223333@c.us", ID: "BYPN"}, At: at.Add(time.Minute)},
			}, nil
		}
	})
	for i := range 150 {
		h.f.emit(&events.Message{Info: msgInfo(contact, contact, types.MessageID(fmt.Sprint("LIVE", i)), false),
			Message: &waE2E.Message{Conversation: proto.String("hi")}})
	}
	if h.e.mem.unread != nil {
		t.Error("the engine keeps unread lists beside the store")
	}
	if err := h.e.MarkRead(ctx, "15552223333@c.us"); err != nil {
		t.Fatal(err)
	}
	got := map[string][]types.MessageID{}
	for _, r := range h.f.reads {
		got[r.chat.String()] = append(got[r.chat.String()], r.ids...)
	}
	want := map[string][]types.MessageID{"88882223333@lid": {"BYLID"}, "15552223333@s.whatsapp.net": {"BYPN"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read receipts by address (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"15552223333@c.us"}, asked); diff != "" {
		t.Errorf("chats asked of the store (-want +got):\n%s", diff)
	}
}

// Without the store, the engine's own memories stay bounded: unread messages
// per chat, chats with unread lists, media and polls.
func TestMemoryBounded(t *testing.T) {
	var m memory
	m.init(false, false)
	for c := range unreadChats + 10 {
		chat := fmt.Sprintf("1555%07d@c.us", c)
		for i := range unreadLimit + 5 {
			m.saw(chat, types.MessageInfo{ID: types.MessageID(fmt.Sprint(i)), Timestamp: time.Unix(int64(i), 0)}, true)
		}
	}
	for i := range cacheLimit + 10 {
		m.putMedia(fmt.Sprint(i), &waE2E.Message{})
		m.putPoll(fmt.Sprint(i), []string{"a"})
	}
	if n := len(m.unread.m); n != unreadChats {
		t.Errorf("%d chats with unread lists, want %d", n, unreadChats)
	}
	if u := m.takeUnread(fmt.Sprintf("1555%07d@c.us", unreadChats+9)); len(u) != unreadLimit || u[0].id != "5" {
		t.Errorf("unread of the last chat: %d, first %q", len(u), u[0].id)
	}
	if len(m.media.m) != cacheLimit || len(m.polls.m) != cacheLimit {
		t.Errorf("media %d, polls %d, want %d each", len(m.media.m), len(m.polls.m), cacheLimit)
	}
}
