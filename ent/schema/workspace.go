package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"github.com/switchboardhq/switchboard"
)

// Workspace is a tenant: an account with its API keys, messages and engines.
type Workspace struct{ ent.Schema }

// Fields of the Workspace.
func (Workspace) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("ws") }),
		field.String("name").NotEmpty().Unique(),
		field.String("user_email").Optional().Nillable(),
		field.String("timezone").Optional().Nillable(),
		field.String("default_engine_id").Optional().
			Comment("the engine that sends when neither the message nor its chat names one; empty: the first paired real engine"),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Annotations of the Workspace.
func (Workspace) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Type("Account")}
}
