package engine

import (
	"context"
	"time"
)

// Capabilities of the rest of a group's lifecycle (engine protocol capability
// names; a remote engine announces them in its hello): invite links and
// joining by them, join requests and the setting that requires them, and
// communities (read only).
const (
	CapGroupInvites  = "group_invites"
	CapGroupRequests = "group_requests"
	CapCommunities   = "communities"
)

// InviteLinkPrefix is what a group's invite code follows in its link.
const InviteLinkPrefix = "https://chat.whatsapp.com/"

// Group actions of a GroupChange about join requests: someone asked to join
// (Participants; a group that requires approval), or the setting that requires
// approval changed (JoinApproval).
const (
	GroupJoinRequest         = "join_request"
	GroupJoinApprovalChanged = "join_approval_changed"
)

// Rules of the network about invites (GroupRuleError.Rule), besides the group
// rules.
const (
	// RuleInviteRevoked: the code was reset and no longer works.
	RuleInviteRevoked = "invite_revoked"
	// RuleJoinRequested: the group requires approval; joining by its code
	// asked its admins, who have not approved yet.
	RuleJoinRequested = "join_requested"
)

// GroupInviter is an engine that reads and resets a group's invite link and
// joins groups by one. Codes are the part of the link after InviteLinkPrefix.
// An unknown or revoked code is ErrNotFound; a group the account is not an
// admin of is a GroupRuleError (not_an_admin), one it is not in not_a_member.
type GroupInviter interface {
	// GroupInviteCode reads the group's invite code; reset revokes the current
	// one and answers the new one.
	GroupInviteCode(ctx context.Context, groupID string, reset bool) (string, error)
	// GroupInvitePreview reads what an invite code leads to, without joining.
	GroupInvitePreview(ctx context.Context, code string) (GroupPreview, error)
	// JoinGroup joins the group of an invite code and answers its id; the
	// group arrives through the sink as an EventGroup (GroupCreated, with its
	// whole state) before it returns. A group the account is in already is a
	// GroupRuleError (already_a_member).
	JoinGroup(ctx context.Context, code string) (string, error)
}

// GroupPreview is what an invite code leads to.
type GroupPreview struct {
	GroupID          string     `json:"groupId"`
	Name             string     `json:"name"`
	Description      string     `json:"description"`
	ParticipantCount int        `json:"participantCount"`
	Owner            string     `json:"owner,omitempty"`
	CreatedAt        *time.Time `json:"createdAt,omitempty"`
	// JoinApproval: joining by the code asks the admins first.
	JoinApproval bool `json:"joinApproval"`
	IsCommunity  bool `json:"isCommunity"`
}

// GroupRequester is an engine that answers the requests to join a group that
// requires approval, and sets that setting. Admins only (GroupRuleError
// not_an_admin otherwise). Participants are chat ids (<digits>@c.us).
type GroupRequester interface {
	// GroupRequests lists the pending requests, oldest first.
	GroupRequests(ctx context.Context, groupID string) ([]JoinRequest, error)
	// AnswerGroupRequests approves (approve) or rejects the requests of
	// participants; it says of each whether it was done (Added), and why not
	// (code not_requested: no pending request). Approved participants arrive
	// as group events (added).
	AnswerGroupRequests(ctx context.Context, groupID string, participants []string, approve bool) ([]Added, error)
	// SetGroupJoinApproval turns on or off the setting that makes joining by
	// the invite link ask the admins first (a join_approval_changed event).
	SetGroupJoinApproval(ctx context.Context, groupID string, on bool) error
}

// JoinRequest is a pending request to join a group.
type JoinRequest struct {
	ChatID      string    `json:"chatId"`
	RequestedAt time.Time `json:"requestedAt"`
}

// Communities is an engine that reads communities: a community is a parent
// group whose sub-groups are linked to it.
type Communities interface {
	// Community reads a group's place in a community: whether it is a community
	// (parent), its parent when it is a sub-group, and a community's
	// sub-groups.
	Community(ctx context.Context, groupID string) (Community, error)
}

// Community is a group's place in a community.
type Community struct {
	GroupID       string `json:"groupId"`
	IsCommunity   bool   `json:"isCommunity"`
	ParentGroupID string `json:"parentGroupId,omitempty"`
	// SubGroups are a community's linked groups (empty for other groups).
	SubGroups []SubGroup `json:"subGroups"`
}

// SubGroup is a group linked to a community.
type SubGroup struct {
	GroupID string `json:"groupId"`
	Name    string `json:"name"`
	// IsDefault: the community's announcement group, which every member of it
	// is in.
	IsDefault bool `json:"isDefault"`
}
