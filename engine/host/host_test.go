package host

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// Every gateway status maps to the state and stream the API shows.
func TestRowState(t *testing.T) {
	type shown struct {
		State  engine.State
		Stream string
	}
	for _, c := range []struct {
		status    gateway.Status
		connected bool
		want      shown
	}{
		{gateway.StatusUnpaired, false, shown{"UNPAIRED", "closed"}},
		{gateway.StatusPairing, false, shown{"PAIRING", "connecting"}},
		{gateway.StatusConnecting, false, shown{"OPENING", "connecting"}},
		{gateway.StatusConnected, true, shown{"CONNECTED", "open"}},
		{gateway.StatusDisconnected, false, shown{"DISCONNECTED", "closed"}},
		{gateway.StatusLoggedOut, false, shown{"LOGGED_OUT", "closed"}},
		{gateway.StatusBanned, false, shown{"BANNED", "closed"}},
		{gateway.StatusReplaced, false, shown{"CONFLICT", "closed"}},
		{gateway.StatusClosed, false, shown{"DISCONNECTED", "closed"}},
	} {
		s := gateway.State{Status: c.status, Connected: c.connected}
		if diff := cmp.Diff(c.want, shown{RowState(s), stream(s)}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.status, diff)
		}
	}
}

// The engine's hooks into the message store: the anchor of an older-history
// request and the options of a poll, each within the engine's workspace.
func TestMessageStoreHooks(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + t.TempDir() + "/host.db"
	client, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := storage.Migrate(ctx, client, url); err != nil {
		t.Fatal(err)
	}
	chat := "15550001234@c.us"
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	add := func(ws, id string, at time.Time, options ...string) {
		t.Helper()
		key := engine.Key{FromMe: false, Remote: chat, ID: id}
		c := client.Message.Create().SetOrigin(message.OriginHistory).SetTo(chat).SetType("text").SetFromMe(false).
			SetWaID(id).SetWaSerialized(key.Serialized()).SetCreatedAt(at)
		if len(options) > 0 {
			c.SetType("poll").SetPollOptions(options)
		}
		if err := c.Exec(viewer.WorkspaceContext(ctx, ws)); err != nil {
			t.Fatal(err)
		}
	}
	add("ws_a", "OLDEST", base)
	add("ws_a", "MIDDLE", base.Add(time.Hour), "yes", "no")
	add("ws_b", "OTHERS", base.Add(-time.Hour), "theirs")
	h := &Host{Client: client}

	type anchor struct {
		Key   engine.Key
		At    time.Time
		Found bool
	}
	for _, c := range []struct {
		name   string
		before time.Time
		want   anchor
	}{
		{"oldest of the workspace", base.Add(2 * time.Hour), anchor{engine.Key{Remote: chat, ID: "OLDEST"}, base, true}},
		{"nothing older", base, anchor{}},
	} {
		k, at, found, err := h.oldestMessage("ws_a")(ctx, chat, c.before)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, anchor{k, at.UTC(), found}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	opts, err := h.pollOptions("ws_a")(ctx, engine.Key{Remote: chat, ID: "MIDDLE"})
	if err != nil || !cmp.Equal(opts, []string{"yes", "no"}) {
		t.Errorf("poll options = %v, %v", opts, err)
	}
	if opts, err := h.pollOptions("ws_a")(ctx, engine.Key{Remote: chat, ID: "OTHERS"}); err != nil || opts != nil {
		t.Errorf("another workspace's poll = %v, %v", opts, err)
	}
}

// The unread messages of a chat, for the receipts of a mark-read: as many of
// its latest incoming messages as its unread count says, received by this
// engine, newest first, each under the key it came with.
func TestUnreadMessagesHook(t *testing.T) {
	ctx := context.Background()
	client, _ := storagetest.SQLite(t)
	chat := "15550001234@c.us"
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	wctx := viewer.WorkspaceContext(ctx, "ws_a")
	add := func(id, remote, engineID string, fromMe bool, at time.Time) {
		t.Helper()
		key := engine.Key{FromMe: fromMe, Remote: remote, ID: id}
		client.Message.Create().SetOrigin(message.OriginIncoming).SetTo(chat).SetType("text").SetFromMe(fromMe).
			SetWaID(id).SetWaSerialized(key.Serialized()).SetCreatedAt(at).SetEngineID(engineID).ExecX(wctx)
	}
	add("READ", chat, "gw1", false, base)
	add("BYLID", "88880001234@lid", "gw1", false, base.Add(time.Minute))
	add("OTHERNUMBER", chat, "gw2", false, base.Add(2*time.Minute))
	add("MINE", chat, "gw1", true, base.Add(3*time.Minute))
	add("BYPN", chat, "gw1", false, base.Add(4*time.Minute))
	h := &Host{Client: client}
	got, err := h.unreadMessages("ws_a", "gw1")(ctx, chat)
	if err != nil || got != nil {
		t.Fatalf("a chat the store does not hold: %v, %v", got, err)
	}
	client.Chat.Create().SetJid(chat).SetKind("contact").SetUnreadCount(2).ExecX(wctx)
	got, err = h.unreadMessages("ws_a", "gw1")(ctx, chat)
	if err != nil {
		t.Fatal(err)
	}
	want := []gateway.Unread{
		{Key: engine.Key{Remote: chat, ID: "BYPN"}, At: base.Add(4 * time.Minute)},
		{Key: engine.Key{Remote: "88880001234@lid", ID: "BYLID"}, At: base.Add(time.Minute)},
	}
	for i := range got {
		got[i].At = got[i].At.UTC()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unread (-want +got):\n%s", diff)
	}
	if got, _ := h.unreadMessages("ws_b", "gw1")(ctx, chat); got != nil {
		t.Errorf("another workspace's chat: %v", got)
	}
}
