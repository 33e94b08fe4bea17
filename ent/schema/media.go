package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Media is an attachment (uploaded, or kept from a received message), served
// from an unguessable URL.
type Media struct{ ent.Schema }

// Mixin of the Media.
func (Media) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Media.
func (Media) Fields() []ent.Field {
	return []ent.Field{
		field.String("token").Immutable().Unique().Sensitive(),
		field.String("content_type"),
		field.String("filename").Optional(),
		field.Int64("size").Default(0),
		field.String("sha256").Optional().Comment("the hex SHA-256 of the bytes, once stored"),
		field.String("state").Default("ready").
			Comment("ready (bytes stored), pending (reserved: the bytes are being fetched) or unavailable (reason says why)"),
		field.String("reason").Optional().Comment("why unavailable media have no bytes: expired, awaiting_sender, error"),
		field.Bytes("data").Optional(),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Annotations of the Media.
func (Media) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
