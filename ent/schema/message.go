package schema

import (
	"context"
	"fmt"
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

// Message is one message: queued or scheduled through the API, sent directly, or
// received from the network. Its status follows the lifecycle the engine reports.
type Message struct{ ent.Schema }

// Mixin of the Message.
func (Message) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{Led: true}} }

// Fields of the Message.
func (Message) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("msg") }),
		field.Enum("origin").Values("scheduled", "direct", "incoming", "history").Immutable().
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.String("to").NotEmpty().Comment("recipient chat JID (or the chat of an incoming message)"),
		field.String("from").Optional().Comment("sender JID of an incoming message"),
		field.String("sender_name").Optional(),
		field.String("type").NotEmpty().Comment("text, media, poll, location, vcard or unknown"),
		field.String("text").Optional(),
		field.String("media_url").Optional(),
		field.String("media_kind").Optional(),
		field.String("media_filename").Optional(),
		field.String("media_mime").Optional().Comment("the content type of the media on the network"),
		field.Int64("media_size").Optional().Comment("the attachment's size in bytes, as the network tells it"),
		field.String("media_sha256").Optional().Comment("the hex SHA-256 of the attachment, as the network tells it"),
		field.Int("media_width").Optional(),
		field.Int("media_height").Optional(),
		field.Int("media_seconds").Optional().Comment("the duration of audio and video"),
		field.Bytes("media_ref").Optional().Sensitive().Annotations(entgql.Skip()).
			Comment("the engine's reference to download the attachment again (engine.MediaInfo.Ref): the gateway's direct path and keys"),
		field.String("media_fetch").Optional().Annotations(entgql.Skip()).
			Comment("due while the attachment's download into media_url is to be made; why it failed (expired, awaiting_sender, error); empty once filled"),
		field.Float("latitude").Optional().Nillable().Comment("the place a location message shares"),
		field.Float("longitude").Optional().Nillable(),
		field.String("location_name").Optional(),
		field.String("location_address").Optional(),
		field.Strings("vcards").Optional().Comment("the contact cards of a vcard message"),
		field.Strings("vcard_names").Optional().Comment("the shown names of the contact cards, in the order of vcards"),
		field.String("raw_type").Optional().Comment("the network's kind of a message of type unknown"),
		field.String("wire_type").Optional().
			Comment("the network's message type: chat, image, video, document, audio, ptt, sticker, gif, ptv, poll_creation, location, vcard, multi_vcard, unknown, revoked"),
		field.String("poll_question").Optional(),
		field.Strings("poll_options").Optional(),
		field.Bool("poll_allow_multiple").Optional().Nillable(),
		field.Strings("mentions").Optional(),
		field.String("reply_to").Optional(),
		field.String("forwarded_from").Optional().Comment("the key of the stored message this one forwards"),
		field.String("reaction").Optional().Comment("the account's own reaction to the message"),
		field.Time("pinned_until").Optional().Nillable().Comment("set while the message is pinned in its chat"),
		field.String("secret").Optional(),
		field.Int("typing_ms").Optional().Annotations(entgql.Skip()).
			Comment("how long the engine shows \"typing…\" in the chat before it sends the message (a scheduled send's withTyping, a campaign's typingSeconds)"),
		field.JSON("link_preview", &switchboard.LinkPreview{}).Optional().
			Annotations(entgql.Skip()),
		field.String("status").Default("pending"),
		field.Time("send_at").Optional().Nillable(),
		field.Time("created_at").Immutable().Default(time.Now).
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
		field.Time("confirmed_at").Optional().Nillable(),
		field.Time("received_at").Optional().Nillable(),
		field.Time("read_at").Optional().Nillable(),
		field.Time("played_at").Optional().Nillable(),
		field.Time("failed_at").Optional().Nillable(),
		field.String("failure_reason").Optional(),
		field.String("wa_id").Optional().Comment("wire id of the message on the network"),
		field.String("wa_participant").Optional(),
		field.String("wa_serialized").Optional().Comment("the serialized message key"),
		field.Bool("from_me").Default(true),
		field.Int("dispatch_attempts").Default(0).Annotations(entgql.Skip()),
		field.String("claim_token").Optional().Annotations(entgql.Skip()).
			Comment("the token of the dispatch that holds the message while it is sending"),
		// Queued is true while the message is pending or sending (Hooks keep it so):
		// the queue's index is keyed by it rather than by status, so that no index
		// holds status and the moves that follow the send (received, read, played)
		// are HOT updates in PostgreSQL, which write no index entry.
		field.Bool("queued").Default(false).Annotations(entgql.Skip()),
		field.String("campaign_id").Optional().Nillable().Immutable().Comment("the campaign that sent the message"),
		field.String("engine_id").Optional().Comment("the engine (number) that sent or received the message"),
		field.String("audience_contact_id").Optional().Nillable().Immutable().Annotations(entgql.Skip()).
			Comment("the audience contact a campaign message was made for"),
	}
}

// Hooks of the Message: queued follows status (and origin), whoever writes
// them: a message is the queue's while it is pending or sending, unless it is
// the account's history (a message the phone itself still had pending).
func (Message) Hooks() []ent.Hook {
	return []ent.Hook{
		func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				status, ok := m.Field("status")
				if !ok {
					return next.Mutate(ctx, m)
				}
				queued := status == "pending" || status == "sending"
				if m.Op().Is(ent.OpCreate) {
					origin, _ := m.Field("origin")
					queued = queued && fmt.Sprint(origin) != "history" && fmt.Sprint(origin) != "incoming"
				}
				if err := m.SetField("queued", queued); err != nil {
					return nil, err
				}
				return next.Mutate(ctx, m)
			})
		},
	}
}

// Edges of the Message.
func (Message) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("campaign", Campaign.Type).Ref("messages").Field("campaign_id").Unique().Immutable(),
	}
}

// Indexes of the Message.
func (Message) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("workspace_id", "wa_serialized").Unique(),
		index.Fields("workspace_id", "origin", "created_at"),
		// The reconciler's view of the queue: only queued and claimed messages are
		// in it. It names queued, not status: an index on status (or a predicate
		// on it) would make every status move write every index.
		index.Fields("send_at").StorageKey("message_queue_send_at").Annotations(entsql.IndexWhere("queued")),
		index.Fields("media_fetch").Annotations(entsql.IndexWhere("media_fetch = 'due'")),
		// the message store: a chat's messages by time, and the pinned ones.
		index.Fields("workspace_id", "to", "created_at"),
		index.Fields("workspace_id", "created_at"),
		// the messages of one number (engine).
		index.Fields("workspace_id", "engine_id", "created_at"),
		index.Fields("workspace_id", "to", "pinned_until").Annotations(entsql.IndexWhere("pinned_until IS NOT NULL")),
		// A campaign makes one message per audience contact, never two: the row is
		// made in the transaction that advances the campaign's cursor.
		index.Fields("campaign_id", "audience_contact_id").Unique().Annotations(entsql.IndexWhere("campaign_id IS NOT NULL")),
		// The campaign's counters (one grouped count over its messages) read them
		// through the index above: an index on (campaign_id, status) would
		// hold status (see queued).
		// A campaign engine's daily cap: its campaign messages of the last 24 hours.
		index.Fields("workspace_id", "engine_id", "created_at").StorageKey("message_campaign_engine_created_at").
			Annotations(entsql.IndexWhere("campaign_id IS NOT NULL")),
	}
}

// Annotations of the Message.
func (Message) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		queryField("messages", switchboard.ScopeChatsRead),
	}
}
