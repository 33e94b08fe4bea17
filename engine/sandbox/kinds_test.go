package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// A message to a number of sandbox.Kinds is answered with a valid message of
// that number's kind, quoting it.
func TestKindNumbersAnswerWithEveryKind(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	s := &sink{}
	net := sandbox.NewNetwork(client, time.Millisecond, s)
	eng := net.Engine("ws_kinds")
	want, got := map[string]string{}, map[string]string{}
	keys := map[string]string{}
	for digits, in := range sandbox.Kinds {
		to := "1555000" + digits + "@c.us"
		key, err := eng.Send(context.Background(), engine.Outgoing{To: to, WireID: "3EB0KIND" + digits, Type: "text", Text: "send me one"})
		if err != nil {
			t.Fatal(err)
		}
		want[to], keys[to] = in.WireType(), key.Serialized()
	}
	if _, err := net.ReportDue(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range s.evs {
		if ev.Type != engine.EventMessage {
			continue
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("%s: invalid event: %v", ev.Message.From, err)
		}
		if ev.Message.QuotedKey != keys[ev.Message.From] {
			t.Errorf("%s quotes %q, want %q", ev.Message.From, ev.Message.QuotedKey, keys[ev.Message.From])
		}
		got[ev.Message.From] = ev.Message.WireType()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wire types of the answers (-want +got):\n%s", diff)
	}
}

// A number ending in sandbox.EchoSuffix sends back what it got, quoting it: a
// location, contact cards, media of the same kind, a poll's question; each
// answer is a valid event with the content sent.
func TestEchoNumberSendsBackEveryKind(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	s := &sink{}
	net := sandbox.NewNetwork(client, time.Millisecond, s)
	eng := net.Engine("ws_echo")
	loc := &engine.Location{Latitude: 48.8584, Longitude: 2.2945, Name: "Eiffel Tower"}
	cards := []engine.ContactCard{{DisplayName: "Ann", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nEND:VCARD"},
		{DisplayName: "Bob", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nEND:VCARD"}}
	sends := []engine.Outgoing{
		{Type: "text", Text: "hello"},
		{Type: engine.TypeLocation, Location: loc},
		{Type: engine.TypeVCard, Contacts: cards},
		{Type: "media", MediaKind: "sticker", MediaURL: "https://media.example/s.webp"},
		{Type: "poll", PollQuestion: "Lunch?", PollOptions: []string{"Pizza", "Sushi"}},
	}
	want := map[string]engine.Incoming{}
	for i, out := range sends {
		out.To, out.WireID = fmt.Sprintf("155500%02d"+sandbox.EchoSuffix+"@c.us", i), fmt.Sprintf("3EB0ECHO%d", i)
		key, err := eng.Send(context.Background(), out)
		if err != nil {
			t.Fatal(err)
		}
		want[out.To] = engine.Incoming{From: out.To, Type: out.Type, Text: out.Text, Location: out.Location,
			Contacts: out.Contacts, QuotedKey: key.Serialized()}
	}
	w := want["15550003"+sandbox.EchoSuffix+"@c.us"]
	w.Media = &engine.MediaInfo{Kind: "sticker"}
	want["15550003"+sandbox.EchoSuffix+"@c.us"] = w
	w = want["15550004"+sandbox.EchoSuffix+"@c.us"]
	w.Type, w.Text = "text", "Lunch?"
	want["15550004"+sandbox.EchoSuffix+"@c.us"] = w
	if _, err := net.ReportDue(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.Incoming{}
	for _, ev := range s.evs {
		if ev.Type != engine.EventMessage {
			continue
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("%s: invalid event: %v", ev.Message.From, err)
		}
		m := *ev.Message
		m.Key, m.SenderName = engine.Key{}, ""
		got[m.From] = m
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("echoes (-want +got):\n%s", diff)
	}
}
