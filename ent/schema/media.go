package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
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
		field.String("backend").Optional().
			Comment("where the bytes live: db (MediaChunk rows) or s3 (a bucket); empty for rows from before backends, whose bytes are in data"),
		field.Bytes("data").Optional().Comment("the bytes of media stored before backends (read as before, never written now)"),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Indexes of the Media: the prune pages through expired media oldest first.
func (Media) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at")}
}

// Annotations of the Media.
func (Media) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
