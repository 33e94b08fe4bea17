package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/switchboardhq/switchboard"
)

// Audience is a reusable list of contacts a campaign is sent to. Deleting one is
// soft (deleted_at): the campaigns that used it keep their history.
type Audience struct{ ent.Schema }

// Mixin of the Audience.
func (Audience) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Audience.
func (Audience) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("aud") }),
		field.String("name").NotEmpty(),
		field.Int64("contact_seq").Default(0).Annotations(entgql.Skip()).
			Comment("the sequence number of the last contact added: contacts are numbered 1, 2, … in the order they were added"),
		field.Time("deleted_at").Optional().Nillable().Annotations(entgql.Skip()),
		field.Time("created_at").Immutable().Default(time.Now).Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the Audience.
func (Audience) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("contacts", AudienceContact.Type).
			Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
	}
}

// Indexes of the Audience.
func (Audience) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "created_at")}
}

// Annotations of the Audience.
func (Audience) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}

// AudienceContact is one recipient of an audience, unique per (audience, to), with
// the variables a campaign's text may use.
type AudienceContact struct{ ent.Schema }

// Mixin of the AudienceContact.
func (AudienceContact) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the AudienceContact.
func (AudienceContact) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("acn") }),
		field.String("audience_id").Immutable(),
		field.String("to").NotEmpty().Comment("the recipient chat id (JID)"),
		field.JSON("variables", map[string]string{}).Optional().Annotations(entgql.Skip()),
		field.Int64("seq").Immutable().Annotations(entgql.Skip()).
			Comment("position in the audience, in the order contacts were added: a campaign walks them by it"),
		field.Time("created_at").Immutable().Default(time.Now).Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the AudienceContact.
func (AudienceContact) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("audience", Audience.Type).Ref("contacts").Field("audience_id").Unique().Required().Immutable(),
	}
}

// Indexes of the AudienceContact.
func (AudienceContact) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("audience_id", "to").Unique(),
		index.Fields("audience_id", "seq").Unique(),
	}
}

// Annotations of the AudienceContact.
func (AudienceContact) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}

// Campaign is the paced delivery of one message to every contact of an audience.
// Its progress lives here (the cursor: the seq of the last contact a message was
// made for), so a restart or a Redis loss resumes it where it stopped; its counters
// are read from its messages.
type Campaign struct{ ent.Schema }

// Mixin of the Campaign.
func (Campaign) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Campaign.
func (Campaign) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("cmp") }),
		field.String("name").NotEmpty(),
		field.String("audience_id").Immutable(),
		field.String("status").Default("pending").
			Comment("pending, running, paused, complete_sent, complete_delivered, aborted"),
		field.String("text").Optional(),
		field.String("media_url").Optional(),
		field.String("media_caption").Optional(),
		field.String("engine_id").Optional().
			Comment("the engine (number) the campaign sends through; empty: the engine the step picks"),
		field.String("on_missing_variable").Default("fail").Annotations(entgql.Skip()),
		field.Int("min_delay_ms").Default(0).Annotations(entgql.Skip()),
		field.Int("max_delay_ms").Default(0).Annotations(entgql.Skip()),
		field.Int("daily_cap").Default(0).Annotations(entgql.Skip()),
		field.Int("typing_ms").Default(0).Annotations(entgql.Skip()).
			Comment("how long \"typing…\" shows before each text message, inside the delay between messages"),
		field.String("quiet_start").Optional().Annotations(entgql.Skip()).Comment("HH:MM, local time of timezone"),
		field.String("quiet_end").Optional().Annotations(entgql.Skip()),
		field.String("timezone").Optional().Annotations(entgql.Skip()).Comment("IANA name of the quiet hours' time zone"),
		field.Int64("cursor").Default(0).Annotations(entgql.Skip()),
		field.Int64("last_seq").Annotations(entgql.Skip()).
			Comment("the audience's contact_seq when the campaign was created: contacts added later are not in it"),
		field.Int("total_count").Default(0).Annotations(entgql.Skip()),
		field.String("step_token").Optional().Annotations(entgql.Skip()).
			Comment("the token of the one step task that may advance the campaign; empty when none may"),
		field.Time("next_step_at").Optional().Nillable().Annotations(entgql.Skip()),
		field.String("pause_reason").Optional(),
		field.String("pause_engine_id").Optional().Annotations(entgql.Skip()).
			Comment("the engine whose restriction paused the campaign: it resumes by itself once that engine is no longer restricted; empty when a user paused it"),
		field.Time("created_at").Immutable().Default(time.Now).Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
		field.Time("started_at").Optional().Nillable(),
		field.Time("paused_at").Optional().Nillable(),
		field.Time("sent_through_at").Optional().Nillable().Annotations(entgql.Skip()).
			Comment("when the last message was made (the cursor reached last_seq)"),
		field.Time("completed_at").Optional().Nillable(),
		field.Time("aborted_at").Optional().Nillable(),
	}
}

// Edges of the Campaign.
func (Campaign) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("messages", Message.Type).Annotations(entgql.RelayConnection()),
	}
}

// Indexes of the Campaign.
func (Campaign) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "created_at"),
		// The reconciler's view: campaigns with a step to run.
		index.Fields("status", "next_step_at").Annotations(entsql.IndexWhere("step_token IS NOT NULL AND step_token <> ''")),
	}
}

// Annotations of the Campaign.
func (Campaign) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}
