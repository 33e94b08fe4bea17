package gateway

// The fake's invite, join-request and community calls (fake_test.go holds the
// rest of it). Every call is recorded in groupCalls with its arguments.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
)

// fakeInviteCode is the code of a group in the fake: "code" and the group's
// user part, then "r" per reset.
func fakeInviteCode(g *types.GroupInfo, resets int) string {
	return "code" + g.JID.User + strings.Repeat("r", resets)
}

func (f *fakeClient) GetGroupInviteLink(_ context.Context, jid types.JID, reset bool) (string, error) {
	if err := f.groupCall(fmt.Sprintf("invite:%s:%t", jid, reset)); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.groups[jid]
	if !ok {
		return "", whatsmeow.ErrGroupNotFound
	}
	if reset {
		f.inviteResets[jid]++
	}
	return whatsmeow.InviteLinkPrefix + fakeInviteCode(g, f.inviteResets[jid]), nil
}

// groupByCode is the fake's group of an invite code: an error as whatsmeow's
// for a code that is no group's current code (revoked when it was one).
func (f *fakeClient) groupByCode(code string) (*types.GroupInfo, error) {
	code = strings.TrimPrefix(code, whatsmeow.InviteLinkPrefix)
	for _, g := range f.groups {
		if code == fakeInviteCode(g, f.inviteResets[g.JID]) {
			return g, nil
		}
		if strings.HasPrefix(code, fakeInviteCode(g, 0)) {
			return nil, whatsmeow.ErrInviteLinkRevoked
		}
	}
	return nil, whatsmeow.ErrInviteLinkInvalid
}

func (f *fakeClient) GetGroupInfoFromLink(_ context.Context, code string) (*types.GroupInfo, error) {
	if err := f.groupCall("preview:" + code); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.groupByCode(code)
}

func (f *fakeClient) JoinGroupWithLink(_ context.Context, code string) (types.JID, error) {
	if err := f.groupCall("join:" + code); err != nil {
		return types.EmptyJID, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g, err := f.groupByCode(code)
	if err != nil {
		return types.EmptyJID, err
	}
	for _, p := range g.Participants {
		if p.JID.User == f.own.User {
			return types.EmptyJID, &whatsmeow.IQError{Code: 409, Text: "conflict"}
		}
	}
	g.Participants = append(g.Participants, types.GroupParticipant{JID: f.own.ToNonAD(), PhoneNumber: f.own.ToNonAD()})
	return g.JID, nil
}

func (f *fakeClient) GetGroupRequestParticipants(_ context.Context, jid types.JID) ([]types.GroupParticipantRequest, error) {
	if err := f.groupCall("requests:" + jid.String()); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[jid], nil
}

func (f *fakeClient) UpdateGroupRequestParticipants(_ context.Context, jid types.JID, who []types.JID, action whatsmeow.ParticipantRequestChange) ([]types.GroupParticipant, error) {
	names := make([]string, len(who))
	for i, p := range who {
		names[i] = p.String()
	}
	if err := f.groupCall(fmt.Sprintf("answer:%s:%s:%s", jid, action, strings.Join(names, ","))); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []types.GroupParticipant
	for _, p := range who {
		code := 404
		for i, r := range f.requests[jid] {
			if r.JID == p {
				code = 0
				f.requests[jid] = append(f.requests[jid][:i], f.requests[jid][i+1:]...)
				break
			}
		}
		out = append(out, types.GroupParticipant{JID: p, PhoneNumber: p, Error: code})
	}
	return out, nil
}

func (f *fakeClient) SetGroupJoinApprovalMode(_ context.Context, jid types.JID, mode bool) error {
	return f.groupCall(fmt.Sprintf("approval:%s:%t", jid, mode))
}

func (f *fakeClient) GetSubGroups(_ context.Context, community types.JID) ([]*types.GroupLinkTarget, error) {
	if err := f.groupCall("subgroups:" + community.String()); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*types.GroupLinkTarget
	for _, g := range f.groups {
		if g.LinkedParentJID == community {
			out = append(out, &types.GroupLinkTarget{JID: g.JID, GroupName: g.GroupName, GroupIsDefaultSub: g.GroupIsDefaultSub})
		}
	}
	return out, nil
}

// fakeRequest is a pending request to join, made at.
func fakeRequest(jid types.JID, at time.Time) types.GroupParticipantRequest {
	return types.GroupParticipantRequest{JID: jid, RequestedAt: at}
}
