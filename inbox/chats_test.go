package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// The read API is tested on rows a test writes itself, in workspace ws_r; a
// row of ws_other beside them must never be read.
var wsr = viewer.WorkspaceContext(context.Background(), "ws_r")

// at is a moment of the tests' day, h hours and m minutes after its start.
func at(h, m int) time.Time { return time.Date(2025, 3, 1, h, m, 0, 0, time.UTC) }

// Chats of the read tests, by name.
const (
	alice  = "15550000001@c.us"
	bob    = "15550000002@c.us"
	carol  = "15550000003@c.us"
	garden = "120363000000000001@g.us"
	news   = "120363000000000009@newsletter"
)

// seedChat is a chat a test stores.
type seedChat struct {
	jid, name          string
	pinned, archived   bool
	last               *time.Time
	members            []string // of a group
	otherWorkspaceOnly bool
}

// openStore returns a Store on a new embedded database holding chats.
func openStore(t *testing.T, chats ...seedChat) inbox.Store {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	for _, c := range chats {
		ctx := wsr
		if c.otherWorkspaceOnly {
			ctx = viewer.WorkspaceContext(context.Background(), "ws_other")
		}
		err := client.Chat.Create().SetJid(c.jid).SetKind(chat.Kind(engine.ChatKind(c.jid))).SetName(c.name).
			SetPinned(c.pinned).SetArchived(c.archived).SetNillableLastMessageAt(c.last).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.members {
			if err := client.ChatMember.Create().SetChatJid(c.jid).SetMemberJid(m).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return inbox.Store{Client: client}
}

func ptr[T any](v T) *T { return &v }

// jids are the ids of chats, in their order.
func jids(chats []*ent.Chat) []string {
	out := []string{}
	for _, c := range chats {
		out = append(out, c.Jid)
	}
	return out
}

// theChats are the chats of the chat tests: one of each kind, pinned,
// archived, unnamed, without a last message, and one of another workspace.
var theChats = []seedChat{
	{jid: alice, name: "Alice", pinned: true, last: ptr(at(10, 0))},
	{jid: bob, name: "Bob", last: ptr(at(12, 0))},
	{jid: carol, name: "Carol"},
	{jid: garden, name: "Garden club", archived: true, last: ptr(at(11, 0)), members: []string{alice, bob}},
	{jid: news, last: ptr(at(9, 0))},
	{jid: "15550000077@c.us", name: "Bob elsewhere", last: ptr(at(13, 0)), otherWorkspaceOnly: true},
}

// A page of chats is ordered by last message, newest first and chats without
// one last; its total counts every chat the filter selects.
func TestChats(t *testing.T) {
	s := openStore(t, theChats...)
	tests := []struct {
		name        string
		f           inbox.ChatFilter
		limit, skip int
		want        []string
		total       int
	}{
		{"every chat", inbox.ChatFilter{}, 10, 0, []string{bob, garden, alice, news, carol}, 5},
		{"a page of them", inbox.ChatFilter{}, 2, 1, []string{garden, alice}, 5},
		{"past the last", inbox.ChatFilter{}, 10, 5, []string{}, 5},
		{"named and not archived", inbox.ChatFilter{Named: true, Unarchived: true}, 10, 0, []string{bob, alice, carol}, 3},
		{"by kind", inbox.ChatFilter{Kinds: []string{engine.ChatGroup, engine.ChatNewsletter}}, 10, 0, []string{garden, news}, 2},
		{"by name, folded", inbox.ChatFilter{Search: "B"}, 10, 0, []string{bob, garden}, 2},
		{"by id", inbox.ChatFilter{Search: "0000003"}, 10, 0, []string{carol}, 1},
		{"by name only", inbox.ChatFilter{Search: "0000003", NameOnly: true}, 10, 0, []string{}, 0},
		{"since a time", inbox.ChatFilter{Since: ptr(at(10, 30))}, 10, 0, []string{bob, garden}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := s.Chats(wsr, tt.f, tt.limit, tt.skip)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, jids(got)); diff != "" {
				t.Errorf("chats (-want +got):\n%s", diff)
			}
			if total != tt.total {
				t.Errorf("total %d, want %d", total, tt.total)
			}
		})
	}
}

// A chat by id, a group by id (a contact is no group), and the groups a
// contact shares with the account.
func TestChatByID(t *testing.T) {
	s := openStore(t, theChats...)
	if c, err := s.Chat(wsr, bob); err != nil || c.Name != "Bob" {
		t.Errorf("Chat(bob) = %v, %v; want Bob", c, err)
	}
	if _, err := s.Chat(wsr, "15550000077@c.us"); !ent.IsNotFound(err) {
		t.Errorf("Chat of another workspace: %v, want not found", err)
	}
	if c, err := s.Group(wsr, garden); err != nil || c.Name != "Garden club" {
		t.Errorf("Group(garden) = %v, %v; want Garden club", c, err)
	}
	if _, err := s.Group(wsr, bob); !ent.IsNotFound(err) {
		t.Errorf("Group(bob): %v, want not found", err)
	}
	for member, want := range map[string][]string{alice: {garden}, carol: {}} {
		got, total, err := s.GroupsOf(wsr, member, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, jids(got)); diff != "" || total != len(want) {
			t.Errorf("GroupsOf(%s) total %d (-want +got):\n%s", member, total, diff)
		}
	}
}

// The latest chats: not archived, pinned first, then by last message; each
// with its newest messages of the store (not the queue's), newest first.
func TestLatestChats(t *testing.T) {
	s := openStore(t, theChats...)
	seedMessages(t, s,
		seedMsg{key: "B1", to: bob, at: at(11, 58)},
		seedMsg{key: "B2", to: bob, at: at(11, 59)},
		seedMsg{key: "B3", to: bob, at: at(12, 0)},
		seedMsg{to: bob, at: at(12, 30), queued: true},
		seedMsg{key: "A1", to: alice, at: at(10, 0)},
	)
	type latest struct {
		Chat     string
		Messages []string
	}
	tests := []struct {
		name            string
		chats, messages int
		want            []latest
	}{
		{"two chats, two messages", 2, 2, []latest{{alice, []string{"A1"}}, {bob, []string{"B3", "B2"}}}},
		{"every chat, no message", 10, 0, []latest{{alice, []string{}}, {bob, []string{}}, {news, []string{}}, {carol, []string{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := s.LatestChats(wsr, tt.chats, tt.messages)
			if err != nil {
				t.Fatal(err)
			}
			var chats []latest
			for _, c := range got {
				chats = append(chats, latest{c.Chat.Jid, wireIDs(c.Messages)})
			}
			if diff := cmp.Diff(tt.want, chats); diff != "" {
				t.Errorf("latest chats (-want +got):\n%s", diff)
			}
			if total != 4 {
				t.Errorf("total %d, want the 4 chats not archived", total)
			}
		})
	}
	// Only the columns asked for are read (with the id).
	got, _, err := s.LatestChats(wsr, 2, 1, message.FieldTo)
	if err != nil {
		t.Fatal(err)
	}
	if m := got[1].Messages[0]; m.To != bob || m.WaID != "" || m.ID == "" {
		t.Errorf("with fields to: message %+v, want only its id and chat", m)
	}
}
