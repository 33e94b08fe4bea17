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

// Webhook is a customer endpoint that receives the events it subscribes to.
type Webhook struct{ ent.Schema }

// Mixin of the Webhook.
func (Webhook) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Webhook.
func (Webhook) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("wh") }),
		field.String("url").NotEmpty(),
		field.Strings("events"),
		field.String("description").Default(""),
		field.String("status").Default("enabled").Comment("enabled or disabled"),
		field.String("secret").Sensitive().Annotations(entgql.Skip()).Comment("current signing secret (whsec_...)"),
		field.String("previous_secret").Optional().Sensitive().Annotations(entgql.Skip()),
		field.Time("previous_secret_expires_at").Optional().Nillable().Annotations(entgql.Skip()),
		field.Int("consecutive_failures").Default(0),
		field.Time("disabled_at").Optional().Nillable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the Webhook.
func (Webhook) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", Delivery.Type).
			Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
	}
}

// Annotations of the Webhook.
func (Webhook) Annotations() []schema.Annotation {
	return []schema.Annotation{queryField("webhooks", switchboard.ScopeWebhooksRead), entgql.RelayConnection()}
}

// Delivery is one event on its way to one webhook. Its id is the envelope id the
// receiver sees, the same on every attempt.
type Delivery struct{ ent.Schema }

// Mixin of the Delivery.
func (Delivery) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Delivery.
func (Delivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("dlv") }),
		field.String("webhook_id").Immutable(),
		field.String("event_id").Immutable(),
		field.String("event_type").Immutable(),
		field.Bytes("payload").Immutable().Annotations(entgql.Skip()).Comment("the JSON envelope, as sent"),
		field.String("status").Default("pending").Comment("pending, succeeded or failed"),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at").Optional().Nillable(),
		field.Time("last_attempt_at").Optional().Nillable(),
		field.String("last_error").Optional(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the Delivery.
func (Delivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("webhook", Webhook.Type).Ref("deliveries").Field("webhook_id").Unique().Required().Immutable(),
		edge.To("attempt_log", DeliveryAttempt.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

// Annotations of the Delivery.
func (Delivery) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}

// Indexes of the Delivery.
func (Delivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "next_attempt_at"),
		index.Fields("webhook_id", "created_at"),
		// The finished deliveries, oldest first, for the prune.
		index.Fields("updated_at").Annotations(entsql.IndexWhere("status <> 'pending'")),
	}
}

// DeliveryAttempt is one HTTP attempt of a delivery, kept for operators and customers.
type DeliveryAttempt struct{ ent.Schema }

// Mixin of the DeliveryAttempt.
func (DeliveryAttempt) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the DeliveryAttempt.
func (DeliveryAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("att") }),
		field.String("delivery_id").Immutable(),
		field.String("webhook_id").Immutable(),
		field.Int("number").Immutable(),
		field.Time("at").Immutable(),
		field.Int("status_code").Immutable().Default(0),
		field.String("error").Immutable().Default(""),
		field.Int64("latency_ms").Immutable(),
		field.String("response_body").Immutable().Default("").Comment("first 4 KiB"),
		field.Bool("success").Immutable(),
	}
}

// Indexes of the DeliveryAttempt.
func (DeliveryAttempt) Indexes() []ent.Index {
	// A delivery's attempt log: read with each page of deliveries, and by the
	// cascade when a delivery is deleted (without it, each deletion scans every
	// attempt).
	return []ent.Index{index.Fields("delivery_id", "number")}
}

// Edges of the DeliveryAttempt.
func (DeliveryAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", Delivery.Type).Ref("attempt_log").Field("delivery_id").Unique().Required().Immutable(),
	}
}
