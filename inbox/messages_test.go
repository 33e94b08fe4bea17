package inbox_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/storage"
)

// seedMsg is a message a test stores: key is its wire id (a message of the
// network, key "true_<to>_<key>" when fromMe, else "false_<to>_<key>"); a
// queued one has not reached the network (no key) and is not in the store.
type seedMsg struct {
	key, to, text, poll, filename, mime, from, sender, wireType string
	at                                                          time.Time
	fromMe, queued                                              bool
	pinnedUntil                                                 *time.Time
	mediaURL                                                    string
}

// wire is the serialized key of the message m seeds.
func (m seedMsg) wire() string {
	return engine.Key{Remote: m.to, ID: m.key, FromMe: m.fromMe}.Serialized()
}

// seedMessages stores the messages in workspace ws_r.
func seedMessages(t *testing.T, s inbox.Store, msgs ...seedMsg) {
	t.Helper()
	for _, m := range msgs {
		typ := "text"
		if m.mime != "" {
			typ = "media"
		}
		c := s.Client.Message.Create().SetTo(m.to).SetType(typ).SetText(m.text).SetPollQuestion(m.poll).
			SetMediaFilename(m.filename).SetMediaMime(m.mime).SetFrom(m.from).SetSenderName(m.sender).
			SetWireType(m.wireType).SetFromMe(m.fromMe).SetCreatedAt(m.at).SetNillablePinnedUntil(m.pinnedUntil).
			SetMediaURL(m.mediaURL)
		if m.queued {
			c.SetOrigin(message.OriginScheduled)
		} else {
			c.SetOrigin(message.OriginHistory).SetWaID(m.key).SetWaSerialized(m.wire())
		}
		if err := c.Exec(wsr); err != nil {
			t.Fatal(err)
		}
	}
}

// wireIDs are the wire ids of messages, in their order ("queued" for one
// that has none).
func wireIDs(msgs []*ent.Message) []string {
	out := []string{}
	for _, m := range msgs {
		if m.WaID == "" {
			out = append(out, "queued")
			continue
		}
		out = append(out, m.WaID)
	}
	return out
}

// theMessages are the messages of the search tests.
var theMessages = []seedMsg{
	{key: "T1", to: alice, text: "Lunch at noon?", wireType: "chat", from: alice, sender: "Alice A", at: at(9, 0)},
	{key: "T2", to: alice, text: "Yes, lunch", wireType: "chat", fromMe: true, at: at(9, 5)},
	{key: "P1", to: garden, poll: "Which day for LUNCH?", wireType: "poll_creation", from: bob, sender: "Bobby", at: at(10, 0)},
	{key: "I1", to: garden, mime: "image/jpeg", filename: "roses.jpg", wireType: "image", from: alice, sender: "Alice A", at: at(11, 0)},
	{key: "D1", to: bob, mime: "application/pdf", filename: "Lunch-menu.pdf", wireType: "document", from: bob, at: at(12, 0)},
	{to: bob, text: "lunch tomorrow (queued)", at: at(13, 0), queued: true},
}

// The store's messages that a filter selects, by time (newest first unless
// ascending), with the total; the queue's messages are never among them.
func TestMessages(t *testing.T) {
	s := openStore(t)
	seedMessages(t, s, theMessages...)
	tests := []struct {
		name        string
		f           inbox.MessageFilter
		limit, skip int
		want        []string
		total       int
	}{
		{"all of the store", inbox.MessageFilter{}, 10, 0, []string{"D1", "I1", "P1", "T2", "T1"}, 5},
		{"oldest first, a page", inbox.MessageFilter{Ascending: true}, 2, 1, []string{"T2", "P1"}, 5},
		{"one chat", inbox.MessageFilter{Chat: garden}, 10, 0, []string{"I1", "P1"}, 2},
		{"text, poll or file name, folded", inbox.MessageFilter{Search: "lunch"}, 10, 0, []string{"D1", "P1", "T2", "T1"}, 4},
		{"since and until, inclusive", inbox.MessageFilter{Since: ptr(at(9, 5)), Until: ptr(at(11, 0))}, 10, 0, []string{"I1", "P1", "T2"}, 3},
		{"wire types", inbox.MessageFilter{WireTypes: []string{"image", "document"}}, 10, 0, []string{"D1", "I1"}, 2},
		{"any term, not file names", inbox.MessageFilter{QueryAny: []string{"noon", "day"}}, 10, 0, []string{"P1", "T1"}, 2},
		{"a mime type", inbox.MessageFilter{Mime: ptr("image/jpeg")}, 10, 0, []string{"I1"}, 1},
		{"a mime family", inbox.MessageFilter{Mime: ptr("application/*")}, 10, 0, []string{"D1"}, 1},
		{"a file name", inbox.MessageFilter{FilenameContains: ptr("ROSE")}, 10, 0, []string{"I1"}, 1},
		{"with media", inbox.MessageFilter{HasMedia: ptr(true)}, 10, 0, []string{"D1", "I1"}, 2},
		{"without media", inbox.MessageFilter{HasMedia: ptr(false)}, 10, 0, []string{"P1", "T2", "T1"}, 3},
		{"sent by the account", inbox.MessageFilter{Sender: ptr("me")}, 10, 0, []string{"T2"}, 1},
		{"by sender id", inbox.MessageFilter{Sender: ptr(bob)}, 10, 0, []string{"D1", "P1"}, 2},
		{"by sender name", inbox.MessageFilter{Sender: ptr("alice a")}, 10, 0, []string{"I1", "T1"}, 2},
		{"filters together", inbox.MessageFilter{Search: "lunch", Chat: alice, Sender: ptr("me")}, 10, 0, []string{"T2"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := s.Messages(wsr, tt.f, tt.limit, tt.skip)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, wireIDs(got)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if total != tt.total {
				t.Errorf("total %d, want %d", total, tt.total)
			}
		})
	}
}

