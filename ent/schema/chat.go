package schema

import (
	"encoding/json"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/switchboardhq/switchboard"
)

// Chat is a conversation the account is part of (a contact, a group or a
// newsletter), as the engines reported it: its state on the phone (pinned,
// archived, unread), a summary of its last message, and how far back its history
// is stored. Newsletters are chats of kind newsletter with their own fields.
type Chat struct{ ent.Schema }

// Mixin of the Chat.
func (Chat) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the Chat.
func (Chat) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("cht") }),
		field.String("jid").Immutable().NotEmpty().Comment("the chat id on the network"),
		field.Enum("kind").Values("contact", "group", "newsletter").Immutable(),
		field.String("name").Optional(),
		field.Bool("pinned").Default(false),
		field.Bool("archived").Default(false),
		field.Bool("marked_unread").Default(false),
		field.Int("unread_count").Default(0).NonNegative(),
		field.Time("last_message_at").Optional().Nillable().
			Annotations(entgql.OrderField("LAST_MESSAGE_AT")),
		field.String("last_message_text").Optional(),
		field.Bool("last_message_from_me").Default(false),
		field.String("owner").Optional(),
		field.String("description").Optional(),
		field.Bool("restrict").Default(false),
		field.Bool("announce").Default(false),
		field.Bool("join_approval").Default(false).Comment("joining the group by its invite link asks its admins first (docs/groups.md)"),
		field.Int("participant_count").Default(0),
		field.Int("subscribers").Default(0),
		field.String("invite").Optional(),
		field.String("verification").Optional(),
		field.String("role").Optional().
			Comment("a newsletter: the account's role (owner, admin, subscriber; guest: not following; empty: unknown)"),
		field.Bool("muted").Default(false).Comment("a newsletter: the account muted it"),
		field.Time("oldest_loaded_at").Optional().Nillable().
			Comment("the time of the oldest message of the chat the store holds from the phone"),
		field.Bool("history_complete").Default(false).
			Comment("the phone has no history older than oldest_loaded_at"),
		field.String("engine_id").Optional().Comment("the engine (number) of the chat's latest message, either direction"),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Indexes of the Chat.
func (Chat) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "jid").Unique(),
		// latest-chats and chat lists: non-archived, pinned first, newest first.
		index.Fields("workspace_id", "archived", "pinned", "last_message_at"),
		index.Fields("workspace_id", "kind", "last_message_at"),
	}
}

// Annotations of the Chat.
func (Chat) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		queryField("chatConnection", switchboard.ScopeChatsRead),
	}
}

// Contact is someone in the account's address book or someone it talked to.
type Contact struct{ ent.Schema }

// Mixin of the Contact.
func (Contact) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the Contact.
func (Contact) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("cnt") }),
		field.String("jid").Immutable().NotEmpty().
			Comment("the contact's chat id: its phone-number form (<digits>@c.us), or its LID (<digits>@lid) while the number is unknown"),
		field.String("lid").Optional().Comment("the contact's LID (<digits>@lid) when known"),
		field.String("name").Optional().Comment("the name saved in the address book"),
		field.String("push_name").Optional().Comment("the name the contact gave themselves"),
		field.Bool("is_business").Default(false),
		field.Bool("saved").Default(false).Comment("in the phone's address book"),
		field.String("engine_id").Optional().Comment("the engine (number) that last reported the contact"),
		field.String("about").Optional().Comment("the contact's about text, as last read from the network"),
		field.Time("about_set_at").Optional().Nillable().Comment("when the contact set its about text, when known"),
		field.String("picture_id").Optional().Annotations(entgql.Skip()).Comment("the network's id of the contact's profile picture (empty: none)"),
		field.String("picture_url").Optional().Comment("Switchboard's media URL of the stored profile picture (never the network's)"),
		field.JSON("business", json.RawMessage{}).Optional().Annotations(entgql.Skip()).
			Comment("the business profile of a business account (an engine.BusinessProfile as JSON)"),
		field.Time("details_at").Optional().Nillable().
			Comment("when the details (about, picture, business) were last read from the network; nil: never, or stale after a change event"),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Indexes of the Contact.
func (Contact) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "jid").Unique(),
		index.Fields("workspace_id", "lid"), // a contact by its LID
	}
}

// Annotations of the Contact.
func (Contact) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		queryField("contactConnection", switchboard.ScopeContactsRead),
	}
}

// ChatMember is one participant of a group chat.
type ChatMember struct{ ent.Schema }

// Mixin of the ChatMember.
func (ChatMember) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the ChatMember.
func (ChatMember) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("mbr") }),
		field.String("chat_jid").Immutable().NotEmpty(),
		field.String("member_jid").Immutable().NotEmpty(),
		field.Bool("is_admin").Default(false),
		field.Bool("is_super_admin").Default(false),
		field.String("engine_id").Optional().Comment("the engine (number) that last reported the member"),
	}
}

// Indexes of the ChatMember.
func (ChatMember) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "chat_jid", "member_jid").Unique(),
		index.Fields("workspace_id", "member_jid"), // common groups
	}
}

// Annotations of the ChatMember.
func (ChatMember) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
