package engine

import "context"

// CapNewsletterFollow is the capability of following, unfollowing and muting
// newsletters (channels) and previewing them by invite (engine protocol
// capability name).
const CapNewsletterFollow = "newsletter_follow"

// The account's roles in a newsletter (ChatState.Role): an owner or admin runs
// it, a subscriber follows it, a guest does not follow it.
const (
	NewsletterOwner      = "owner"
	NewsletterAdmin      = "admin"
	NewsletterSubscriber = "subscriber"
	NewsletterGuest      = "guest"
)

// Following says whether the account with role follows the newsletter.
func Following(role string) bool {
	return role == NewsletterOwner || role == NewsletterAdmin || role == NewsletterSubscriber
}

// EventNewsletter: the account followed or unfollowed a newsletter, or muted or
// unmuted it (Newsletter), here or on another device.
const EventNewsletter EventType = "newsletter"

// The actions of a NewsletterChange.
const (
	NewsletterJoined      = "joined"
	NewsletterLeft        = "left"
	NewsletterMuteChanged = "mute_changed"
)

// NewsletterChange is what an EventNewsletter tells: Action is
// NewsletterJoined (Chat the newsletter, with its Role), NewsletterLeft or
// NewsletterMuteChanged (Muted).
type NewsletterChange struct {
	NewsletterID string `json:"newsletterId"`
	Action       string `json:"action"`
	// Role is the account's role after the change, when known.
	Role  string `json:"role,omitempty"`
	Muted *bool  `json:"muted,omitempty"`
	// Chat is the newsletter as the network describes it, when known.
	Chat *ChatState `json:"chat,omitempty"`
}

// NewsletterFollower is an engine that follows, unfollows and mutes newsletters
// and reads one by id or by invite code. Ids are <digits>@newsletter; a
// newsletter or invite the network does not know is ErrNotFound. Follow,
// unfollow and mute report the matching EventNewsletter.
type NewsletterFollower interface {
	// NewsletterInfo reads a newsletter, with the account's Role and Muted.
	NewsletterInfo(ctx context.Context, id string) (ChatState, error)
	// NewsletterByInvite reads the newsletter an invite code (the last part of
	// its invite link) opens, without following it.
	NewsletterByInvite(ctx context.Context, code string) (ChatState, error)
	// FollowNewsletter follows a newsletter and answers it as it is now.
	FollowNewsletter(ctx context.Context, id string) (ChatState, error)
	// UnfollowNewsletter stops following a newsletter.
	UnfollowNewsletter(ctx context.Context, id string) error
	// MuteNewsletter mutes (true) or unmutes a newsletter the account follows.
	MuteNewsletter(ctx context.Context, id string, muted bool) error
}