// A message by its serialized key, or by its bare wire id (in a chat, when
// one is given); several by key; the pinned ones.
func TestMessagesByKey(t *testing.T) {
	s := openStore(t)
	pinned := theMessages[0]
	pinned.key, pinned.to, pinned.at, pinned.pinnedUntil = "X1", bob, at(8, 0), ptr(at(20, 0))
	expired := pinned
	expired.key, expired.pinnedUntil = "X2", ptr(at(14, 0))
	seedMessages(t, s, append(theMessages, pinned, expired)...)
	tests := []struct {
		name string
		key  string
		chat *string
		want string // wire id, "" for not found
	}{
		{"serialized key", theMessages[1].wire(), nil, "T2"},
		{"serialized key, the chat given is not looked at", theMessages[1].wire(), ptr(bob), "T2"},
		{"bare wire id", "P1", nil, "P1"},
		{"bare wire id in its chat", "P1", ptr(garden), "P1"},
		{"bare wire id in another chat", "P1", ptr(alice), ""},
		{"unknown", "false_" + alice + "_NOPE", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := s.Message(wsr, tt.key, tt.chat)
			switch {
			case tt.want == "" && !ent.IsNotFound(err):
				t.Errorf("got %v, %v; want not found", m, err)
			case tt.want != "" && (err != nil || m.WaID != tt.want):
				t.Errorf("got %v, %v; want %s", m, err, tt.want)
			}
		})
	}
	byWire, err := s.MessagesByWire(wsr, "", []string{theMessages[0].wire(), "I1", "NOPE"})
	if err != nil {
		t.Fatal(err)
	}
	inChat, err := s.MessagesByWire(wsr, alice, []string{theMessages[0].wire(), "I1"})
	if err != nil {
		t.Fatal(err)
	}
	byKey, err := s.MessagesByKey(wsr, theMessages[2].wire(), "T1")
	if err != nil {
		t.Fatal(err)
	}
	pins, err := s.Pinned(wsr, bob, at(15, 0), 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{"by wire": sorted(wireIDs(byWire)), "by wire in alice": sorted(wireIDs(inChat)),
		"by key": sorted(wireIDs(byKey)), "pinned": wireIDs(pins)}
	want := map[string][]string{"by wire": {"I1", "T1"}, "by wire in alice": {"T1"}, "by key": {"P1"}, "pinned": {"X1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A chat's count and oldest message are the store's, not the queue's.
func TestChatHistory(t *testing.T) {
	s := openStore(t)
	seedMessages(t, s, theMessages...)
	seedMessages(t, s, seedMsg{to: carol, at: at(1, 0), queued: true})
	type history struct {
		Count  int
		Oldest time.Time
		Any    bool
	}
	got := map[string]history{}
	for _, c := range []string{alice, bob, carol} {
		n, err := s.CountMessages(wsr, c)
		if err != nil {
			t.Fatal(err)
		}
		oldest, ok, err := s.OldestMessageAt(wsr, c)
		if err != nil {
			t.Fatal(err)
		}
		got[c] = history{n, oldest.UTC(), ok}
	}
	want := map[string]history{alice: {2, at(9, 0), true}, bob: {1, at(12, 0), true}, carol: {0, time.Time{}, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	conn, err := s.MessageConnection(wsr, bob, inbox.Cursors{First: ptr(10)})
	if err != nil {
		t.Fatal(err)
	}
	if conn.TotalCount != 1 || len(conn.Edges) != 1 || conn.Edges[0].Node.WaID != "D1" {
		t.Errorf("bob's connection: %d in all, %d edges; want D1 alone", conn.TotalCount, len(conn.Edges))
	}
}

// KeepMedia records where a download is served, unless the message's media URL
// changed since it was read.
func TestKeepMedia(t *testing.T) {
	s := openStore(t)
	seedMessages(t, s, theMessages[3], theMessages[4])
	read := func(key string) *ent.Message {
		m, err := s.Message(wsr, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	fresh, stale := read("I1"), read("D1")
	if err := s.Client.Message.UpdateOne(stale).SetMediaURL("https://elsewhere.example/menu.pdf").Exec(wsr); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*ent.Message{fresh, stale} {
		err := storage.WithTx(wsr, s.Client, func(tx *ent.Tx) error {
			return inbox.KeepMedia(wsr, tx, m, "/media/"+m.WaID, "image/webp", "kept", nil)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][3]string{}
	for _, key := range []string{"I1", "D1"} {
		m := read(key)
		got[key] = [3]string{m.MediaURL, m.MediaMime, m.MediaFilename}
	}
	want := map[string][3]string{"I1": {"/media/I1", "image/webp", "kept"},
		"D1": {"https://elsewhere.example/menu.pdf", "application/pdf", "Lunch-menu.pdf"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// sorted sorts s and returns it.
func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
