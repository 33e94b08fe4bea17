package graph

import (
	"context"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/chatmember"
	"github.com/switchboardhq/switchboard/ent/contact"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Contacts: the address book the engines report, a contact's common groups and a chat's participants.

// contactList is the use case behind contactList.
func (r *Resolver) contactList(ctx context.Context, searchToken *string, limit, skip *int) (*model.ContactPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if limit == nil {
		l = defaultContacts
	}
	q, total, err := r.contactQuery(ctx, searchToken)
	if err != nil {
		return nil, err
	}
	items, err := q.Limit(l).Offset(s).All(ctx)
	if err != nil {
		return nil, err
	}
	return &model.ContactPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// contactQuery is the contacts a searchToken selects, in the contacts' order
// (saved first, then by name and id), and how many there are.
func (r *Resolver) contactQuery(ctx context.Context, searchToken *string) (*ent.ContactQuery, int, error) {
	var p switchboard.Problems
	q := r.Client.Contact.Query()
	if t := searchToken; t != nil {
		checkSearchToken(&p, "searchToken", *t)
		q.Where(contact.Or(contact.NameContainsFold(*t), contact.PushNameContainsFold(*t), contact.JidContains(*t)))
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, 0, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, 0, err
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	return q.Order(ent.Desc(contact.FieldSaved), ent.Asc(contact.FieldName), ent.Asc(contact.FieldJid)), total, nil
}

// AllContacts is the use case behind GET /v1/contacts?limit=-1 (the reference's
// "every contact in a single page"): the contacts from skip on, in the order of
// contactList, handed to each a chunk at a time (allContactsChunk), so that the
// caller can stream them without holding them all. It calls total with how many
// match in all (the list's total) before the first chunk; each's error ends the
// walk. Errors before total is called (scope, searchToken, skip) are the caller's
// to answer.
func (r *Resolver) AllContacts(ctx context.Context, searchToken *string, skip *int, total func(int), each func([]*ent.Contact) error) error {
	one := 1
	_, s, err := checkPage(&one, skip)
	if err != nil {
		return err
	}
	q, n, err := r.contactQuery(ctx, searchToken)
	if err != nil {
		return err
	}
	total(n)
	for off := s; ; off += allContactsChunk {
		chunk, err := q.Clone().Limit(allContactsChunk).Offset(off).All(ctx)
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

// commonGroups is the use case behind commonGroups.
func (r *Resolver) commonGroups(ctx context.Context, contactID string, limit, skip *int) (*model.ChatPage, error) {
	jid, err := normalizeField("id", contactID)
	if err != nil {
		return nil, err
	}
	if engine.ChatKind(jid) != engine.ChatContact {
		return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "id must be a contact id (<digits>@c.us).",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "id must be a contact id"}}}
	}
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	groups, err := r.Client.ChatMember.Query().Where(chatmember.MemberJid(jid)).Select(chatmember.FieldChatJid).Strings(ctx)
	if err != nil {
		return nil, err
	}
	return chatPage(ctx, r.Client.Chat.Query().Where(chat.JidIn(groups...), chat.KindEQ(chat.KindGroup)), l, s)
}

// chatParticipants is the use case behind chatParticipants.
func (r *Resolver) chatParticipants(ctx context.Context, chatID string, searchToken *string, limit, skip *int) (*model.ParticipantPage, error) {
	var p switchboard.Problems
	l, s := defaultParticipants, 0
	if limit != nil {
		if l = *limit; l < 1 || l > maxParticipants {
			p.Add("limit", "too_big", "limit must be between 1 and %d", maxParticipants)
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
	if c.Kind == chat.KindGroup {
		if members, err = r.Client.ChatMember.Query().Where(chatmember.ChatJid(c.Jid)).
			Order(ent.Desc(chatmember.FieldIsSuperAdmin), ent.Desc(chatmember.FieldIsAdmin), ent.Asc(chatmember.FieldMemberJid)).All(ctx); err != nil {
			return nil, err
		}
	} else if c.Kind == chat.KindContact {
		members = []*ent.ChatMember{{ChatJid: c.Jid, MemberJid: c.Jid}}
	}
	jids := make([]string, len(members))
	for i, m := range members {
		jids[i] = m.MemberJid
	}
	contacts, err := r.Client.Contact.Query().Where(contact.JidIn(jids...)).All(ctx)
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
