package engine

import (
	"context"
	"fmt"
)

// Group actions of a GroupChange besides the ones that have a webhook event
// (see GroupChange): the group was created (Chat holds its whole state), or its
// settings changed (Announce, Restrict).
const (
	GroupCreated         = "created"
	GroupSettingsChanged = "settings_changed"
)

// Admin-change values of a GroupChange with action admin_changed.
const (
	AdminPromoted = "promoted"
	AdminDemoted  = "demoted"
)

// GroupAdmin is an engine that creates and administers groups on the network.
// Each method returns once the network took the action, having checked the
// network's rules (see GroupRuleError); what changed arrives through the sink as
// EventGroup events, in order. An unknown group is ErrNotFound. Participants are
// chat ids (<digits>@c.us).
type GroupAdmin interface {
	// CreateGroup creates a group with the account as its creator (super admin)
	// and adds the participants it can; it says of each participant whether it
	// was added, and why not.
	CreateGroup(ctx context.Context, name string, participants []string) (string, []Added, error)
	// UpdateGroup changes the subject, description or settings (nil: unchanged).
	UpdateGroup(ctx context.Context, groupID string, u GroupUpdate) error
	// AddParticipants adds participants to a group, each as the network allows.
	AddParticipants(ctx context.Context, groupID string, participants []string) ([]Added, error)
	// RemoveParticipant removes (kicks) a participant.
	RemoveParticipant(ctx context.Context, groupID, participant string) error
	// SetAdmin promotes (admin) or demotes (!admin) a participant.
	SetAdmin(ctx context.Context, groupID, participant string, admin bool) error
	// LeaveGroup makes the account leave the group; leaving a group it already
	// left does nothing.
	LeaveGroup(ctx context.Context, groupID string) error
	// SetGroupPicture replaces the group's picture with an image (PNG or JPEG).
	SetGroupPicture(ctx context.Context, groupID string, picture Media) error
}

// GroupUpdate is a change of a group's subject, description or settings; nil
// fields are left as they are.
type GroupUpdate struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
	// Announce: only admins send messages.
	Announce *bool `json:"announce,omitempty"`
	// Restrict: only admins edit the group's info (subject, description, picture).
	Restrict *bool `json:"restrict,omitempty"`
}

// Added is what became of one participant a group was asked to take: added, or
// not, with a reason code (not_on_network, privacy_restricted) and a message.
type Added struct {
	Participant string `json:"participant"`
	Added       bool   `json:"added"`
	Code        string `json:"code,omitempty"`
	Message     string `json:"message,omitempty"`
}

// Rules of the network a group operation can break (GroupRuleError.Rule).
const (
	RuleNotMember         = "not_a_member"             // the account is not in the group (it left, or was removed)
	RuleNotAdmin          = "not_an_admin"             // the account is not an admin of the group
	RuleAlreadyMember     = "already_a_member"         // the participant is in the group already
	RuleNotParticipant    = "not_a_participant"        // the participant is not in the group
	RuleAlreadyAdmin      = "already_an_admin"         // the participant is an admin already
	RuleParticipantNotAdm = "participant_not_an_admin" // the participant is not an admin
	RuleCreator           = "group_creator"            // the creator (super admin) cannot be demoted or removed
	RuleSelf              = "self"                     // the account acts on itself through a participant route
)

// GroupRuleError is a group operation the network refuses by its rules: Rule
// names which, Participant the participant it is about (empty for the account).
type GroupRuleError struct {
	Rule        string
	Participant string
	Message     string
}

// Error implements error.
func (e *GroupRuleError) Error() string {
	return fmt.Sprintf("engine: group rule %s: %s", e.Rule, e.Message)
}
