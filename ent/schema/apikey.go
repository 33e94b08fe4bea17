package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"github.com/switchboardhq/switchboard"
)

// APIKey is a credential of one workspace. Only the SHA-256 of the key is stored;
// the prefix (its first characters) is kept to tell keys apart in lists and logs.
type APIKey struct{ ent.Schema }

// Mixin of the APIKey.
func (APIKey) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("key") }),
		field.String("name").Default(""),
		field.String("prefix").Immutable(),
		field.String("hash").Immutable().Unique().Sensitive(),
		field.Strings("scopes"),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

// Annotations of the APIKey.
func (APIKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
