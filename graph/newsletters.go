package graph

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Newsletters: channels the account made or follows, as chats of kind newsletter.

// createNewsletter is the use case behind createNewsletter: a name of 1-100
// characters and an optional description of at most 2048 (the reference's
// bounds), stored with the newsletter as the engine reports it.
func (r *Resolver) createNewsletter(ctx context.Context, name string, description *string) (*ent.Chat, error) {
	var p switchboard.Problems
	if n := utf8.RuneCountInString(strings.TrimSpace(name)); n < 1 || utf8.RuneCountInString(name) > maxNewsletterName {
		p.Add("name", "too_big", "name must be 1-%d characters", maxNewsletterName)
	}
	desc := ""
	if description != nil {
		if desc = *description; utf8.RuneCountInString(desc) > maxNewsletterDesc {
			p.Add("description", "too_big", "description must be at most %d characters", maxNewsletterDesc)
		}
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	creator, err := phone[engine.NewsletterCreator](ctx, r, "creating a newsletter")
	if err != nil {
		return nil, err
	}
	var s engine.ChatState
	if err := r.act(ctx, func() (err error) { s, err = creator.CreateNewsletter(ctx, name, desc); return err }); err != nil {
		return nil, err
	}
	return r.store().Chat(ctx, s.ID)
}

// newsletter is the use case behind newsletter.
func (r *Resolver) newsletter(ctx context.Context, id string) (*ent.Chat, error) {
	if err := checkNewsletterID(id); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	return r.chatByID(ctx, "id", id)
}

// checkNewsletterID is 400 unless id is a newsletter id (<digits>@newsletter).
func checkNewsletterID(id string) error {
	user, _, _ := strings.Cut(id, "@")
	if !IsJID(id) || engine.ChatKind(id) != engine.ChatNewsletter || user == "" || strings.Trim(user, "0123456789") != "" {
		return &switchboard.Error{Code: switchboard.EINVALID, Message: "id must be a newsletter id (<digits>@newsletter).",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "Invalid newsletter id " + quote(id)}}}
	}
	return nil
}

// inviteCodeForm is a newsletter invite code: letters, digits, _ and -.
var inviteCodeForm = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// newsletterInviteCode is the code of an invite: the code itself, or a link
// whose last path part it is; 400 (at field) otherwise.
func newsletterInviteCode(field, raw string) (string, error) {
	code := strings.TrimSpace(raw)
	if i := strings.LastIndex(code, "/channel/"); i >= 0 && strings.HasPrefix(code, "https://") {
		code = strings.TrimSuffix(code[i+len("/channel/"):], "/")
	}
	if !inviteCodeForm.MatchString(code) {
		return "", fieldError(switchboard.EINVALID, field, "invalid_string",
			"Invalid newsletter invite "+quote(raw)+": an invite code (letters, digits, _ and -, at most 64) or a link https://whatsapp.com/channel/<code>")
	}
	return code, nil
}

// newsletterError maps an engine's answer about a newsletter: one the network
// does not know is 404 at field, one it refuses 422.
func newsletterError(field, what string, err error) error {
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return notFound(field, "The network knows no newsletter %s.", quote(what))
	case errors.Is(err, engine.ErrRejected):
		return fieldError(switchboard.EVALIDATION, field, "rejected", "The network refused: "+err.Error())
	}
	return err
}

// newsletterInvite is the use case behind newsletterInvite (GET
// /v1/newsletters/invites/{code}).
func (r *Resolver) newsletterInvite(ctx context.Context, raw string, engineID *string) (*model.NewsletterPreview, error) {
	code, err := newsletterInviteCode("code", raw)
	if err != nil {
		return nil, err
	}
	f, _, err := actingAs[engine.NewsletterFollower](ctx, r, engineID, engine.CapNewsletterFollow, "previewing a newsletter invite")
	if err != nil {
		return nil, err
	}
	s, err := f.NewsletterByInvite(ctx, code)
	if err != nil {
		return nil, newsletterError("code", code, err)
	}
	p := &model.NewsletterPreview{ID: s.ID, Name: s.Name, Description: s.Description, Subscribers: s.Subscribers,
		Invite: s.Invite, Verification: s.Verification, CreatedAt: s.CreatedAt, Role: s.Role, Following: engine.Following(s.Role)}
	if s.Muted != nil {
		p.Muted = *s.Muted
	}
	return p, nil
}

// followNewsletter is the use case behind followNewsletter (POST
// /v1/newsletters/{id}/follow, POST /v1/newsletters/follow): exactly one of
// id and invite; the newsletter is stored with the account's role.
func (r *Resolver) followNewsletter(ctx context.Context, id, invite *string, engineID *string) (*ent.Chat, error) {
	if (id == nil) == (invite == nil) {
		return nil, fieldError(switchboard.EVALIDATION, "id", "invalid_union", "Give exactly one of id and invite")
	}
	var code string
	if id != nil {
		if err := checkNewsletterID(*id); err != nil {
			return nil, err
		}
	} else {
		var err error
		if code, err = newsletterInviteCode("invite", *invite); err != nil {
			return nil, err
		}
	}
	f, _, err := actingAs[engine.NewsletterFollower](ctx, r, engineID, engine.CapNewsletterFollow, "following a newsletter")
	if err != nil {
		return nil, err
	}
	jid := deref(id)
	if code != "" {
		s, err := f.NewsletterByInvite(ctx, code)
		if err != nil {
			return nil, newsletterError("invite", code, err)
		}
		jid = s.ID
	}
	if _, err := f.FollowNewsletter(ctx, jid); err != nil {
		return nil, newsletterError("id", jid, err)
	}
	if err := r.settle(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	return r.store().Chat(ctx, jid)
}

// unfollowNewsletter is the use case behind unfollowNewsletter (DELETE
// /v1/newsletters/{id}/follow).
func (r *Resolver) unfollowNewsletter(ctx context.Context, id string, engineID *string) (*ent.Chat, error) {
	if err := checkNewsletterID(id); err != nil {
		return nil, err
	}
	f, _, err := actingAs[engine.NewsletterFollower](ctx, r, engineID, engine.CapNewsletterFollow, "unfollowing a newsletter")
	if err != nil {
		return nil, err
	}
	if err := f.UnfollowNewsletter(ctx, id); err != nil {
		return nil, newsletterError("id", id, err)
	}
	if err := r.settle(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	return r.store().Chat(ctx, id)
}

// muteNewsletter is the use case behind muteNewsletter (PUT
// /v1/newsletters/{id}/mute).
func (r *Resolver) muteNewsletter(ctx context.Context, id string, muted bool, engineID *string) (*ent.Chat, error) {
	if err := checkNewsletterID(id); err != nil {
		return nil, err
	}
	f, _, err := actingAs[engine.NewsletterFollower](ctx, r, engineID, engine.CapNewsletterFollow, "muting a newsletter")
	if err != nil {
		return nil, err
	}
	if err := f.MuteNewsletter(ctx, id, muted); err != nil {
		return nil, newsletterError("id", id, err)
	}
	if err := r.settle(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	return r.store().Chat(ctx, id)
}
