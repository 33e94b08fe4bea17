package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Media is an uploaded attachment, served to engines from an unguessable URL.
type Media struct{ ent.Schema }

// Mixin of the Media.
func (Media) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Media.
func (Media) Fields() []ent.Field {
	return []ent.Field{
		field.String("token").Immutable().Unique().Sensitive(),
		field.String("content_type").Immutable(),
		field.String("filename").Immutable().Optional(),
		field.Int64("size").Immutable(),
		field.Bytes("data").Immutable(),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Annotations of the Media.
func (Media) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
