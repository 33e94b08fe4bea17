package graph

import (
	"context"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
)

// Contacts: the address book the engines report, a contact's common groups and a chat's participants.

// contactList is the use case behind contactList.
func (r *Resolver) contactList(ctx context.Context, searchToken, engineID *string, limit, skip *int) (*model.ContactPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if limit == nil {
		l = defaultContacts
	}
	f, total, err := r.contactFilter(ctx, searchToken, engineID)
	if err != nil {
		return nil, err
	}
	items, err := r.store().Contacts(ctx, f, l, s)
	if err != nil {
		return nil, err
	}
	return &model.ContactPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// contactFilter is the filter of the contacts a searchToken and an engineId
// select, once the store holds the account's history, and how many contacts it
// selects.
func (r *Resolver) contactFilter(ctx context.Context, searchToken, engineID *string) (inbox.ContactFilter, int, error) {
	var p switchboard.Problems
	var f inbox.ContactFilter
	if t := searchToken; t != nil {
		checkSearchToken(&p, "searchToken", *t)
		f.Search = *t
	}
	f.Engine = engineFilter(&p, engineID)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return f, 0, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return f, 0, err
	}
	total, err := r.store().CountContacts(ctx, f)
	return f, total, err
}

// AllContacts is the use case behind GET /v1/contacts?limit=-1 (the reference's
// "every contact in a single page"): the contacts from skip on, in the order of
// contactList, handed to each a chunk at a time (allContactsChunk), so that the
// caller can stream them without holding them all. It calls total with how many
// match in all (the list's total) before the first chunk; each's error ends the
// walk. Errors before total is called (searchToken, skip) are the caller's
// to answer.
func (r *Resolver) AllContacts(ctx context.Context, searchToken, engineID *string, skip *int, total func(int), each func([]*ent.Contact) error) error {
	one := 1
	_, s, err := checkPage(&one, skip)
	if err != nil {
		return err
	}
	f, n, err := r.contactFilter(ctx, searchToken, engineID)
	if err != nil {
		return err
	}
	total(n)
	for off := s; ; off += allContactsChunk {
		chunk, err := r.store().Contacts(ctx, f, allContactsChunk, off)
		if err != nil {
			return err
		}
		if len(chunk) > 0 {
			if err := each(chunk); err != nil {
				return err
			}
		}
		if len(chunk) < allContactsChunk {
			return nil
		}
	}
}

// contactIDField normalizes a contact id given in the field id; a chat id of
// a group or newsletter is EINVALID, saying the forms taken (forms).
func contactIDField(raw, forms string) (string, error) {
	jid, err := normalizeField("id", raw)
	if err != nil {
		return "", err
	}
	if engine.ChatKind(jid) != engine.ChatContact {
		return "", &switchboard.Error{Code: switchboard.EINVALID, Message: "id must be a contact id (" + forms + ").",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "id must be a contact id"}}}
	}
	return jid, nil
}

// contactByID is the use case behind contact: a contact by its chat id or its
// LID, or ENOTFOUND.
func (r *Resolver) contactByID(ctx context.Context, id string) (*ent.Contact, error) {
	jid, err := contactIDField(id, "<digits>@c.us or <digits>@lid")
	if err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.store().Contact(ctx, jid)
	if ent.IsNotFound(err) {
		return nil, notFound("id", "No contact with id %s.", quote(jid))
	}
	return c, err
}

// commonGroups is the use case behind commonGroups.
func (r *Resolver) commonGroups(ctx context.Context, contactID string, limit, skip *int) (*model.ChatPage, error) {
	jid, err := contactIDField(contactID, "<digits>@c.us")
	if err != nil {
		return nil, err
	}
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	items, total, err := r.store().GroupsOf(ctx, jid, l, s)
	if err != nil {
		return nil, err
	}
	return &model.ChatPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// chatParticipants is the use case behind chatParticipants.
func (r *Resolver) chatParticipants(ctx context.Context, chatID string, searchToken *string, limit, skip *int) (*model.ParticipantPage, error) {
	var p switchboard.Problems
	l, s := defaultParticipants, 0
	if limit != nil {
		if l = *limit; l < 1 || l > maxParticipants {
			p.Add("limit", boundCode(l, 1), "limit must be between 1 and %d", maxParticipants)
		}
	}
	if skip != nil {
		if s = *skip; s < 0 {
			p.Add("skip", "too_small", "skip must be 0 or more")
		}
	}
	if searchToken != nil {
		checkSearchToken(&p, "searchToken", *searchToken)
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.chatByID(ctx, "chatId", chatID)
	if err != nil {
		return nil, err
	}
	var members []*ent.ChatMember
	if string(c.Kind) == engine.ChatGroup {
		if members, err = r.store().Members(ctx, c.Jid); err != nil {
			return nil, err
		}
	} else if string(c.Kind) == engine.ChatContact {
		members = []*ent.ChatMember{{ChatJid: c.Jid, MemberJid: c.Jid}}
	}
	jids := make([]string, len(members))
	for i, m := range members {
		jids[i] = m.MemberJid
	}
	contacts, err := r.store().ContactsOf(ctx, jids...)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, ct := range contacts {
		names[ct.Jid] = contactName(ct)
	}
	var all []*model.Participant
	for _, m := range members {
		name := names[m.MemberJid]
		if searchToken != nil && !strings.Contains(strings.ToLower(name+" "+m.MemberJid), strings.ToLower(*searchToken)) {
			continue
		}
		pt := &model.Participant{ChatID: m.MemberJid, IsAdmin: m.IsAdmin, IsSuperAdmin: m.IsSuperAdmin}
		if name != "" {
			pt.Name = &name
		}
		all = append(all, pt)
	}
	page := &model.ParticipantPage{Items: []*model.Participant{}, Limit: l, Skip: s, Total: len(all)}
	if s < len(all) {
		page.Items = all[s:min(len(all), s+l)]
	}
	return page, nil
}

// contactName is the name to show for a contact: the saved one, else its own.
func contactName(c *ent.Contact) string {
	if c.Name != "" {
		return c.Name
	}
	return c.PushName
}
