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

// SandboxSend is the sandbox network's memory of a message it carried, by wire id,
// so that a resend of the same wire id is never delivered twice, across restarts.
type SandboxSend struct{ ent.Schema }

// Mixin of the SandboxSend.
func (SandboxSend) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the SandboxSend.
func (SandboxSend) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().Comment("workspace id and wire id"),
		field.String("wire_id").Immutable().NotEmpty(),
		field.String("remote").Immutable(),
		field.Int("resends").Default(0).Comment("sends of the same wire id that were not delivered again"),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

// Indexes of the SandboxSend.
func (SandboxSend) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at")}
}

// Annotations of the SandboxSend.
func (SandboxSend) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}

// SandboxEvent is something the sandbox network will report at due_at (an ack, a
// reply): the network's future, kept in the database so that it survives restarts.
type SandboxEvent struct{ ent.Schema }

// Mixin of the SandboxEvent.
func (SandboxEvent) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the SandboxEvent.
func (SandboxEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("sbe") }),
		field.Time("due_at").Immutable(),
		field.JSON("payload", json.RawMessage{}).Immutable().Comment("the engine.Event to report"),
	}
}

// Indexes of the SandboxEvent.
func (SandboxEvent) Indexes() []ent.Index {
	return []ent.Index{index.Fields("due_at")}
}

// Annotations of the SandboxEvent.
func (SandboxEvent) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}

// SandboxWorld is the sandbox network's memory of a workspace's simulated account:
// when its world was anchored in time (every message time is relative to it), and
// whether its recent history was reported to Switchboard.
type SandboxWorld struct{ ent.Schema }

// Mixin of the SandboxWorld.
func (SandboxWorld) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the SandboxWorld.
func (SandboxWorld) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().Comment("the workspace id"),
		field.Time("anchor").Immutable(),
		field.Bool("synced").Default(false),
	}
}

// Annotations of the SandboxWorld.
func (SandboxWorld) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}

// SandboxGroup is the sandbox network's memory of one group of a workspace: its
// state on the network (subject, description, settings, participants and their
// roles, whether the account left it) and what its other members will do and
// when. The world's groups are copied here the first time they are touched; the
// groups the account creates live only here.
type SandboxGroup struct{ ent.Schema }

// Mixin of the SandboxGroup.
func (SandboxGroup) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the SandboxGroup.
func (SandboxGroup) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().Comment("workspace id and group id"),
		field.String("group_jid").Immutable().NotEmpty(),
		field.JSON("state", json.RawMessage{}).Comment("the group as the network holds it, and its members' plans"),
		field.Int("version").Default(0).Comment("bumped by every change; a change applies only to the version it read"),
		field.Time("next_due_at").Optional().Nillable().Comment("when its members act next"),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Indexes of the SandboxGroup.
func (SandboxGroup) Indexes() []ent.Index {
	return []ent.Index{index.Fields("next_due_at")}
}

// Annotations of the SandboxGroup.
func (SandboxGroup) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
