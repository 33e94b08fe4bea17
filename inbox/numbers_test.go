package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chatmember"
	"github.com/switchboardhq/switchboard/ent/contact"
)

// Two numbers (engines) of one workspace report what they see: each message is
// stored with the engine that reported it, two engines' messages never
// overwrite each other (not even under the same event id), a group message both
// receive is one message (the first engine's), and a chat's engine is the one
// of its latest message.
func TestTwoEnginesKeepTheirMessagesApart(t *testing.T) {
	in := open(t)
	const ws, carol, group, dave = "ws_n", "15550000001@c.us", "120363000000000001@g.us", "15550000002@c.us"
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	incoming := func(id, engineID, chat, wire, from string, after time.Duration) engine.Event {
		k := engine.Key{Remote: chat, ID: wire}
		if chat == group {
			k.Participant = from
		}
		return engine.Event{ID: id, Type: engine.EventMessage, WorkspaceID: ws, EngineID: engineID, At: at.Add(after),
			Key: k, Message: &engine.Incoming{Key: k, From: from, Type: "text", Text: wire}}
	}
	evs := []engine.Event{
		// The same event id from both engines: two different messages.
		incoming("ev1", "eng_a", carol, "3EB0A1", carol, 0),
		incoming("ev1", "eng_b", carol, "3EB0B1", carol, time.Second),
		// One group message both numbers receive: a's report came first.
		incoming("ga", "eng_a", group, "3EB0G1", dave, 2*time.Second),
		incoming("gb", "eng_b", group, "3EB0G1", dave, 3*time.Second),
		{ID: "members", Type: engine.EventChat, WorkspaceID: ws, EngineID: "eng_b", At: at.Add(4 * time.Second),
			Chat: &engine.ChatState{ID: group, Name: "G", Participants: []engine.Participant{{ID: dave}}}},
	}
	for _, ev := range evs {
		if err := in.HandleEvent(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if _, err := in.ApplyOnce(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := in.Client.Message.Query().Order(ent.Asc("created_at")).All(sys)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range msgs {
		got[m.WaID] = m.EngineID
	}
	if d := cmp.Diff(map[string]string{"3EB0A1": "eng_a", "3EB0B1": "eng_b", "3EB0G1": "eng_a"}, got); d != "" {
		t.Errorf("messages' engines (-want +got):\n%s", d)
	}
	chats := map[string]string{}
	for _, c := range in.Client.Chat.Query().AllX(sys) {
		chats[c.Jid] = c.EngineID
	}
	if d := cmp.Diff(map[string]string{carol: "eng_b", group: "eng_a"}, chats); d != "" {
		t.Errorf("chats' engines (-want +got):\n%s", d)
	}
	if c := in.Client.Contact.Query().Where(contact.Jid(carol)).OnlyX(sys); c.EngineID != "eng_b" {
		t.Errorf("carol's engine = %q, want eng_b (the last to report her)", c.EngineID)
	}
	if m := in.Client.ChatMember.Query().Where(chatmember.MemberJid(dave)).OnlyX(sys); m.EngineID != "eng_b" {
		t.Errorf("dave's membership engine = %q, want eng_b", m.EngineID)
	}
}
