package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/switchboardhq/switchboard"
)

// Story is one status (WhatsApp's stories, docs/status.md): one the account
// posted through the API, or one a contact posted that an engine received. A
// status lives 24 hours on the network (expires_at); the row stays after that
// and is listed only when asked for.
type Story struct{ ent.Schema }

// Mixin of the Story.
func (Story) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the Story.
func (Story) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("status") }),
		field.String("engine_id").Comment("the engine that posted or received it"),
		field.Bool("from_me").Comment("posted by the account"),
		field.String("author").Comment("the chat id of who posted it (the account's own for from_me)"),
		field.String("sender_name").Default(""),
		field.String("type").Comment("text, media or unknown"),
		field.String("text").Default("").Comment("the text, or a media status's caption"),
		field.String("background_color").Default("").Comment("#RRGGBB of a text status"),
		field.Int("font").Default(0),
		field.String("media_url").Default("").Comment("a posted status's media (the URL the engine fetched)"),
		field.String("media_kind").Default(""),
		field.String("media_mime").Default(""),
		field.Strings("audience").Optional().Comment("the chat ids a posted status was for; empty: the account's contacts"),
		field.String("status").Comment("sent, failed, received or revoked"),
		field.String("reason").Default("").Comment("why a post failed"),
		field.String("wa_id").Default("").Comment("the network's message id"),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("expires_at"),
	}
}

// Indexes of the Story.
func (Story) Indexes() []ent.Index {
	return []ent.Index{
		// The list: newest first, by author.
		index.Fields("workspace_id", "created_at"),
		index.Fields("workspace_id", "author", "created_at"),
		// One row per network status (the same status reported twice).
		index.Fields("workspace_id", "engine_id", "wa_id"),
	}
}

// Annotations of the Story.
func (Story) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
