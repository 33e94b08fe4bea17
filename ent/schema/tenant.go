package schema

import (
	"context"
	"fmt"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"

	"github.com/switchboardhq/switchboard/ent/intercept"
	"github.com/switchboardhq/switchboard/viewer"
)

// TenantMixin gives a type a workspace_id and confines every query and mutation
// on it to the workspace of the viewer in the context. Only the System viewer sees
// across workspaces; a context without a viewer sees nothing.
type TenantMixin struct {
	mixin.Schema
	// Led says the type's own indexes lead with workspace_id, which serve
	// lookups by workspace: the mixin adds no index of its own, one less to
	// write on every insert and every update that moves an indexed column.
	Led bool
}

// Fields of the TenantMixin.
func (TenantMixin) Fields() []ent.Field {
	return []ent.Field{
		field.String("workspace_id").Immutable().NotEmpty(),
	}
}

// Indexes of the TenantMixin: workspace_id, unless the type's own indexes lead
// with it.
func (m TenantMixin) Indexes() []ent.Index {
	if m.Led {
		return nil
	}
	return []ent.Index{index.Fields("workspace_id")}
}

type wherer interface {
	WhereP(...func(*sql.Selector))
}

// scope returns the workspace a context is confined to; all is true for System.
func scope(ctx context.Context) (id string, all bool, err error) {
	v, ok := viewer.FromContext(ctx)
	switch {
	case !ok:
		return "", false, fmt.Errorf("ent: no viewer in context")
	case v.IsSystem():
		return "", true, nil
	case v.WorkspaceID == "":
		return "", false, fmt.Errorf("ent: viewer has no workspace")
	}
	return v.WorkspaceID, false, nil
}

// Interceptors of the TenantMixin: every query is filtered by the viewer's workspace.
func (TenantMixin) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		ent.TraverseFunc(func(ctx context.Context, q ent.Query) error {
			id, all, err := scope(ctx)
			if err != nil || all {
				return err
			}
			w, err := intercept.NewQuery(q)
			if err != nil {
				return err
			}
			w.WhereP(sql.FieldEQ("workspace_id", id))
			return nil
		}),
	}
}

// Hooks of the TenantMixin: creates are stamped with the viewer's workspace, and
// updates and deletes can only touch rows of that workspace.
func (TenantMixin) Hooks() []ent.Hook {
	return []ent.Hook{
		func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				id, all, err := scope(ctx)
				if err != nil {
					return nil, err
				}
				if all {
					return next.Mutate(ctx, m)
				}
				if m.Op().Is(ent.OpCreate) {
					if cur, ok := m.Field("workspace_id"); ok && cur != id {
						return nil, fmt.Errorf("ent: create in another workspace")
					}
					if err := m.SetField("workspace_id", id); err != nil {
						return nil, err
					}
					return next.Mutate(ctx, m)
				}
				w, ok := m.(wherer)
				if !ok {
					return nil, fmt.Errorf("ent: unexpected mutation type %T", m)
				}
				w.WhereP(sql.FieldEQ("workspace_id", id))
				return next.Mutate(ctx, m)
			})
		},
	}
}
