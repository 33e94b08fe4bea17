package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// A number ending in 77 hides behind its LID: written to by LID or by number,
// it is received and read, reveals its number (the mapping) and replies by LID
// in its phone-number chat; its LID is 9 and its digits reversed.
func TestNumbersEndingIn77RevealThemselves(t *testing.T) {
	const phone, lid = "15550000077@c.us", "977000005551@lid"
	if got := sandbox.LIDOf(phone); got != lid {
		t.Fatalf("LIDOf(%s) = %s, want %s", phone, got, lid)
	}
	type seen struct {
		Type         engine.EventType
		Ack          engine.Ack
		Key, Chat    string
		Mapping      []engine.ContactInfo
		Quoted, Text string
	}
	for _, to := range []string{lid, phone} {
		t.Run(to, func(t *testing.T) {
			client, _ := storagetest.SQLite(t)
			s := &sink{}
			net := sandbox.NewNetwork(client, time.Millisecond, s)
			key, err := net.Engine("ws_lid").Send(context.Background(), engine.Outgoing{WireID: "3EB0LID000000000000001", To: to, Type: "text", Text: "hi"})
			if err != nil || key.Remote != to {
				t.Fatalf("Send = %+v, %v", key, err)
			}
			if _, err := net.ReportDue(context.Background(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			var got []seen
			for _, ev := range s.evs {
				r := seen{Type: ev.Type, Ack: ev.Ack, Key: ev.Key.Serialized()}
				if ev.History != nil {
					r.Key, r.Mapping = "", ev.History.Contacts
				}
				if ev.Message != nil {
					r.Chat, r.Quoted, r.Text = ev.Message.Chat, ev.Message.QuotedKey, ev.Message.Text
				}
				got = append(got, r)
			}
			sent := key.Serialized()
			want := []seen{
				{Type: engine.EventAck, Ack: engine.AckDevice, Key: sent},
				{Type: engine.EventAck, Ack: engine.AckRead, Key: sent},
				{Type: engine.EventHistory, Mapping: []engine.ContactInfo{{ID: phone, LID: lid}}},
				{Type: engine.EventMessage, Key: "false_" + lid + "_3EB1000000001", Chat: phone, Quoted: sent, Text: "Thanks, got it!"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
		})
	}
}

// The world shows it: the address book knows a number ending in 77 only by its
// LID, and its chat in the history is the LID chat; no mapping is told.
func TestWorldShowsLIDOnlyContacts(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	s := &sink{}
	net := sandbox.NewNetwork(client, time.Millisecond, s)
	if _, err := net.Engine("ws_world").SyncHistory(context.Background()); err != nil {
		t.Fatal(err)
	}
	var lidContacts, lidChats, mappings int
	for _, ev := range s.evs {
		if ev.History == nil {
			continue
		}
		for _, c := range ev.History.Contacts {
			if engine.IsLID(c.ID) {
				lidContacts++
				if c.Name != "" || c.Saved {
					t.Errorf("LID-only contact %+v has a saved name", c)
				}
			}
			if c.LID != "" {
				mappings++
			}
		}
		for _, c := range ev.History.Chats {
			if engine.IsLID(c.ID) {
				lidChats++
				for _, m := range ev.History.Messages {
					if m.Key.Remote != c.ID || (!m.FromMe && m.From != c.ID) {
						t.Errorf("message %+v of the LID chat %s is not by LID", m.Key, c.ID)
					}
				}
			}
		}
	}
	// Numbers ...0077 and ...0177 are in the book (220 contacts); the first has a chat.
	if lidContacts != 2 || lidChats != 1 || mappings != 0 {
		t.Errorf("LID-only contacts %d, LID chats %d, mappings %d; want 2, 1, 0", lidContacts, lidChats, mappings)
	}
}
