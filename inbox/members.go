package inbox

import (
	"context"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chatmember"
)

// Reading the members of groups.

// Members returns the members of the chats, super admins first, then admins,
// then by member id.
func (s Store) Members(ctx context.Context, chats ...string) ([]*ent.ChatMember, error) {
	return s.Client.ChatMember.Query().Where(chatmember.ChatJidIn(chats...)).
		Order(ent.Desc(chatmember.FieldIsSuperAdmin), ent.Desc(chatmember.FieldIsAdmin), ent.Asc(chatmember.FieldMemberJid)).
		All(ctx)
}

// CountMembers is how many members the chats have in all.
func (s Store) CountMembers(ctx context.Context, chats ...string) (int, error) {
	return s.Client.ChatMember.Query().Where(chatmember.ChatJidIn(chats...)).Count(ctx)
}
