// Package graph is the application core: the GraphQL schema and its resolvers. Each
// use case lives in one resolver method; the REST facade in package rest calls the
// same methods, so both transports share one implementation.
package graph

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/workspace"
	"github.com/switchboardhq/switchboard/viewer"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/media"
)

// Resolver is the root resolver and holds the dependencies of every use case.
type Resolver struct {
	Client  *ent.Client
	Engines *engine.Registry
	Queue   *jobs.Queue
	Jobs    *jobs.Handlers
	Media   *media.Store
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// nodeType resolves the table of a global id from its prefix (see switchboard.NewID).
func nodeType(ctx context.Context, id string) (string, error) {
	switch {
	case strings.HasPrefix(id, "msg_"):
		return message.Table, nil
	case strings.HasPrefix(id, "ws_") && id == viewerWorkspace(ctx):
		return workspace.Table, nil // workspaces are not tenant rows: only one's own
	}
	return "", switchboard.Errorf(switchboard.ENOTFOUND, "No node with id %s.", quote(id))
}

// viewerWorkspace is the workspace of the viewer in ctx (resolvers call it after
// viewer.Require succeeded).
func viewerWorkspace(ctx context.Context) string {
	v, _ := viewer.FromContext(ctx)
	return v.WorkspaceID
}
