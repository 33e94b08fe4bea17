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

// Newsletters (channels) the account follows: whatsmeow's FollowNewsletter,
// UnfollowNewsletter, NewsletterToggleMute, GetNewsletterInfo and
// GetNewsletterInfoWithInvite; its NewsletterJoin, NewsletterLeave and
// NewsletterMuteChange events become EventNewsletter events. A newsletter's
// messages arrive as any other message (events.Message of a @newsletter chat).

var _ engine.NewsletterFollower = (*Engine)(nil)

// newsletterLink is the prefix of a newsletter's invite link.
const newsletterLink = "https://whatsapp.com/channel/"

// newsletterState is the chat state of a newsletter's metadata.
func newsletterState(md *types.NewsletterMetadata) engine.ChatState {
	s := engine.ChatState{ID: md.ID.String(), Kind: engine.ChatNewsletter, Name: md.ThreadMeta.Name.Text,
		Description: md.ThreadMeta.Description.Text, Subscribers: md.ThreadMeta.SubscriberCount,
		Verification: string(md.ThreadMeta.VerificationState)}
	if code := md.ThreadMeta.InviteCode; code != "" {
		s.Invite = newsletterLink + code
	}
	if t := md.ThreadMeta.CreationTime.Time; !t.IsZero() {
		t = t.UTC()
		s.CreatedAt = &t
	}
	if v := md.ViewerMeta; v != nil {
		s.Role = string(v.Role)
		muted := v.Mute == types.NewsletterMuteOn
		s.Muted = &muted
	}
	return s
}

// newsletterError maps whatsmeow's answer about a newsletter: one the network
// does not know (an IQ or GraphQL 404, or no metadata) is engine.ErrNotFound.
func newsletterError(what, id string, err error) error {
	var gql types.GraphQLError
	if errors.Is(err, whatsmeow.ErrIQNotFound) || (errors.As(err, &gql) && gql.Extensions.ErrorCode == 404) {
		return fmt.Errorf("%w: newsletter %s", engine.ErrNotFound, id)
	}
	return fmt.Errorf("gateway: %s %s: %w", what, id, err)
}

// newsletterJID parses a newsletter id.
func (e *Engine) newsletterJID(id string) (client, types.JID, error) {
	cl, j, err := e.readyFor(id)
	if err == nil && j.Server != types.NewsletterServer {
		err = fmt.Errorf("%w: %s is not a newsletter", engine.ErrRejected, id)
	}
	return cl, j, err
}

// NewsletterInfo implements engine.NewsletterFollower with GetNewsletterInfo.
func (e *Engine) NewsletterInfo(ctx context.Context, id string) (engine.ChatState, error) {
	cl, j, err := e.newsletterJID(id)
	if err != nil {
		return engine.ChatState{}, err
	}
	md, err := cl.GetNewsletterInfo(ctx, j)
	if err == nil && md == nil {
		err = whatsmeow.ErrIQNotFound
	}
	if err != nil {
		return engine.ChatState{}, newsletterError("newsletter", id, err)
	}
	return newsletterState(md), nil
}

// NewsletterByInvite implements engine.NewsletterFollower with
// GetNewsletterInfoWithInvite (the code, or a whole link).
func (e *Engine) NewsletterByInvite(ctx context.Context, code string) (engine.ChatState, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.ChatState{}, err
	}
	md, err := cl.GetNewsletterInfoWithInvite(ctx, strings.TrimPrefix(code, newsletterLink))
	if err == nil && md == nil {
		err = whatsmeow.ErrIQNotFound
	}
	if err != nil {
		return engine.ChatState{}, newsletterError("newsletter invite", code, err)
	}
	return newsletterState(md), nil
}

// FollowNewsletter implements engine.NewsletterFollower with FollowNewsletter,
// then reads the newsletter as it is now.
func (e *Engine) FollowNewsletter(ctx context.Context, id string) (engine.ChatState, error) {
	cl, j, err := e.newsletterJID(id)
	if err != nil {
		return engine.ChatState{}, err
	}
	if err := cl.FollowNewsletter(ctx, j); err != nil {
		return engine.ChatState{}, newsletterError("follow newsletter", id, err)
	}
	s := engine.ChatState{ID: j.String(), Kind: engine.ChatNewsletter}
	if md, err := cl.GetNewsletterInfo(ctx, j); err == nil && md != nil {
		s = newsletterState(md)
	}
	if !engine.Following(s.Role) {
		s.Role = engine.NewsletterSubscriber
	}
	return s, e.reportNow(ctx, newsletterEvent(engine.NewsletterChange{NewsletterID: s.ID, Action: engine.NewsletterJoined,
		Role: s.Role, Muted: s.Muted, Chat: &s}, time.Now()))
}

// UnfollowNewsletter implements engine.NewsletterFollower with
// UnfollowNewsletter.
func (e *Engine) UnfollowNewsletter(ctx context.Context, id string) error {
	cl, j, err := e.newsletterJID(id)
	if err != nil {
		return err
	}
	if err := cl.UnfollowNewsletter(ctx, j); err != nil {
		return newsletterError("unfollow newsletter", id, err)
	}
	return e.reportNow(ctx, newsletterEvent(engine.NewsletterChange{NewsletterID: j.String(), Action: engine.NewsletterLeft,
		Role: engine.NewsletterGuest}, time.Now()))
}

// MuteNewsletter implements engine.NewsletterFollower with
// NewsletterToggleMute.
func (e *Engine) MuteNewsletter(ctx context.Context, id string, muted bool) error {
	cl, j, err := e.newsletterJID(id)
	if err != nil {
		return err
	}
	if err := cl.NewsletterToggleMute(ctx, j, muted); err != nil {
		return newsletterError("mute newsletter", id, err)
	}
	return e.reportNow(ctx, newsletterEvent(engine.NewsletterChange{NewsletterID: j.String(), Action: engine.NewsletterMuteChanged,
		Muted: &muted}, time.Now()))
}

// newsletterEvent is the EventNewsletter of c observed at at.
func newsletterEvent(c engine.NewsletterChange, at time.Time) engine.Event {
	return engine.Event{ID: fmt.Sprintf("wa_newsletter_%s_%s_%d", c.NewsletterID, c.Action, at.UnixNano()),
		Type: engine.EventNewsletter, At: at, Newsletter: &c}
}

// newsletterEvents maps whatsmeow's newsletter events to EventNewsletter
// events; ok is false for any other event.
func newsletterEvents(evt any) (engine.Event, bool) {
	now := time.Now()
	switch v := evt.(type) {
	case *events.NewsletterJoin:
		s := newsletterState(&v.NewsletterMetadata)
		if !engine.Following(s.Role) {
			s.Role = engine.NewsletterSubscriber
		}
		return newsletterEvent(engine.NewsletterChange{NewsletterID: s.ID, Action: engine.NewsletterJoined, Role: s.Role,
			Muted: s.Muted, Chat: &s}, now), true
	case *events.NewsletterLeave:
		return newsletterEvent(engine.NewsletterChange{NewsletterID: v.ID.String(), Action: engine.NewsletterLeft,
			Role: engine.NewsletterGuest}, now), true
	case *events.NewsletterMuteChange:
		muted := v.Mute == types.NewsletterMuteOn
		return newsletterEvent(engine.NewsletterChange{NewsletterID: v.ID.String(), Action: engine.NewsletterMuteChanged,
			Muted: &muted}, now), true
	}
	return engine.Event{}, false
}
