package gateway

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

func TestGroupAdministration(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	privacy := types.NewJID("15556667777", types.DefaultUserServer)
	h.f.partResult[privacy] = 403
	gid, added, err := h.e.CreateGroup(ctx, "Team", []string{"15554445555@c.us", "15556667777@c.us"})
	if err != nil {
		t.Fatal(err)
	}
	if gid != "120363000000000001@g.us" {
		t.Errorf("group id %s", gid)
	}
	wantAdded := []engine.Added{{Participant: "15554445555@c.us", Added: true},
		{Participant: "15556667777@c.us", Code: "privacy_restricted", Message: "15556667777@c.us allows only contacts to add them; the network sends an invite."}}
	if diff := cmp.Diff(wantAdded, added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	evs := h.sink.take()
	if len(evs) != 2 || evs[0].ID != "wa_group_created_"+gid || evs[0].Group.Action != engine.GroupCreated || evs[0].Group.Chat.Name != "Team" ||
		evs[1].Group.Action != "added" || !cmp.Equal(evs[1].Group.Participants, []string{"15554445555@c.us"}) {
		t.Fatalf("create events %+v", evs)
	}
	g, _ := parseChat(gid)

	name, on := "Team 2", true
	if err := h.e.UpdateGroup(ctx, gid, engine.GroupUpdate{Name: &name, Announce: &on}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"name:Team 2", "announce:on"}, h.f.groupCalls); diff != "" {
		t.Errorf("calls: %s", diff)
	}
	if _, err := h.e.AddParticipants(ctx, gid, []string{"15558889999@c.us"}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.SetAdmin(ctx, gid, "15554445555@c.us", true); err != nil {
		t.Fatal(err)
	}
	if err := h.e.RemoveParticipant(ctx, gid, "15554445555@c.us"); err != nil {
		t.Fatal(err)
	}
	var rule *engine.GroupRuleError
	if err := h.e.RemoveParticipant(ctx, gid, "15550001111@c.us"); !errors.As(err, &rule) || rule.Rule != engine.RuleSelf {
		t.Errorf("removing self: %v", err)
	}
	var got []string
	for _, ev := range h.sink.take() {
		got = append(got, ev.Group.Action+":"+strings.Join(ev.Group.Participants, ",")+":"+ev.Group.Value)
	}
	want := []string{"name_changed::Team 2", "settings_changed::", "added:15558889999@c.us:", "admin_changed:15554445555@c.us:promoted", "kicked:15554445555@c.us:"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	actions := []whatsmeow.ParticipantChange{}
	for _, p := range h.f.participants {
		actions = append(actions, p.action)
	}
	if diff := cmp.Diff([]whatsmeow.ParticipantChange{"add", "promote", "remove"}, actions); diff != "" {
		t.Errorf("participant calls: %s", diff)
	}

	// The network's echo of the account's own rename is not reported twice;
	// someone else's change is.
	me := types.NewJID("15550001111", types.DefaultUserServer)
	h.f.emit(&events.GroupInfo{JID: g, Sender: &me, Timestamp: at, Name: &types.GroupName{Name: "Team 2"}})
	h.f.emit(&events.GroupInfo{JID: g, Sender: &member, Timestamp: at, Topic: &types.GroupTopic{Topic: "news"},
		Leave: []types.JID{member}, Join: []types.JID{privacy}, JoinReason: "invite", Promote: []types.JID{privacy}})
	h.f.emit(&events.GroupInfo{JID: g, Sender: &member, Timestamp: at, Leave: []types.JID{privacy}, Locked: &types.GroupLocked{IsLocked: true}})
	got = nil
	for _, ev := range h.sink.take() {
		got = append(got, ev.Group.Action+":"+strings.Join(ev.Group.Participants, ",")+":"+ev.Group.Value+":"+ev.Group.By)
		if ev.Group.Action == engine.GroupSettingsChanged && (ev.Group.Restrict == nil || !*ev.Group.Restrict || ev.Group.Announce != nil) {
			t.Errorf("settings change %+v", ev.Group)
		}
	}
	want = []string{
		"description_changed::news:15554445555@c.us",
		"joined_via_link:15556667777@c.us::15554445555@c.us",
		"left:15554445555@c.us::15554445555@c.us",
		"admin_changed:15556667777@c.us:promoted:15554445555@c.us",
		"settings_changed:::15554445555@c.us",
		"kicked:15556667777@c.us::15554445555@c.us",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("network changes (-want +got):\n%s", diff)
	}

	// Being added to a group by someone else.
	h.f.emit(&events.JoinedGroup{Sender: &member, GroupInfo: types.GroupInfo{JID: group, GroupName: types.GroupName{Name: "Other"},
		Participants: []types.GroupParticipant{{JID: member, IsSuperAdmin: true}, {JID: contactLID, PhoneNumber: contact}}}})
	evs = h.sink.take()
	// The participant's LID and number are a mapping, reported first.
	if len(evs) == 2 && evs[0].History != nil && cmp.Equal(evs[0].History.Contacts, []engine.ContactInfo{{ID: "15552223333@c.us", LID: "88882223333@lid"}}) {
		evs = evs[1:]
	} else {
		t.Errorf("joined without the participant's mapping first: %+v", evs)
	}
	if len(evs) != 1 || evs[0].Group.Action != engine.GroupCreated || evs[0].Group.Chat.Name != "Other" ||
		!cmp.Equal(evs[0].Group.Chat.Participants, []engine.Participant{{ID: "15554445555@c.us", IsAdmin: true, IsSuperAdmin: true}, {ID: "15552223333@c.us"}}) {
		t.Errorf("joined %+v", evs)
	}

	if err := h.e.LeaveGroup(ctx, gid); err != nil {
		t.Fatal(err)
	}
	if evs := h.sink.take(); len(evs) != 1 || evs[0].Group.Action != "left" {
		t.Errorf("leave %+v", evs)
	}
	h.f.groupErr = whatsmeow.ErrNotInGroup
	if err := h.e.LeaveGroup(ctx, gid); err != nil {
		t.Errorf("leaving a group left before: %v", err)
	}
	if err := h.e.SetAdmin(ctx, gid, "15554445555@c.us", false); !errors.As(err, &rule) || rule.Rule != engine.RuleNotMember {
		t.Errorf("not a member: %v", err)
	}
	h.f.groupErr = whatsmeow.ErrIQForbidden
	if err := h.e.UpdateGroup(ctx, gid, engine.GroupUpdate{Name: &name}); !errors.As(err, &rule) || rule.Rule != engine.RuleNotAdmin {
		t.Errorf("not an admin: %v", err)
	}
	h.f.groupErr = nil
	if _, err := h.e.GroupInfo(ctx, "120363999999999999@g.us"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown group: %v", err)
	}

	// A PNG picture goes out as JPEG.
	var buf bytes.Buffer
	_ = png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4)))
	if err := h.e.SetGroupPicture(ctx, gid, engine.Media{Data: buf.Bytes(), MimeType: "image/png"}); err != nil {
		t.Errorf("picture: %v", err)
	}
}

func TestCommonGroupsMatchPhoneAndLIDForms(t *testing.T) {
	h := newHarness(t, true)
	h.f.alt[contact] = contactLID
	h.f.groups[group] = &types.GroupInfo{JID: group, Participants: []types.GroupParticipant{{JID: contactLID, LID: contactLID}}}
	g2 := types.NewJID("120363000000000043", types.GroupServer)
	h.f.groups[g2] = &types.GroupInfo{JID: g2, Participants: []types.GroupParticipant{{JID: contact}}}
	g3 := types.NewJID("120363000000000044", types.GroupServer)
	h.f.groups[g3] = &types.GroupInfo{JID: g3, Participants: []types.GroupParticipant{{JID: member}}}
	got, err := h.e.CommonGroups(context.Background(), "15552223333@c.us")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"120363000000000042@g.us", "120363000000000043@g.us"}, got); diff != "" {
		t.Errorf("common groups (-want +got):\n%s", diff)
	}
	if _, err := h.e.CommonGroups(context.Background(), "15554445555@c.us"); err != nil {
		t.Fatal(err)
	}
	if n := len(h.f.groupCalls); n != 1 {
		t.Errorf("joined groups fetched %d times; want one, then reused", n)
	}
}
