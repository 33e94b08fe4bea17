package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// TestGroupInvites: each invite operation reaches its whatsmeow call with the
// group and the code, and whatsmeow's invite errors map to the engine's.
func TestGroupInvites(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	h.f.groups[group] = &types.GroupInfo{JID: group, OwnerJID: member, GroupName: types.GroupName{Name: "Club"},
		GroupTopic: types.GroupTopic{Topic: "All about it"}, GroupCreated: at, ParticipantCount: 2,
		GroupMembershipApprovalMode: types.GroupMembershipApprovalMode{IsJoinApprovalRequired: true},
		Participants:                []types.GroupParticipant{{JID: member, PhoneNumber: member, IsSuperAdmin: true}, {JID: contact, PhoneNumber: contact}}}
	gid := chatID(group)

	code, err := h.e.GroupInviteCode(ctx, gid, false)
	if err != nil || code != "code120363000000000042" {
		t.Fatalf("invite code %q, %v", code, err)
	}
	reset, err := h.e.GroupInviteCode(ctx, gid, true)
	if err != nil || reset != "code120363000000000042r" {
		t.Fatalf("reset code %q, %v", reset, err)
	}
	p, err := h.e.GroupInvitePreview(ctx, reset)
	if err != nil {
		t.Fatal(err)
	}
	created := at.UTC()
	want := engine.GroupPreview{GroupID: gid, Name: "Club", Description: "All about it", ParticipantCount: 2,
		Owner: "15554445555@c.us", CreatedAt: &created, JoinApproval: true}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	var rule *engine.GroupRuleError
	if _, err := h.e.GroupInvitePreview(ctx, code); !errors.As(err, &rule) || rule.Rule != engine.RuleInviteRevoked {
		t.Errorf("revoked code: %v", err)
	}
	if _, err := h.e.GroupInvitePreview(ctx, "nosuchcode"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown code: %v", err)
	}

	id, err := h.e.JoinGroup(ctx, reset)
	if err != nil || id != gid {
		t.Fatalf("join %q, %v", id, err)
	}
	evs := h.sink.take()
	if len(evs) != 2 || evs[0].Group.Action != engine.GroupCreated || evs[0].Group.Chat.Name != "Club" || !evs[0].Group.Chat.JoinApproval ||
		len(evs[0].Group.Chat.Participants) != 3 || evs[1].Group.Action != "joined_via_link" || !cmp.Equal(evs[1].Group.Participants, []string{"15550001111@c.us"}) {
		t.Errorf("join events %+v", evs)
	}
	if _, err := h.e.JoinGroup(ctx, reset); !errors.As(err, &rule) || rule.Rule != engine.RuleAlreadyMember {
		t.Errorf("joining twice: %v", err)
	}
	wantCalls := []string{"invite:120363000000000042@g.us:false", "invite:120363000000000042@g.us:true",
		"preview:code120363000000000042r", "preview:code120363000000000042", "preview:nosuchcode",
		"join:code120363000000000042r", "join:code120363000000000042r"}
	if diff := cmp.Diff(wantCalls, h.f.groupCalls); diff != "" {
		t.Errorf("whatsmeow calls (-want +got):\n%s", diff)
	}

	h.f.groupErr = whatsmeow.ErrGroupInviteLinkUnauthorized
	if _, err := h.e.GroupInviteCode(ctx, gid, false); !errors.As(err, &rule) || rule.Rule != engine.RuleNotAdmin {
		t.Errorf("not an admin: %v", err)
	}
	h.f.groupErr = whatsmeow.ErrNotInGroup
	if _, err := h.e.GroupInviteCode(ctx, gid, false); !errors.As(err, &rule) || rule.Rule != engine.RuleNotMember {
		t.Errorf("not a member: %v", err)
	}
	h.f.groupErr = whatsmeow.ErrGroupNotFound
	if _, err := h.e.GroupInviteCode(ctx, gid, false); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown group: %v", err)
	}
}

