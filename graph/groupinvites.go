package graph

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
)

// The rest of a group's lifecycle (docs/groups.md, "Invites, join requests and
// communities"): invite links and joining by them (capability group_invites),
// join requests and the setting that requires them (group_requests), and
// communities (communities, read only). Each acts through one engine
// (acting.go).

const (
	// maxInviteInput bounds the characters of an invite code or link.
	maxInviteInput = 128
	// maxSubGroups bounds the sub-groups a community answers (WhatsApp's own
	// bound is 100).
	maxSubGroups = 100
	// settleGroups is how long a group change waits for what the engine
	// reported to be stored.
	settleGroups = 10 * time.Second
)

var inviteCodeRE = regexp.MustCompile(`^[A-Za-z0-9]{6,64}$`)

// checkInviteCode validates an invite code given as the bare code or as a whole
// link (https://chat.whatsapp.com/<code>), and returns the code (400 on field
// otherwise).
func checkInviteCode(field, raw string) (string, error) {
	code := strings.TrimSpace(raw)
	if len(code) <= maxInviteInput {
		for _, prefix := range []string{engine.InviteLinkPrefix, "http://chat.whatsapp.com/", "chat.whatsapp.com/"} {
			if rest, ok := strings.CutPrefix(code, prefix); ok {
				code = strings.TrimSuffix(rest, "/")
				break
			}
		}
		if inviteCodeRE.MatchString(code) {
			return code, nil
		}
	}
	msg := field + " must be an invite code (6-64 letters and digits) or a link " + engine.InviteLinkPrefix + "<code>"
	return "", &switchboard.Error{Code: switchboard.EINVALID, Message: msg + ".",
		Details: []switchboard.Detail{{Path: field, Code: "invalid_string", Message: "Invalid invite " + quote(raw)}}}
}

// inviteError maps what an engine answered about an invite code: an unknown or
// revoked code is 404 on field, a broken rule (already_a_member,
// join_requested) 409 on field.
func inviteError(field string, err error) error {
	var rule *engine.GroupRuleError
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return notFound(field, "The network knows no group with this invite code.")
	case errors.As(err, &rule) && rule.Rule == engine.RuleInviteRevoked:
		return &switchboard.Error{Code: switchboard.ENOTFOUND, Message: rule.Message,
			Details: []switchboard.Detail{{Path: field, Code: rule.Rule, Message: rule.Message}}}
	case errors.As(err, &rule):
		return &switchboard.Error{Code: switchboard.ECONFLICT, Message: rule.Message,
			Details: []switchboard.Detail{{Path: field, Code: rule.Rule, Message: rule.Message}}}
	}
	return err
}

// groupInvite is the use case behind groupInvite and resetGroupInvite (GET
// /v1/groups/{id}/invite, POST /v1/groups/{id}/invite/reset).
func (r *Resolver) groupInvite(ctx context.Context, id string, engineID *string, reset bool) (*model.GroupInvite, error) {
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	gi, eng, err := actingAs[engine.GroupInviter](ctx, r, engineID, engine.CapGroupInvites, "a group's invite link")
	if err != nil {
		return nil, err
	}
	code, err := gi.GroupInviteCode(ctx, c.Jid, reset)
	if err != nil {
		return nil, groupError(err, "id")
	}
	code = strings.TrimPrefix(code, engine.InviteLinkPrefix)
	return &model.GroupInvite{EngineID: eng.ID(), GroupID: c.Jid, Code: code, Link: engine.InviteLinkPrefix + code}, nil
}

// groupInvitePreview is the use case behind groupInvitePreview (GET
// /v1/groups/invites/{code}).
func (r *Resolver) groupInvitePreview(ctx context.Context, raw string, engineID *string) (*model.GroupInvitePreview, error) {
	code, err := checkInviteCode("code", raw)
	if err != nil {
		return nil, err
	}
	gi, _, err := actingAs[engine.GroupInviter](ctx, r, engineID, engine.CapGroupInvites, "previewing an invite")
	if err != nil {
		return nil, err
	}
	p, err := gi.GroupInvitePreview(ctx, code)
	if err != nil {
		return nil, inviteError("code", err)
	}
	out := &model.GroupInvitePreview{Code: code, GroupID: p.GroupID, Name: p.Name, Description: p.Description,
		ParticipantCount: p.ParticipantCount, CreatedAt: p.CreatedAt, JoinApproval: p.JoinApproval, IsCommunity: p.IsCommunity}
	if p.Owner != "" {
		out.Owner = &p.Owner
	}
	return out, nil
}

