package inbox_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// A person WhatsApp first showed by LID, then by phone number.
const (
	dan    = "15550000077@c.us"
	danLID = "77000000077@lid"
)

// lidWorld is an inbox of workspace ws_l with a webhook that takes chat.merged
// and the new-message events.
func lidWorld(t *testing.T) (*inbox.Inbox, context.Context) {
	t.Helper()
	in := open(t)
	ctx := viewer.WorkspaceContext(context.Background(), "ws_l")
	err := in.Client.Webhook.Create().SetURL("https://example.com/hook").SetSecret("whsec_x").
		SetEvents([]string{wh.EventChatMerged, wh.EventNewMessageReceived}).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return in, ctx
}

// report stores the events (of workspace ws_l) in order and applies them all.
func report(t *testing.T, in *inbox.Inbox, evs ...engine.Event) {
	t.Helper()
	for i := range evs {
		evs[i].WorkspaceID, evs[i].EngineID = "ws_l", "eng_1"
		if err := in.HandleEvent(context.Background(), evs[i]); err != nil {
			t.Fatal(err)
		}
		// One at a time: the test states the order the network observed.
		for {
			n, err := in.ApplyOnce(context.Background(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
	}
}

// incoming is a text message from Dan with network id id, on the address remote.
func incoming(id, remote string, at time.Time) engine.Event {
	k := engine.Key{Remote: remote, ID: id}
	return engine.Event{ID: "msg_" + id + remote, Type: engine.EventMessage, At: at, Key: k,
		Message: &engine.Incoming{Key: k, From: remote, SenderName: "Dan", Type: "text", Text: "hi " + id}}
}

// mapping is the engine telling that Dan's LID is his number.
func mapping(at time.Time) engine.Event {
	return engine.Event{ID: "map", Type: engine.EventHistory, At: at,
		History: &engine.History{Contacts: []engine.ContactInfo{{ID: dan, LID: danLID}}}}
}

// chatRow is what the tests compare of a chat.
type chatRow struct {
	Jid              string
	Unread           int
	Pinned, Archived bool
	LastText         string
	Messages         []string // wire keys, oldest first
	MessageFrom      []string
}

func chatsOf(t *testing.T, in *inbox.Inbox, ctx context.Context) []chatRow {
	t.Helper()
	chats, err := in.Client.Chat.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []chatRow
	for _, c := range chats {
		msgs, err := in.Client.Message.Query().Where(message.To(c.Jid)).Order(message.ByCreatedAt()).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := chatRow{Jid: c.Jid, Unread: c.UnreadCount, Pinned: c.Pinned, Archived: c.Archived, LastText: c.LastMessageText}
		for _, m := range msgs {
			r.Messages = append(r.Messages, m.WaSerialized)
			r.MessageFrom = append(r.MessageFrom, m.From)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Jid < out[j].Jid })
	return out
}

// merges are the chat.merged events recorded, as from->to.
func merges(t *testing.T, in *inbox.Inbox, ctx context.Context) []string {
	t.Helper()
	evs, err := in.Client.Event.Query().Where(event.Type(wh.EventChatMerged)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		var d inbox.ChatMerged
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.From+"->"+d.To)
	}
	return out
}

// A LID-only chat is merged into the phone chat once the mapping is learned:
// its messages move (keys as the network sent them), unread counts add, a
// message seen by both addresses is kept once, the LID chat goes, chat.merged
// tells it; later messages by LID go straight to the phone chat.
func TestLIDChatMerge(t *testing.T) {
	b := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	pin := func(id, remote string, at time.Time) engine.Event {
		return engine.Event{ID: "pin_" + id, Type: engine.EventPin, At: at, Key: engine.Key{Remote: remote, ID: id}, Pinned: time.Hour}
	}
	state := func(jid string, pinned, archived bool, at time.Time) engine.Event {
		return engine.Event{ID: "chat_" + jid, Type: engine.EventChat, At: at,
			Chat: &engine.ChatState{ID: jid, Pinned: &pinned, Archived: &archived}}
	}
	tests := []struct {
		name   string
		events []engine.Event
		want   []chatRow
		merged []string
	}{
		{
			name:   "LID only, no mapping: its own chat",
			events: []engine.Event{incoming("A1", danLID, b), incoming("A2", danLID, b.Add(time.Minute))},
			want: []chatRow{{Jid: danLID, Unread: 2, LastText: "hi A2", Messages: []string{"false_" + danLID + "_A1", "false_" + danLID + "_A2"},
				MessageFrom: []string{danLID, danLID}}},
		},
		{
			name: "merged into the phone chat: messages, unread, pins, archive",
			events: []engine.Event{
				incoming("P1", dan, b), state(dan, false, true, b.Add(time.Second)),
				incoming("A1", danLID, b.Add(time.Minute)), pin("A1", danLID, b.Add(2*time.Minute)),
				state(danLID, true, false, b.Add(3*time.Minute)),
				mapping(b.Add(4 * time.Minute)),
			},
			want: []chatRow{{Jid: dan, Unread: 2, Pinned: true, LastText: "hi A1",
				Messages: []string{"false_" + dan + "_P1", "false_" + danLID + "_A1"}, MessageFrom: []string{dan, dan}}},
			merged: []string{danLID + "->" + dan},
		},
		{
			name: "archived on both sides stays archived",
			events: []engine.Event{
				incoming("P1", dan, b), state(dan, false, true, b.Add(time.Second)),
				incoming("A1", danLID, b.Add(time.Minute)), state(danLID, false, true, b.Add(2*time.Minute)),
				mapping(b.Add(4 * time.Minute)),
			},
			want: []chatRow{{Jid: dan, Unread: 2, Archived: true, LastText: "hi A1",
				Messages: []string{"false_" + dan + "_P1", "false_" + danLID + "_A1"}, MessageFrom: []string{dan, dan}}},
			merged: []string{danLID + "->" + dan},
		},
		{
			name: "a message seen by both addresses is kept once, its pin kept",
			events: []engine.Event{
				incoming("P1", dan, b), incoming("X", danLID, b.Add(time.Minute)), pin("X", danLID, b.Add(2*time.Minute)),
				incoming("X", dan, b.Add(time.Minute)),
				mapping(b.Add(4 * time.Minute)),
			},
			want: []chatRow{{Jid: dan, Unread: 2, LastText: "hi X",
				Messages: []string{"false_" + dan + "_P1", "false_" + dan + "_X"}, MessageFrom: []string{dan, dan}}},
			merged: []string{danLID + "->" + dan},
		},
		{
			name: "after the mapping: a LID message goes to the phone chat, a repeat by number is the same message",
			events: []engine.Event{
				incoming("P1", dan, b), mapping(b.Add(time.Minute)),
				incoming("A2", danLID, b.Add(2*time.Minute)), incoming("A2", dan, b.Add(2*time.Minute)),
			},
			want: []chatRow{{Jid: dan, Unread: 2, LastText: "hi A2",
				Messages: []string{"false_" + dan + "_P1", "false_" + danLID + "_A2"}, MessageFrom: []string{dan, dan}}},
		},
		{
			name:   "a mapping with nothing by LID merges nothing",
			events: []engine.Event{incoming("P1", dan, b), mapping(b.Add(time.Minute))},
			want: []chatRow{{Jid: dan, Unread: 1, LastText: "hi P1", Messages: []string{"false_" + dan + "_P1"},
				MessageFrom: []string{dan}}},
		},
		{
			name:   "a LID chat alone becomes the phone chat",
			events: []engine.Event{incoming("A1", danLID, b), state(danLID, false, true, b.Add(time.Second)), mapping(b.Add(time.Minute))},
			want: []chatRow{{Jid: dan, Unread: 1, Archived: true, LastText: "hi A1", Messages: []string{"false_" + danLID + "_A1"},
				MessageFrom: []string{dan}}},
			merged: []string{danLID + "->" + dan},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, ctx := lidWorld(t)
			report(t, in, tt.events...)
			if diff := cmp.Diff(tt.want, chatsOf(t, in, ctx)); diff != "" {
				t.Errorf("chats (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.merged, merges(t, in, ctx)); diff != "" {
				t.Errorf("chat.merged (-want +got):\n%s", diff)
			}
		})
	}
}

// After a merge the contact carries both forms and answers by either; the
// LID-only contact's names move to it; the LID chat id answers the phone chat;
// acks, reactions and pins by either address find the message.
func TestLIDContactAndKeys(t *testing.T) {
	in, ctx := lidWorld(t)
	b := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	sent := engine.Key{FromMe: true, Remote: dan, ID: "3EB0SENT"}
	if err := in.Client.Message.Create().SetTo(dan).SetType("text").SetText("hello").SetStatus("confirmed").
		SetWaID(sent.ID).SetWaSerialized(sent.Serialized()).SetOrigin(message.OriginDirect).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	byLID := sent
	byLID.Remote = danLID
	report(t, in, incoming("A1", danLID, b), mapping(b.Add(time.Minute)),
		engine.Event{ID: "ack", Type: engine.EventAck, At: b.Add(2 * time.Minute), Key: byLID, Ack: engine.AckRead},
		engine.Event{ID: "react", Type: engine.EventReaction, At: b.Add(3 * time.Minute), Key: engine.Key{Remote: dan, ID: "A1"}, Reaction: "👍"})
	s := inbox.Store{Client: in.Client}
	type contactView struct{ Jid, Lid, PushName string }
	var got []contactView
	for _, id := range []string{dan, danLID} {
		c, err := s.Contact(ctx, id)
		if err != nil {
			t.Fatalf("contact %s: %v", id, err)
		}
		got = append(got, contactView{c.Jid, c.Lid, c.PushName})
	}
	want := []contactView{{dan, danLID, "Dan"}, {dan, danLID, "Dan"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contacts by either form (-want +got):\n%s", diff)
	}
	if n, err := in.Client.Contact.Query().Count(ctx); err != nil || n != 1 {
		t.Errorf("contacts: %d (%v), want Dan once", n, err)
	}
	c, err := s.Chat(ctx, danLID)
	if err != nil || c.Jid != dan {
		t.Errorf("chat by LID after the merge: %v, %v; want the phone chat", c, err)
	}
	m, err := in.Client.Message.Query().Where(message.WaSerialized(sent.Serialized())).Only(ctx)
	if err != nil || m.Status != "read" {
		t.Errorf("own message acked by LID: %+v, %v; want read", m, err)
	}
	r, err := in.Client.Message.Query().Where(message.WaID("A1")).Only(ctx)
	if err != nil || r.Reaction != "👍" || r.WaSerialized != "false_"+danLID+"_A1" {
		t.Errorf("reaction by number to a message keyed by LID: %+v, %v", r, err)
	}
}
