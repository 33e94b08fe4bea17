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

// Event is an outbox row: something that happened in a workspace, written in the
// same transaction as the change that caused it, fanned out to webhooks later.
type Event struct{ ent.Schema }

// Mixin of the Event.
func (Event) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("evt") }),
		field.String("type").Immutable().NotEmpty(),
		field.JSON("data", json.RawMessage{}).Immutable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("fanned_out_at").Optional().Nillable(),
	}
}

// Indexes of the Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{index.Fields("fanned_out_at", "created_at")}
}

// Annotations of the Event.
func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
