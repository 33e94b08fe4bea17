package inbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// open returns an inbox on a new embedded database.
func open(t *testing.T) *inbox.Inbox {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	return &inbox.Inbox{Client: client}
}

var sys = viewer.SystemContext(context.Background())

// reported is an event a test stores: a change of a chat's name, reported by
// engine for workspace, observed at t0+at. A bad one cannot be applied (its
// payload does not decode), as an event that keeps failing.
type reported struct {
	id, workspace, engine, chat, name string
	at                                time.Duration
	bad                               bool
}

var t0 = time.Now().Add(-time.Hour).Truncate(time.Millisecond)

func (r reported) event() engine.Event {
	return engine.Event{ID: r.id, Type: engine.EventChat, WorkspaceID: r.workspace, EngineID: r.engine,
		At: t0.Add(r.at), Chat: &engine.ChatState{ID: r.chat, Name: r.name}}
}

// store stores the events one at a time, in the order given.
func store(t *testing.T, in *inbox.Inbox, evs []reported) {
	t.Helper()
	for _, r := range evs {
		ev := r.event()
		if !r.bad {
			if err := in.HandleEvent(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			continue
		}
		err := in.Client.InboxEvent.Create().SetWorkspaceID(r.workspace).SetDedupeKey(r.id).SetType(string(ev.Type)).
			SetSubject(ev.OrderKey()).SetPayload(json.RawMessage(`{"at":"not a time"}`)).SetAt(ev.At).SetNextAttemptAt(ev.At).
			Exec(sys)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// state is where a stored event stands: applied, failed (to be retried), dead,
// or waiting (for an earlier event of its order key).
func state(e *ent.InboxEvent) string {
	switch {
	case e.AppliedAt != nil:
		return "applied"
	case e.DeadAt != nil:
		return "dead"
	case e.Attempts > 0:
		return "failed"
	case e.LastError != "":
		return "waiting"
	}
	return "stored"
}

func states(t *testing.T, in *inbox.Inbox) map[string]string {
	t.Helper()
	rows, err := in.Client.InboxEvent.Query().All(sys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[eventID(r)] = state(r)
	}
	return out
}

// eventID is the id the engine gave a stored event (its dedupe key is
// "<engine>|<id>").
func eventID(r *ent.InboxEvent) string {
	if _, id, ok := strings.Cut(r.DedupeKey, "|"); ok {
		return id
	}
	return r.DedupeKey
}

// names are the names of the chats the store holds, by "<workspace> <chat>".
func names(t *testing.T, in *inbox.Inbox, workspaces ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ws := range workspaces {
		chats, err := in.Client.Chat.Query().Order(ent.Asc(chat.FieldJid)).All(viewer.WorkspaceContext(context.Background(), ws))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chats {
			out[ws+" "+c.Jid] = c.Name
		}
	}
	return out
}

const (
	chatX = "15550001111@c.us"
	chatY = "15550002222@c.us"
)

// The events of one order key apply in the order the network observed them,
// even when stored (and claimed in one batch) in another order; an event that
// fails holds up only the later events of its own order key, which is scoped
// to a workspace and an engine.
func TestEventsApplyInOrder(t *testing.T) {
	tests := []struct {
		name       string
		stored     []reported
		wantStates map[string]string
		wantNames  map[string]string
	}{{
		name: "stored out of order, claimed in one batch",
		stored: []reported{
			{id: "third", workspace: "ws_a", engine: "eng_1", chat: chatX, name: "third", at: 3 * time.Second},
			{id: "first", workspace: "ws_a", engine: "eng_1", chat: chatX, name: "first", at: 1 * time.Second},
			{id: "second", workspace: "ws_a", engine: "eng_1", chat: chatX, name: "second", at: 2 * time.Second},
		},
		wantStates: map[string]string{"first": "applied", "second": "applied", "third": "applied"},
		wantNames:  map[string]string{"ws_a " + chatX: "third"},
	}, {
		name: "a failing event holds only its own subject",
		stored: []reported{
			{id: "bad", workspace: "ws_a", engine: "eng_1", chat: chatX, at: 1 * time.Second, bad: true},
			{id: "later", workspace: "ws_a", engine: "eng_1", chat: chatX, name: "later", at: 2 * time.Second},
			{id: "other", workspace: "ws_a", engine: "eng_1", chat: chatY, name: "other", at: 3 * time.Second},
		},
		wantStates: map[string]string{"bad": "failed", "later": "waiting", "other": "applied"},
		wantNames:  map[string]string{"ws_a " + chatY: "other"},
	}, {
		name: "order keys are per workspace and engine",
		stored: []reported{
			{id: "bad", workspace: "ws_a", engine: "eng_1", chat: chatX, at: 1 * time.Second, bad: true},
			{id: "other-engine", workspace: "ws_a", engine: "eng_2", chat: chatX, name: "by eng_2", at: 2 * time.Second},
			{id: "other-workspace", workspace: "ws_b", engine: "eng_1", chat: chatX, name: "in ws_b", at: 3 * time.Second},
		},
		wantStates: map[string]string{"bad": "failed", "other-engine": "applied", "other-workspace": "applied"},
		wantNames:  map[string]string{"ws_a " + chatX: "by eng_2", "ws_b " + chatX: "in ws_b"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := open(t)
			store(t, in, tt.stored)
			n, err := in.ApplyOnce(context.Background(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if n != len(tt.stored) {
				t.Errorf("claimed %d events, want all %d in one batch", n, len(tt.stored))
			}
			if diff := cmp.Diff(tt.wantStates, states(t, in)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNames, names(t, in, "ws_a", "ws_b")); diff != "" {
				t.Errorf("chats (-want +got):\n%s", diff)
			}
		})
	}
}

// An event reported more than once (by its engine id) is stored once per
// workspace; an event without an id is stored each time.
func TestEventStoredOnce(t *testing.T) {
	ev := func(id, ws string) engine.Event {
		return reported{id: id, workspace: ws, engine: "eng_1", chat: chatX, name: "n", at: time.Second}.event()
	}
	// by is the event as another engine (a second number) of the workspace reports it.
	by := func(eng string, e engine.Event) engine.Event {
		e.EngineID = eng
		return e
	}
	tests := []struct {
		name    string
		batches [][]engine.Event
		want    map[string]int // workspace -> events stored
	}{
		{"twice in one batch", [][]engine.Event{{ev("e1", "ws_a"), ev("e1", "ws_a")}}, map[string]int{"ws_a": 1}},
		{"twice in two batches", [][]engine.Event{{ev("e1", "ws_a")}, {ev("e1", "ws_a")}}, map[string]int{"ws_a": 1}},
		{"one id in two workspaces", [][]engine.Event{{ev("e1", "ws_a"), ev("e1", "ws_b")}}, map[string]int{"ws_a": 1, "ws_b": 1}},
		{"no id", [][]engine.Event{{ev("", "ws_a")}, {ev("", "ws_a")}}, map[string]int{"ws_a": 2}},
		{"one id from two engines of a workspace", [][]engine.Event{{ev("e1", "ws_a"), by("eng_2", ev("e1", "ws_a"))}}, map[string]int{"ws_a": 2}},
		{"one id from one engine, twice", [][]engine.Event{{by("eng_2", ev("e1", "ws_a"))}, {by("eng_2", ev("e1", "ws_a"))}}, map[string]int{"ws_a": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := open(t)
			for _, b := range tt.batches {
				if err := in.HandleEvents(context.Background(), b); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := in.Client.InboxEvent.Query().All(sys)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, r := range rows {
				got[r.WorkspaceID]++
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stored events by workspace (-want +got):\n%s", diff)
			}
		})
	}
}

// An event that keeps failing is tried MaxAttempts times, then given up with
// its reason; the later event of its subject then applies.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	in := open(t)
	store(t, in, []reported{
		{id: "bad", workspace: "ws_a", engine: "eng_1", chat: chatX, at: time.Second, bad: true},
		{id: "later", workspace: "ws_a", engine: "eng_1", chat: chatX, name: "later", at: 2 * time.Second},
	})
	now := time.Now()
	passes := 0
	for ; passes < 2*inbox.MaxAttempts; passes++ {
		if _, err := in.ApplyOnce(context.Background(), now); err != nil {
			t.Fatal(err)
		}
		if states(t, in)["bad"] == "dead" {
			break
		}
		now = now.Add(time.Hour) // past any backoff
	}
	bad, err := in.Client.InboxEvent.Query().Where(inboxevent.DedupeKey("bad")).Only(sys)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Passes, Attempts int
		Dead, Says       bool
	}
	want := outcome{Passes: inbox.MaxAttempts - 1, Attempts: inbox.MaxAttempts, Dead: true, Says: true}
	got := outcome{passes, bad.Attempts, bad.DeadAt != nil, strings.Contains(bad.LastError, "decode")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("bad event (-want +got):\n%s\nlast error %q", diff, bad.LastError)
	}
	if _, err := in.ApplyOnce(context.Background(), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"bad": "dead", "later": "applied"}, states(t, in)); diff != "" {
		t.Errorf("after giving up (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ws_a " + chatX: "later"}, names(t, in, "ws_a")); diff != "" {
		t.Errorf("chats (-want +got):\n%s", diff)
	}
}

// An event that can never be applied is refused when it is reported: not
// stored, and not an error (the engine is not to report it again); the valid
// events beside it are stored. An event that names no workspace is an error.
func TestInvalidEventsRefused(t *testing.T) {
	valid := reported{id: "valid", workspace: "ws_a", engine: "eng_1", chat: chatX, name: "ok", at: time.Second}.event()
	with := func(id string, f func(*engine.Event)) engine.Event {
		ev := valid
		ev.ID = id
		f(&ev)
		return ev
	}
	tests := []struct {
		name    string
		ev      engine.Event
		want    []string // dedupe keys stored
		wantErr bool
	}{
		{"a NUL in a text", with("nul", func(ev *engine.Event) { ev.Chat = &engine.ChatState{ID: chatX, Name: "a\x00b"} }), []string{"valid"}, false},
		{"invalid UTF-8", with("utf8", func(ev *engine.Event) { ev.Chat = &engine.ChatState{ID: chatX, Name: "a\xffb"} }), []string{"valid"}, false},
		{"an unknown type", with("type", func(ev *engine.Event) { ev.Type = "teleport" }), []string{"valid"}, false},
		{"a chat event without its chat", with("nochat", func(ev *engine.Event) { ev.Chat = nil }), []string{"valid"}, false},
		{"an ack out of range", with("ack", func(ev *engine.Event) {
			ev.Type, ev.Chat, ev.Key, ev.Ack = engine.EventAck, nil, engine.Key{Remote: chatX, ID: "3EB0"}, 99
		}), []string{"valid"}, false},
		{"a session event (the server's own)", with("gone", func(ev *engine.Event) { ev.Type, ev.Chat = engine.EventGone, nil }),
			[]string{"gone", "valid"}, false},
		{"no workspace", with("nows", func(ev *engine.Event) { ev.WorkspaceID = "" }), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := open(t)
			err := in.HandleEvents(context.Background(), []engine.Event{valid, tt.ev})
			if (err != nil) != tt.wantErr {
				t.Fatalf("HandleEvents = %v, want error %v", err, tt.wantErr)
			}
			rows, err := in.Client.InboxEvent.Query().Order(ent.Asc(inboxevent.FieldDedupeKey)).All(sys)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, eventID(r))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}
