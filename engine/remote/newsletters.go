package remote

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// NewsletterInfo implements engine.NewsletterFollower (capability
// newsletter_follow).
func (e *Engine) NewsletterInfo(ctx context.Context, id string) (c engine.ChatState, err error) {
	return c, e.invoke(ctx, "NewsletterInfo", []any{&c}, id)
}

// NewsletterByInvite implements engine.NewsletterFollower (capability
// newsletter_follow).
func (e *Engine) NewsletterByInvite(ctx context.Context, code string) (c engine.ChatState, err error) {
	return c, e.invoke(ctx, "NewsletterByInvite", []any{&c}, code)
}

// FollowNewsletter implements engine.NewsletterFollower (capability
// newsletter_follow).
func (e *Engine) FollowNewsletter(ctx context.Context, id string) (c engine.ChatState, err error) {
	return c, e.invoke(ctx, "FollowNewsletter", []any{&c}, id)
}

// UnfollowNewsletter implements engine.NewsletterFollower (capability
// newsletter_follow).
func (e *Engine) UnfollowNewsletter(ctx context.Context, id string) error {
	return e.invoke(ctx, "UnfollowNewsletter", nil, id)
}

// MuteNewsletter implements engine.NewsletterFollower (capability
// newsletter_follow).
func (e *Engine) MuteNewsletter(ctx context.Context, id string, muted bool) error {
	return e.invoke(ctx, "MuteNewsletter", nil, id, muted)
}

var _ engine.NewsletterFollower = (*Engine)(nil)
