package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Validate refuses, by type, what applying an event needs and does not have, and
// any text that PostgreSQL refuses; it names the field.
func TestValidateEvent(t *testing.T) {
	key := Key{Remote: "15551234567@c.us", ID: "3EB0AA"}
	in := &Incoming{Key: key, From: "15551234567@c.us", Type: "text", Text: "hi"}
	long := strings.Repeat("9", MaxIDLen+1)
	unread := -1
	tests := []validateCase{
		{"ack", Event{Type: EventAck, Key: key, Ack: AckRead}, ""},
		{"incoming message", Event{Type: EventMessage, Message: in}, ""},
		{"reaction of the account", Event{Type: EventReaction, Key: key, Reaction: "👍"}, ""},
		{"edit", Event{Type: EventEdited, Key: key, Message: &Incoming{From: "1@c.us", Text: "new"}}, ""},
		{"pin", Event{Type: EventPin, Key: key}, ""},
		{"group change", Event{Type: EventGroup, Group: &GroupChange{GroupID: "1-2@g.us", Action: "added", Participants: []string{"1@c.us"}}}, ""},
		{"group created", Event{Type: EventGroup, Group: &GroupChange{GroupID: "1-2@g.us", Action: GroupCreated, Chat: &ChatState{ID: "1-2@g.us", Kind: ChatGroup}}}, ""},
		{"chat", Event{Type: EventChat, Chat: &ChatState{ID: "1@c.us"}}, ""},
		{"history", Event{Type: EventHistory, History: &History{Chats: []ChatState{{ID: "1@c.us"}},
			Messages: []HistoryMessage{{Incoming: *in}}, Coverage: []Coverage{{ChatID: "1@c.us"}}}}, ""},

		{"no type", Event{Key: key}, "type is missing"},
		{"unknown type", Event{Type: "shout", Key: key}, `type "shout" is not an event type`},
		{"session event", Event{Type: EventConnected}, `type "connected" is not an event type`},
		{"message with an empty type", Event{Type: EventMessage, Message: &Incoming{Key: key, From: "1@c.us"}}, "message.type is missing"},
		{"message without a message", Event{Type: EventMessage, Key: key}, "message is missing"},
		{"message without a chat", Event{Type: EventMessage, Message: &Incoming{Key: Key{ID: "X"}, Type: "text"}}, "message.key.remote is missing"},
		{"ack without a key", Event{Type: EventAck, Ack: AckRead}, "key.remote is missing"},
		{"ack without an id", Event{Type: EventAck, Key: Key{Remote: "1@c.us"}}, "key.id is missing"},
		{"ack out of range", Event{Type: EventAck, Key: key, Ack: 9}, "ack must be between -1 and 4"},
		{"NUL in text", Event{Type: EventMessage, Message: &Incoming{Key: key, Type: "text", Text: "a\x00b"}}, "message.text must be valid UTF-8 text without NUL bytes"},
		{"invalid UTF-8", Event{Type: EventAck, Key: Key{Remote: "1@c.us", ID: "\xc0\xaf"}}, "key.id must be valid UTF-8 text without NUL bytes"},
		{"NUL in a history message", Event{Type: EventHistory, History: &History{Messages: []HistoryMessage{{Incoming: Incoming{Key: key, Text: "\x00"}}}}}, "history.messages.0.text must be valid UTF-8 text without NUL bytes"},
		{"long chat id", Event{Type: EventChat, Chat: &ChatState{ID: long}}, "chat.id is longer than 256 bytes"},
		{"long event id", Event{ID: long, Type: EventAck, Key: key}, "id is longer than 256 bytes"},
		{"chat of an odd kind", Event{Type: EventChat, Chat: &ChatState{ID: "1@c.us", Kind: "room"}}, "chat.kind must be contact, group or newsletter"},
		{"negative unread count", Event{Type: EventChat, Chat: &ChatState{ID: "1@c.us", UnreadCount: &unread}}, "chat.unreadCount must not be negative"},
		{"group without a group", Event{Type: EventGroup}, "group is missing"},
		{"group without an action", Event{Type: EventGroup, Group: &GroupChange{GroupID: "1-2@g.us"}}, "group.action is missing"},
		{"group without an id", Event{Type: EventGroup, Group: &GroupChange{Action: "added"}}, "group.groupId is missing"},
		{"empty participant", Event{Type: EventGroup, Group: &GroupChange{GroupID: "1-2@g.us", Action: "added", Participants: []string{""}}}, "group.participants.0 is missing"},
		{"group created without its chat", Event{Type: EventGroup, Group: &GroupChange{GroupID: "1-2@g.us", Action: GroupCreated}}, "group.chat is missing"},
		{"history without history", Event{Type: EventHistory}, "history is missing"},
		{"history contact without an id", Event{Type: EventHistory, History: &History{Contacts: []ContactInfo{{Name: "x"}}}}, "history.contacts.0.id is missing"},
		{"negative pin", Event{Type: EventPin, Key: key, Pinned: -1}, "pinnedMs must not be negative"},

		{"mapping learned", Event{Type: EventHistory, History: &History{Contacts: []ContactInfo{{ID: "15551234567@c.us", LID: "88881234@lid"}}}}, ""},
		{"LID-only contact", Event{Type: EventHistory, History: &History{Contacts: []ContactInfo{{ID: "88881234@lid"}}}}, ""},
		{"mapping to a malformed LID", Event{Type: EventHistory, History: &History{Contacts: []ContactInfo{{ID: "15551234567@c.us", LID: "88x@lid"}}}}, "history.contacts.0.lid must be <digits>@lid"},
		{"mapping of a LID to a LID", Event{Type: EventHistory, History: &History{Contacts: []ContactInfo{{ID: "77@lid", LID: "88@lid"}}}}, "history.contacts.0.id must be <digits>@c.us when lid is given"},
		{"mapping of a group", Event{Type: EventHistory, History: &History{Contacts: []ContactInfo{{ID: "1-2@g.us", LID: "88@lid"}}}}, "history.contacts.0.id must be <digits>@c.us when lid is given"},
		{"message by LID in its phone chat", Event{Type: EventMessage, Message: &Incoming{Key: Key{Remote: "88@lid", ID: "X"}, Chat: "15551234567@c.us", Type: "text"}}, ""},
		{"message in another chat than its key", Event{Type: EventMessage, Message: &Incoming{Key: key, Chat: "15559999999@c.us", Type: "text"}}, "message.chat may differ from key.remote only for a key by LID (<digits>@lid)"},
		{"message by LID in a group", Event{Type: EventMessage, Message: &Incoming{Key: Key{Remote: "88@lid", ID: "X"}, Chat: "1-2@g.us", Type: "text"}}, "message.chat must be <digits>@c.us"},
		{"history message by LID in another LID", Event{Type: EventHistory, History: &History{Messages: []HistoryMessage{{Incoming: Incoming{Key: Key{Remote: "88@lid", ID: "X"}, Chat: "99@lid"}}}}}, "history.messages.0.chat must be <digits>@c.us"},
	}
	checkReasons(t, tests)
}

// validateCase is an event and the reason Validate gives for it ("" for a
// valid event).
type validateCase struct {
	name string
	ev   Event
	want string
}

// checkReasons compares the reasons Validate gives for each case with the
// wanted ones; every refusal wraps ErrInvalidEvent.
func checkReasons(t *testing.T, tests []validateCase) {
	t.Helper()
	got, want := map[string]string{}, map[string]string{}
	for _, tt := range tests {
		err := tt.ev.Validate()
		if err != nil && !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("%s: %v does not wrap ErrInvalidEvent", tt.name, err)
		}
		got[tt.name], want[tt.name] = "", tt.want
		if err != nil {
			got[tt.name] = strings.TrimPrefix(err.Error(), ErrInvalidEvent.Error()+": ")
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}
