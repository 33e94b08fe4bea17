package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
)

// TestSetDisappearingTimer: setting a chat's timer reaches whatsmeow's
// SetDisappearingTimer with the chat's JID, the timer as a duration and the
// time of the setting; the timer reads back at once and the next message sent
// to the chat carries it (a user's chat gets whatsmeow's timer setting
// message, a group's info changes).
func TestSetDisappearingTimer(t *testing.T) {
	testStores(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		h := newHarness(t, true, withStore(st))
		h.f.groups[group] = &types.GroupInfo{JID: group}
		cases := []struct {
			chat    types.JID
			seconds uint32
		}{{contact, week}, {group, 86400}, {contact, 0}, {group, 90 * 86400}}
		for i, c := range cases {
			before := time.Now().Add(-time.Second)
			if err := h.e.SetDisappearingTimer(ctx, chatID(c.chat), c.seconds); err != nil {
				t.Fatalf("set %d on %s: %v", c.seconds, c.chat, err)
			}
			call := h.f.timerCalls[len(h.f.timerCalls)-1]
			if call.chat != c.chat || call.timer != time.Duration(c.seconds)*time.Second || call.settingTS.Before(before) {
				t.Errorf("case %d: whatsmeow called with %+v", i, call)
			}
			if got, err := h.e.DisappearingTimer(ctx, chatID(c.chat)); err != nil || got != c.seconds {
				t.Errorf("case %d: read back %d, %v; want %d", i, got, err, c.seconds)
			}
			if _, err := h.e.Send(ctx, engine.Outgoing{WireID: engine.WireID("msg_d" + string(rune('a'+i))), To: chatID(c.chat), Type: "text", Text: "hi"}); err != nil {
				t.Fatal(err)
			}
			if got := expirationOf(h.f.sent[len(h.f.sent)-1].msg); got != c.seconds {
				t.Errorf("case %d: the next send to %s carries %d, want %d", i, c.chat, got, c.seconds)
			}
		}
		if p := h.f.sent[0].msg.GetProtocolMessage(); p.GetType() != waE2E.ProtocolMessage_EPHEMERAL_SETTING || p.GetEphemeralExpiration() != week {
			t.Errorf("the user's chat got %v, want a week's timer setting", h.f.sent[0].msg)
		}
		if g := h.f.groups[group]; !g.IsEphemeral || g.DisappearingTimer != 90*86400 {
			t.Errorf("group info after the set: %+v", g.GroupEphemeral)
		}
	})
}

// TestReadDisappearingTimer: a group never seen answers the timer of its info;
// a direct chat never seen answers 0; an unknown group is ErrNotFound, to set
// or to read; a chat id that is not one is ErrRejected.
func TestReadDisappearingTimer(t *testing.T) {
	testStores(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		h := newHarness(t, true, withStore(st))
		h.f.groups[group] = &types.GroupInfo{JID: group, GroupEphemeral: types.GroupEphemeral{IsEphemeral: true, DisappearingTimer: week}}
		if got, err := h.e.DisappearingTimer(ctx, chatID(group)); err != nil || got != week {
			t.Errorf("group from its info: %d, %v", got, err)
		}
		if got, err := h.e.DisappearingTimer(ctx, chatID(contact)); err != nil || got != 0 {
			t.Errorf("direct chat never seen: %d, %v", got, err)
		}
		unknown := types.NewJID("120363000000000099", types.GroupServer)
		if _, err := h.e.DisappearingTimer(ctx, chatID(unknown)); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("read unknown group: %v", err)
		}
		if err := h.e.SetDisappearingTimer(ctx, chatID(unknown), week); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("set unknown group: %v", err)
		}
		if err := h.e.SetDisappearingTimer(ctx, "bogus@x", week); !errors.Is(err, engine.ErrRejected) {
			t.Errorf("set a bad chat id: %v", err)
		}
	})
}
