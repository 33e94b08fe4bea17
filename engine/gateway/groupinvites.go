package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// The rest of a group's lifecycle through whatsmeow (docs/groups.md, "Invites,
// join requests and communities"): invite links, joining by them, join
// requests and the setting that requires them, communities.

var (
	_ engine.GroupInviter   = (*Engine)(nil)
	_ engine.GroupRequester = (*Engine)(nil)
	_ engine.Communities    = (*Engine)(nil)
)

// joinWait bounds how long JoinGroup waits for the joined group's info.
const joinWait = 10 * time.Second

// inviteErr maps whatsmeow's invite errors to the engine's: an invalid code is
// ErrNotFound, a revoked one the rule invite_revoked, an invite link the
// account may not read not_an_admin; the rest as groupErr.
func inviteErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, whatsmeow.ErrInviteLinkInvalid):
		return fmt.Errorf("%w: %v", engine.ErrNotFound, err)
	case errors.Is(err, whatsmeow.ErrInviteLinkRevoked):
		return &engine.GroupRuleError{Rule: engine.RuleInviteRevoked, Message: "The invite code was reset; it no longer works."}
	case errors.Is(err, whatsmeow.ErrGroupInviteLinkUnauthorized):
		return &engine.GroupRuleError{Rule: engine.RuleNotAdmin, Message: "Only an admin of the group can read or reset its invite link; the account is not one."}
	}
	return groupErr(err)
}

// GroupInviteCode implements engine.GroupInviter (GetGroupInviteLink).
func (e *Engine) GroupInviteCode(ctx context.Context, groupID string, reset bool) (string, error) {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return "", err
	}
	link, err := cl.GetGroupInviteLink(ctx, g, reset)
	if err != nil {
		return "", inviteErr(err)
	}
	return strings.TrimPrefix(link, whatsmeow.InviteLinkPrefix), nil
}

// GroupInvitePreview implements engine.GroupInviter (GetGroupInfoFromLink).
func (e *Engine) GroupInvitePreview(ctx context.Context, code string) (engine.GroupPreview, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.GroupPreview{}, err
	}
	info, err := cl.GetGroupInfoFromLink(ctx, code)
	if err != nil {
		return engine.GroupPreview{}, inviteErr(err)
	}
	cs := e.groupState(ctx, cl, info)
	n := info.ParticipantCount
	if n == 0 {
		n = len(cs.Participants)
	}
	return engine.GroupPreview{GroupID: cs.ID, Name: cs.Name, Description: cs.Description, ParticipantCount: n,
		Owner: cs.Owner, CreatedAt: cs.CreatedAt, JoinApproval: info.IsJoinApprovalRequired, IsCommunity: info.IsParent}, nil
}

// JoinGroup implements engine.GroupInviter (JoinGroupWithLink): the group is
// read and reported whole (GroupCreated) before it returns, so that the store
// holds it; whatsmeow's JoinedGroup event that follows reports it again (the
// same event id). A group the account is in already is already_a_member.
func (e *Engine) JoinGroup(ctx context.Context, code string) (string, error) {
	cl, err := e.ready()
	if err != nil {
		return "", err
	}
	jid, err := cl.JoinGroupWithLink(ctx, code)
	var iq *whatsmeow.IQError
	if errors.As(err, &iq) && iq.Code == 409 {
		return "", &engine.GroupRuleError{Rule: engine.RuleAlreadyMember, Participant: chatID(cl.OwnID()), Message: "The account is a participant of the group already."}
	}
	if err != nil {
		return "", inviteErr(err)
	}
	ctx, cancel := context.WithTimeout(ctx, joinWait)
	defer cancel()
	info, err := cl.GetGroupInfo(ctx, jid)
	if errors.Is(err, whatsmeow.ErrNotInGroup) || errors.Is(err, whatsmeow.ErrIQForbidden) {
		// The group requires approval: the account asked to join.
		return "", &engine.GroupRuleError{Rule: engine.RuleJoinRequested, Message: "The group requires its admins' approval; the account's request to join waits for them."}
	}
	if err != nil {
		return "", groupErr(err)
	}
	me := chatID(cl.OwnID())
	cs := e.groupState(ctx, cl, info)
	return cs.ID, e.reportOwn(ctx, engine.GroupChange{GroupID: cs.ID, Action: engine.GroupCreated, By: me, Me: me, Chat: &cs},
		engine.GroupChange{GroupID: cs.ID, Action: "joined_via_link", Participants: []string{me}, By: me, Me: me})
}