// joinGroup is the use case behind joinGroup (POST /v1/groups/join): the
// account joins, and the group is answered as the store then holds it.
func (r *Resolver) joinGroup(ctx context.Context, raw string, engineID *string) (*model.Group, error) {
	code, err := checkInviteCode("code", raw)
	if err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	gi, _, err := actingAs[engine.GroupInviter](ctx, r, engineID, engine.CapGroupInvites, "joining a group")
	if err != nil {
		return nil, err
	}
	id, err := gi.JoinGroup(ctx, code)
	if err != nil {
		return nil, inviteError("code", err)
	}
	if err := r.settle(ctx, settleGroups); err != nil {
		return nil, err
	}
	return r.group(ctx, id, true)
}

// groupJoinRequests is the use case behind groupJoinRequests (GET
// /v1/groups/{id}/requests).
func (r *Resolver) groupJoinRequests(ctx context.Context, id string, engineID *string, limit, skip *int) (*model.GroupJoinRequestPage, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	gr, _, err := actingAs[engine.GroupRequester](ctx, r, engineID, engine.CapGroupRequests, "a group's join requests")
	if err != nil {
		return nil, err
	}
	reqs, err := gr.GroupRequests(ctx, c.Jid)
	if err != nil {
		return nil, groupError(err, "id")
	}
	out := &model.GroupJoinRequestPage{Items: []*model.GroupJoinRequest{}, Limit: l, Skip: s, Total: len(reqs)}
	for i := s; i < len(reqs) && i < s+l; i++ {
		out.Items = append(out.Items, &model.GroupJoinRequest{ChatID: reqs[i].ChatID, RequestedAt: reqs[i].RequestedAt.UTC()})
	}
	return out, nil
}

// answerGroupJoinRequests is the use case behind answerGroupJoinRequests (POST
// /v1/groups/{id}/requests/approve and /reject): 1-256 participants, each
// answered on its own.
func (r *Resolver) answerGroupJoinRequests(ctx context.Context, id string, participants []string, approve bool, engineID *string) (*model.JoinRequestAnswer, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	var p switchboard.Problems
	jids := checkParticipants(&p, "participants", participants)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	gr, _, err := actingAs[engine.GroupRequester](ctx, r, engineID, engine.CapGroupRequests, "answering join requests")
	if err != nil {
		return nil, err
	}
	res, err := gr.AnswerGroupRequests(ctx, c.Jid, jids, approve)
	if err != nil {
		return nil, groupError(err, "participants")
	}
	if err := r.settle(ctx, settleGroups); err != nil {
		return nil, err
	}
	given := map[string]string{}
	for i, j := range jids {
		given[j] = participants[i]
	}
	out := make([]*model.JoinRequestResult, len(res))
	for i, a := range res {
		out[i] = &model.JoinRequestResult{Participant: given[a.Participant], ChatID: a.Participant, Done: a.Added}
		if a.Code != "" {
			code, msg := a.Code, a.Message
			out[i].Code, out[i].Message = &code, &msg
		}
	}
	return &model.JoinRequestAnswer{GroupID: c.Jid, Approve: approve, Results: out}, nil
}

// setJoinApproval turns a group's join approval on or off through gr (part of
// updateGroup), and waits until the change is stored.
func (r *Resolver) setJoinApproval(ctx context.Context, gr engine.GroupRequester, jid string, on bool) error {
	if err := gr.SetGroupJoinApproval(ctx, jid, on); err != nil {
		return groupError(err, "")
	}
	return r.settle(ctx, settleGroups)
}

// groupCommunity is the use case behind groupCommunity (GET
// /v1/groups/{id}/community).
func (r *Resolver) groupCommunity(ctx context.Context, id string, engineID *string) (*model.GroupCommunity, error) {
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	cm, _, err := actingAs[engine.Communities](ctx, r, engineID, engine.CapCommunities, "reading a community")
	if err != nil {
		return nil, err
	}
	info, err := cm.Community(ctx, c.Jid)
	if err != nil {
		return nil, groupError(err, "id")
	}
	out := &model.GroupCommunity{GroupID: c.Jid, IsCommunity: info.IsCommunity, SubGroups: []*model.CommunitySubGroup{}}
	if info.ParentGroupID != "" {
		out.ParentGroupID = &info.ParentGroupID
	}
	for i, sg := range info.SubGroups {
		if i == maxSubGroups {
			break
		}
		out.SubGroups = append(out.SubGroups, &model.CommunitySubGroup{GroupID: sg.GroupID, Name: sg.Name, IsDefault: sg.IsDefault})
	}
	return out, nil
}
