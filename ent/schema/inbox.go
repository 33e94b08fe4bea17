package schema

import (
	"encoding/json"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/switchboardhq/switchboard"
)

// InboxEvent is something an engine reported (an ack, an incoming message, a group
// change), stored as it arrived before it is applied. Applying it is retried until
// it succeeds, so a crash or a database blip never loses what the network said.
type InboxEvent struct{ ent.Schema }

// Mixin of the InboxEvent.
func (InboxEvent) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the InboxEvent.
func (InboxEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("inb") }),
		field.String("dedupe_key").Immutable().NotEmpty().
			Comment("the engine's id of the event: the same event reported twice is stored once"),
		field.String("type").Immutable().NotEmpty(),
		field.String("subject").Immutable().
			Comment("what the event is about (a message key, a group): events of one subject apply in order"),
		field.JSON("payload", json.RawMessage{}).Immutable().Comment("the engine.Event as reported"),
		field.Time("at").Immutable().Comment("when the network observed it"),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at").Default(time.Now),
		field.String("lease_token").Optional().Comment("the token of the applier that holds it"),
		field.Time("lease_until").Optional().Nillable(),
		field.Time("applied_at").Optional().Nillable(),
		field.Time("dead_at").Optional().Nillable().Comment("set when every attempt failed; last_error says why"),
		field.String("last_error").Optional(),
		field.JSON("media_urls", map[string]string{}).Optional().
			Comment("the media URLs reserved for the attachments the event brings, by message key: a retry reuses them"),
	}
}

// Indexes of the InboxEvent.
func (InboxEvent) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "dedupe_key").Unique(),
		index.Fields("applied_at", "next_attempt_at"),
		// The applier's view: the events still to apply, oldest first, so that a
		// claim reads a batch in order instead of sorting the whole backlog.
		index.Fields("at", "created_at").Annotations(entsql.IndexWhere("applied_at IS NULL AND dead_at IS NULL")),
		// The events still to apply that wait (for a retry, or in a lease, which
		// moves next_attempt_at to its end): a claim reads them to keep each
		// subject in order, and they are few whatever the backlog.
		index.Fields("next_attempt_at").Annotations(entsql.IndexWhere("applied_at IS NULL AND dead_at IS NULL")),
		index.Fields("subject", "at"),
		// The events given up, for the prune (applied ones it reads from
		// (applied_at, next_attempt_at)).
		index.Fields("dead_at").Annotations(entsql.IndexWhere("dead_at IS NOT NULL")),
	}
}

// Annotations of the InboxEvent.
func (InboxEvent) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
