package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// IdempotencyKey remembers the first request made with an Idempotency-Key so that a
// retry with the same body replays its result and one with another body is refused.
type IdempotencyKey struct{ ent.Schema }

// Mixin of the IdempotencyKey.
func (IdempotencyKey) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the IdempotencyKey.
func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("key").Immutable().NotEmpty().MaxLen(64),
		field.String("request_hash").Immutable(),
		field.String("message_id").Immutable(),
		field.Bytes("response").Immutable().Comment("snapshot of the message as first returned"),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Indexes of the IdempotencyKey.
func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "key").Unique(),
		// The prune reads the keys past their retention oldest first.
		index.Fields("created_at"),
	}
}

// Annotations of the IdempotencyKey.
func (IdempotencyKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
