package remote

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// GroupInviteCode implements engine.GroupInviter (capability group_invites).
func (e *Engine) GroupInviteCode(ctx context.Context, groupID string, reset bool) (code string, err error) {
	return code, e.invoke(ctx, "GroupInviteCode", []any{&code}, groupID, reset)
}

// GroupInvitePreview implements engine.GroupInviter (capability group_invites).
func (e *Engine) GroupInvitePreview(ctx context.Context, code string) (p engine.GroupPreview, err error) {
	return p, e.invoke(ctx, "GroupInvitePreview", []any{&p}, code)
}

// JoinGroup implements engine.GroupInviter (capability group_invites).
func (e *Engine) JoinGroup(ctx context.Context, code string) (groupID string, err error) {
	return groupID, e.invoke(ctx, "JoinGroup", []any{&groupID}, code)
}

// GroupRequests implements engine.GroupRequester (capability group_requests).
func (e *Engine) GroupRequests(ctx context.Context, groupID string) (reqs []engine.JoinRequest, err error) {
	return reqs, e.invoke(ctx, "GroupRequests", []any{&reqs}, groupID)
}

// AnswerGroupRequests implements engine.GroupRequester (capability
// group_requests).
func (e *Engine) AnswerGroupRequests(ctx context.Context, groupID string, participants []string, approve bool) (res []engine.Added, err error) {
	return res, e.invoke(ctx, "AnswerGroupRequests", []any{&res}, groupID, participants, approve)
}

// SetGroupJoinApproval implements engine.GroupRequester (capability
// group_requests).
func (e *Engine) SetGroupJoinApproval(ctx context.Context, groupID string, on bool) error {
	return e.invoke(ctx, "SetGroupJoinApproval", nil, groupID, on)
}

// Community implements engine.Communities (capability communities).
func (e *Engine) Community(ctx context.Context, groupID string) (c engine.Community, err error) {
	return c, e.invoke(ctx, "Community", []any{&c}, groupID)
}

var (
	_ engine.GroupInviter   = (*Engine)(nil)
	_ engine.GroupRequester = (*Engine)(nil)
	_ engine.Communities    = (*Engine)(nil)
)