// TestGroupJoinRequests: listing, answering and the approval setting reach
// their whatsmeow calls; incoming requests and approval changes are events.
func TestGroupJoinRequests(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	h.f.groups[group] = &types.GroupInfo{JID: group, GroupName: types.GroupName{Name: "Club"}}
	gid := chatID(group)
	asker := types.NewJID("15557770001", types.DefaultUserServer)
	h.f.requests[group] = []types.GroupParticipantRequest{fakeRequest(asker, at), fakeRequest(contact, at.Add(1))}

	reqs, err := h.e.GroupRequests(ctx, gid)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]engine.JoinRequest{{ChatID: "15557770001@c.us", RequestedAt: at.UTC()}, {ChatID: "15552223333@c.us", RequestedAt: at.Add(1).UTC()}}, reqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	res, err := h.e.AnswerGroupRequests(ctx, gid, []string{"15557770001@c.us", "15559990000@c.us"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || !res[0].Added || res[1].Added || res[1].Code != "not_requested" {
		t.Errorf("approve results %+v", res)
	}
	if evs := h.sink.take(); len(evs) != 1 || evs[0].Group.Action != "added" || !cmp.Equal(evs[0].Group.Participants, []string{"15557770001@c.us"}) {
		t.Errorf("approve events %+v", evs)
	}
	if res, err := h.e.AnswerGroupRequests(ctx, gid, []string{"15552223333@c.us"}, false); err != nil || len(res) != 1 || !res[0].Added {
		t.Errorf("reject %+v, %v", res, err)
	}
	if evs := h.sink.take(); len(evs) != 0 {
		t.Errorf("a rejection reported %+v", evs)
	}
	if err := h.e.SetGroupJoinApproval(ctx, gid, true); err != nil {
		t.Fatal(err)
	}
	if evs := h.sink.take(); len(evs) != 1 || evs[0].Group.Action != engine.GroupJoinApprovalChanged || !*evs[0].Group.JoinApproval {
		t.Errorf("approval events %+v", evs)
	}
	wantCalls := []string{"requests:120363000000000042@g.us",
		"answer:120363000000000042@g.us:approve:15557770001@s.whatsapp.net,15559990000@s.whatsapp.net",
		"answer:120363000000000042@g.us:reject:15552223333@s.whatsapp.net",
		"approval:120363000000000042@g.us:true"}
	if diff := cmp.Diff(wantCalls, h.f.groupCalls); diff != "" {
		t.Errorf("whatsmeow calls (-want +got):\n%s", diff)
	}
	h.f.groupErr = whatsmeow.ErrIQForbidden
	var rule *engine.GroupRuleError
	if _, err := h.e.GroupRequests(ctx, gid); !errors.As(err, &rule) || rule.Rule != engine.RuleNotAdmin {
		t.Errorf("not an admin: %v", err)
	}
	h.f.groupErr = nil

	// Someone asks to join; someone else turns the approval off.
	h.f.emit(&events.GroupInfo{JID: group, Timestamp: at, UnknownChanges: []*waBinary.Node{{Tag: "created_membership_requests",
		Content: []waBinary.Node{{Tag: "requested_user", Attrs: waBinary.Attrs{"jid": asker}}}}}})
	h.f.emit(&events.GroupInfo{JID: group, Sender: &member, Timestamp: at.Add(1), MembershipApprovalMode: &types.GroupMembershipApprovalMode{}})
	var got []string
	for _, ev := range h.sink.take() {
		got = append(got, ev.Group.Action+":"+strings.Join(ev.Group.Participants, ",")+":"+ev.Group.By)
	}
	want := []string{"join_request:15557770001@c.us:15557770001@c.us", "join_approval_changed::15554445555@c.us"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("network events (-want +got):\n%s", diff)
	}
}

// TestCommunity reads a community's sub-groups (GetSubGroups) and a
// sub-group's parent.
func TestCommunity(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	parent := types.NewJID("120363000000000050", types.GroupServer)
	h.f.groups[parent] = &types.GroupInfo{JID: parent, GroupName: types.GroupName{Name: "Town"}, GroupParent: types.GroupParent{IsParent: true}}
	h.f.groups[group] = &types.GroupInfo{JID: group, GroupName: types.GroupName{Name: "Announcements"},
		GroupLinkedParent: types.GroupLinkedParent{LinkedParentJID: parent}, GroupIsDefaultSub: types.GroupIsDefaultSub{IsDefaultSubGroup: true}}
	c, err := h.e.Community(ctx, chatID(parent))
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Community{GroupID: "120363000000000050@g.us", IsCommunity: true,
		SubGroups: []engine.SubGroup{{GroupID: "120363000000000042@g.us", Name: "Announcements", IsDefault: true}}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("community (-want +got):\n%s", diff)
	}
	sub, err := h.e.Community(ctx, chatID(group))
	if err != nil || sub.ParentGroupID != "120363000000000050@g.us" || sub.IsCommunity || len(sub.SubGroups) != 0 {
		t.Errorf("sub-group %+v, %v", sub, err)
	}
	if diff := cmp.Diff([]string{"subgroups:120363000000000050@g.us"}, h.f.groupCalls); diff != "" {
		t.Errorf("whatsmeow calls: %s", diff)
	}
	if _, err := h.e.Community(ctx, "120363999999999999@g.us"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown group: %v", err)
	}
}
