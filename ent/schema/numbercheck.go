package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// NumberCheck caches what an engine's network answered about one phone number
// (checkNumbers, docs/contacts.md): on the network or not, its ids, business or
// not. A check younger than the cache's lifetime is answered from here, so that
// asking again does not query the network again.
type NumberCheck struct{ ent.Schema }

// Mixin of the NumberCheck.
func (NumberCheck) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the NumberCheck.
func (NumberCheck) Fields() []ent.Field {
	return []ent.Field{
		field.String("engine_id").Comment("the engine whose network answered"),
		field.String("phone").Comment("the number's digits (E.164 without +)"),
		field.Bool("on_network"),
		field.String("jid").Default("").Comment("the chat id (<digits>@c.us) when on the network"),
		field.String("lid").Default("").Comment("the LID (<digits>@lid) when known"),
		field.Bool("is_business").Default(false),
		field.String("business_name").Default(""),
		field.Time("checked_at").Default(time.Now),
	}
}

// Indexes of the NumberCheck.
func (NumberCheck) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "engine_id", "phone").Unique(),
		// The prune drops checks past their lifetime oldest first.
		index.Fields("checked_at"),
	}
}

// Annotations of the NumberCheck.
func (NumberCheck) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
