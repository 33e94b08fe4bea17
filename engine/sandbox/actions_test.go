package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// The sandbox acts like a phone: it edits and deletes the account's own
// messages, deletes a participant's message only in a group the account is an
// admin of, and reports each change as the phone would.
func TestSandboxMessageActions(t *testing.T) {
	const ws = "ws_actions"
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	client, _ := storagetest.SQLite(t)
	s := &sink{}
	net := sandbox.NewNetwork(client, time.Millisecond, s)
	net.Phone = "+15550001111"
	eng := net.Engine(ws)
	group, _, err := eng.CreateGroup(ctx, "Actions", []string{"15550003333@c.us"})
	if err != nil {
		t.Fatal(err)
	}
	s.evs = nil
	mine := engine.Key{FromMe: true, Remote: "15550003333@c.us", ID: "3EB0MINE"}
	theirsInGroup := engine.Key{Remote: group, ID: "3EB0G", Participant: "15550003333@c.us"}
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"edit own", func() error { return eng.Edit(ctx, mine, "fixed", "") }, nil},
		{"edit a caption", func() error { return eng.Edit(ctx, mine, "caption", "image") }, nil},
		{"edit someone else's", func() error { return eng.Edit(ctx, engine.Key{Remote: "15550003333@c.us", ID: "X"}, "x", "") }, engine.ErrRejected},
		{"revoke own", func() error { return eng.Revoke(ctx, mine) }, nil},
		{"revoke a participant's as the group's admin", func() error { return eng.Revoke(ctx, theirsInGroup) }, nil},
		{"revoke in a group the network does not know", func() error {
			return eng.Revoke(ctx, engine.Key{Remote: "120363999999999999@g.us", ID: "X", Participant: "15550003333@c.us"})
		}, engine.ErrRejected},
		{"revoke a contact's", func() error { return eng.Revoke(ctx, engine.Key{Remote: "15550003333@c.us", ID: "X"}) }, engine.ErrRejected},
	}
	for _, tt := range tests {
		if err := tt.do(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	type change struct {
		Type            engine.EventType
		Key, From, Kind string
		Text            string
	}
	var got []change
	for _, ev := range s.evs {
		got = append(got, change{Type: ev.Type, Key: ev.Key.Serialized(), From: ev.Message.From, Kind: ev.Message.Type, Text: ev.Message.Text})
	}
	want := []change{
		{engine.EventEdited, mine.Serialized(), "15550001111@c.us", "text", "fixed"},
		{engine.EventEdited, mine.Serialized(), "15550001111@c.us", "media", "caption"},
		{engine.EventRevoked, mine.Serialized(), "15550001111@c.us", "", ""},
		{engine.EventRevoked, theirsInGroup.Serialized(), "15550001111@c.us", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reported changes (-want +got):\n%s", diff)
	}
	if err := eng.SetChatPresence(ctx, "15550003333@c.us", "dancing"); !errors.Is(err, engine.ErrRejected) {
		t.Errorf("an unknown presence: %v", err)
	}
}