// GroupRequests implements engine.GroupRequester (GetGroupRequestParticipants).
func (e *Engine) GroupRequests(ctx context.Context, groupID string) ([]engine.JoinRequest, error) {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return nil, err
	}
	reqs, err := cl.GetGroupRequestParticipants(ctx, g)
	if err != nil {
		return nil, groupErr(err)
	}
	out := make([]engine.JoinRequest, len(reqs))
	for i, r := range reqs {
		out[i] = engine.JoinRequest{ChatID: e.pnChatID(ctx, cl, r.JID, types.EmptyJID), RequestedAt: r.RequestedAt.UTC()}
	}
	return out, nil
}

// AnswerGroupRequests implements engine.GroupRequester
// (UpdateGroupRequestParticipants with approve or reject).
func (e *Engine) AnswerGroupRequests(ctx context.Context, groupID string, participants []string, approve bool) ([]engine.Added, error) {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return nil, err
	}
	js, err := participantJIDs(participants)
	if err != nil {
		return nil, err
	}
	action := whatsmeow.ParticipantChangeReject
	if approve {
		action = whatsmeow.ParticipantChangeApprove
	}
	out, err := cl.UpdateGroupRequestParticipants(ctx, g, js, action)
	if err != nil {
		return nil, groupErr(err)
	}
	res := e.addedOf(ctx, cl, participants, out)
	for i, a := range res {
		if !a.Added && a.Code == "not_on_network" {
			res[i].Code, res[i].Message = "not_requested", a.Participant+" has no pending request to join the group."
		}
	}
	if ids := addedIDs(res); approve && len(ids) > 0 {
		me := chatID(cl.OwnID())
		return res, e.reportOwn(ctx, engine.GroupChange{GroupID: chatID(g), Action: "added", Participants: ids, By: me, Me: me})
	}
	return res, nil
}

// SetGroupJoinApproval implements engine.GroupRequester
// (SetGroupJoinApprovalMode).
func (e *Engine) SetGroupJoinApproval(ctx context.Context, groupID string, on bool) error {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return err
	}
	if err := cl.SetGroupJoinApprovalMode(ctx, g, on); err != nil {
		return groupErr(err)
	}
	me := chatID(cl.OwnID())
	return e.reportOwn(ctx, engine.GroupChange{GroupID: chatID(g), Action: engine.GroupJoinApprovalChanged, JoinApproval: &on, By: me, Me: me})
}

// Community implements engine.Communities (GetGroupInfo, and GetSubGroups of
// a community).
func (e *Engine) Community(ctx context.Context, groupID string) (engine.Community, error) {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return engine.Community{}, err
	}
	info, err := cl.GetGroupInfo(ctx, g)
	if err != nil {
		return engine.Community{}, groupErr(err)
	}
	out := engine.Community{GroupID: chatID(g), IsCommunity: info.IsParent, SubGroups: []engine.SubGroup{}}
	if !info.LinkedParentJID.IsEmpty() {
		out.ParentGroupID = chatID(info.LinkedParentJID)
	}
	if !info.IsParent {
		return out, nil
	}
	subs, err := cl.GetSubGroups(ctx, g)
	if err != nil {
		return engine.Community{}, groupErr(err)
	}
	for _, s := range subs {
		out.SubGroups = append(out.SubGroups, engine.SubGroup{GroupID: chatID(s.JID), Name: s.Name, IsDefault: s.IsDefaultSubGroup})
	}
	return out, nil
}

// requestChanges are the requests to join the group a notification carries
// (whatsmeow leaves them among its unknown changes: a
// created_membership_requests element whose requested_user children name who
// asked): one join_request change.
func (e *Engine) requestChanges(ctx context.Context, cl client, v *events.GroupInfo, base engine.GroupChange) []engine.GroupChange {
	var who []string
	for _, n := range v.UnknownChanges {
		if n == nil || n.Tag != "created_membership_requests" {
			continue
		}
		for _, u := range n.GetChildrenByTag("requested_user") {
			ag := u.AttrGetter()
			j := ag.OptionalJIDOrEmpty("jid")
			pn := ag.OptionalJIDOrEmpty("phone_number")
			if j.IsEmpty() {
				continue
			}
			who = append(who, e.pnChatID(ctx, cl, j, pn))
		}
	}
	if len(who) == 0 {
		return nil
	}
	c := base
	c.Action, c.Participants = engine.GroupJoinRequest, who
	if len(who) == 1 {
		c.By = who[0]
	}
	return []engine.GroupChange{c}
}
