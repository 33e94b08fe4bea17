package graph

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
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
	if !IsJID(id) || engine.ChatKind(id) != engine.ChatNewsletter {
		return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "id must be a newsletter id (<digits>@newsletter).",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "Invalid newsletter id " + quote(id)}}}
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	return r.chatByID(ctx, "id", id)
}
