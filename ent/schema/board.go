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

// Board is an agent's memory board for one domain (tasks, leads, invoices or a
// custom entity kind): columns provisioned from the domain's template, and items.
// A workspace holds at most one board per (agent_id, domain).
type Board struct{ ent.Schema }

// Mixin of the Board.
func (Board) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the Board.
func (Board) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("brd") }),
		field.String("agent_id").Immutable().NotEmpty().Comment("owning agent, for memory isolation"),
		field.String("domain").Immutable().NotEmpty().Comment("tasks, leads, invoices or custom:<slug>"),
		field.String("name").NotEmpty(),
		field.String("description").Default(""),
		field.Bool("agent_managed").Default(true),
		field.Int("memory_retention_days").Default(30).Comment("0 keeps items forever"),
		field.JSON("columns", []switchboard.BoardColumn{}).Annotations(entgql.Skip()),
		field.Time("created_at").Immutable().Default(time.Now).Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now).Annotations(entgql.OrderField("UPDATED_AT")),
	}
}

// Edges of the Board.
func (Board) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("items", BoardItem.Type).
			Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)),
	}
}

// Indexes of the Board.
func (Board) Indexes() []ent.Index {
	return []ent.Index{index.Fields("workspace_id", "agent_id", "domain").Unique()}
}

// Annotations of the Board.
func (Board) Annotations() []schema.Annotation {
	return []schema.Annotation{queryField("boards", switchboard.ScopeBoardsRead), entgql.RelayConnection()}
}

// BoardItem is one fact on a board. Its status and priority are stored as the
// board option they resolved to (label and color); the fingerprint (normalized
// text and source chat) finds the same fact again.
type BoardItem struct{ ent.Schema }

// Mixin of the BoardItem.
func (BoardItem) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Fields of the BoardItem.
func (BoardItem) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().DefaultFunc(func() string { return switchboard.NewID("itm") }),
		field.String("board_id").Immutable(),
		field.String("text").NotEmpty(),
		field.String("status_label").Optional(),
		field.String("status_color").Optional().Annotations(entgql.Skip()),
		field.String("priority_label").Optional(),
		field.String("priority_color").Optional().Annotations(entgql.Skip()),
		field.String("due_date").Optional(),
		field.JSON("cells", map[string]string{}).Optional().Annotations(entgql.Skip()),
		field.JSON("source", &switchboard.BoardSource{}).Optional().Annotations(entgql.Skip()),
		field.Float("confidence").Optional().Nillable(),
		field.String("fingerprint").Annotations(entgql.Skip()),
		field.JSON("ai_meta", switchboard.BoardItemMeta{}).Annotations(entgql.Skip()),
		field.Time("last_seen_at").Comment("last creation, sighting or change: the retention clock").
			Annotations(entgql.OrderField("LAST_SEEN_AT")),
		field.Time("deleted_at").Optional().Nillable(),
		field.Time("created_at").Immutable().Default(time.Now).Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).Comment("last change of content (a sighting alone leaves it)").
			Annotations(entgql.OrderField("UPDATED_AT")),
	}
}

// Edges of the BoardItem.
func (BoardItem) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("board", Board.Type).Ref("items").Field("board_id").Unique().Required().Immutable(),
	}
}

// Indexes of the BoardItem.
func (BoardItem) Indexes() []ent.Index {
	return []ent.Index{index.Fields("board_id", "fingerprint"), index.Fields("board_id", "last_seen_at")}
}

// Annotations of the BoardItem.
func (BoardItem) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}
