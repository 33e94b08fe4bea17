// Package viewer carries who is making a request through a context: the workspace
// the API key belongs to and the scopes it holds. The data layer scopes every query
// to the viewer's workspace; resolvers check scopes with Require.
package viewer

import (
	"context"

	"github.com/switchboardhq/switchboard"
)

// Viewer is the caller of an operation.
type Viewer struct {
	// WorkspaceID is the workspace every read and write is confined to.
	WorkspaceID string
	// KeyID is the id of the API key used, empty for internal work.
	KeyID string
	// Scopes are the scopes of the key; "*" grants all.
	Scopes []string
	system bool
}

// System returns the viewer of internal work (migrations, the CLI, workers before
// they know a workspace) that is not confined to one workspace.
func System() Viewer { return Viewer{system: true, Scopes: []string{switchboard.ScopeAll}} }

// ForWorkspace returns an internal viewer confined to one workspace with every scope,
// used by background jobs acting on behalf of that workspace.
func ForWorkspace(id string) Viewer {
	return Viewer{WorkspaceID: id, Scopes: []string{switchboard.ScopeAll}}
}

// IsSystem reports whether v is the unconfined internal viewer.
func (v Viewer) IsSystem() bool { return v.system }

// Can reports whether v holds scope ("*" grants every scope but operator).
func (v Viewer) Can(scope string) bool { return switchboard.Grants(v.Scopes, scope) }

type ctxKey struct{}

// NewContext returns a copy of ctx carrying v.
func NewContext(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, ctxKey{}, v)
}

// FromContext returns the viewer in ctx, if any.
func FromContext(ctx context.Context) (Viewer, bool) {
	v, ok := ctx.Value(ctxKey{}).(Viewer)
	return v, ok
}

// SystemContext returns a copy of ctx carrying the System viewer.
func SystemContext(ctx context.Context) context.Context { return NewContext(ctx, System()) }

// WorkspaceContext returns a copy of ctx carrying ForWorkspace(id).
func WorkspaceContext(ctx context.Context, id string) context.Context {
	return NewContext(ctx, ForWorkspace(id))
}

// Require returns an EFORBIDDEN error naming scope unless the viewer in ctx holds it,
// and EUNAUTHORIZED when ctx carries no viewer at all.
func Require(ctx context.Context, scope string) (Viewer, error) {
	v, ok := FromContext(ctx)
	if !ok || (v.WorkspaceID == "" && !v.system) {
		return v, switchboard.Errorf(switchboard.EUNAUTHORIZED, "A valid API key is required.")
	}
	if scope != "" && !v.Can(scope) {
		return v, &switchboard.Error{
			Code:    switchboard.EFORBIDDEN,
			Message: "The API key lacks the required scope " + scope + ".",
			Details: []switchboard.Detail{{Path: "scope", Code: "missing_scope", Message: scope}},
		}
	}
	return v, nil
}
