package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"github.com/switchboardhq/switchboard"
)

// Engine is a messaging engine a workspace owns: the in-process sandbox, a remote
// engine that connects over the engine WebSocket protocol with its token, or a
// server-side gateway. Its id is the id of its live session in presence (ping).
// A remote engine's token is stored only as its SHA-256, like an API key.
type Engine struct{ ent.Schema }

// Mixin of the Engine.
func (Engine) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Engine.
func (Engine) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("eng") }),
		field.Enum("kind").Values("sandbox", "remote", "gateway").Immutable(),
		field.String("name").Default(""),
		field.String("state").Default("DISCONNECTED").Comment("CONNECTED, DISCONNECTED or LOGGED_OUT; a gateway also OPENING, PAIRING, UNPAIRED, BANNED or CONFLICT: what the engine last reported"),
		field.String("type").Default("").Comment("gateway or regular: the kind the engine reported in its hello"),
		field.String("token_prefix").Optional().Immutable().Comment("the first characters of a remote engine's token"),
		field.String("token_hash").Optional().Nillable().Immutable().Unique().Sensitive(),
		field.String("phone").Default("").Comment("the account's own number (E.164, +digits) as the engine last reported it in its hello; empty when it reported none"),
		field.String("device_jid").Default("").Comment("a gateway's paired device (whatsmeow's store holds its keys); empty when unpaired"),
		field.String("stream").Optional().Nillable().Comment("a gateway's network stream: open, connecting or closed"),
		field.Bool("has_synced").Optional().Nillable().Comment("whether a gateway's phone sent its history sync"),
		field.String("restriction").Default("").Comment("why the network restricts the account now (a ban, a reach-out time lock); empty when it does not"),
		field.Time("restricted_until").Optional().Nillable(),
		field.String("last_error").Default("").Comment("the engine's last connection or pairing error (a gateway's), kept after it recovers; empty when it never had one"),
		field.Time("last_error_at").Optional().Nillable().Comment("when last_error was last reported"),
		field.Time("campaign_next_at").Optional().Nillable().
			Comment("the engine's next campaign send slot: a campaign step on the engine makes nothing before it, and takes it with a conditional update"),
		field.Bool("reject_calls").Default(false).Comment("whether the engine rejects incoming calls at once (docs/calls.md)"),
		field.String("reject_calls_message").Default("").Comment("the message a rejected caller is answered with; empty answers nothing"),
		field.Time("connected_at").Optional().Nillable(),
		field.Time("disconnected_at").Optional().Nillable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Annotations of the Engine.
func (Engine) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
