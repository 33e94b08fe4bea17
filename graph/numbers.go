package graph

import (
	"context"
	"regexp"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/viewer"
)

// Several numbers per workspace (docs/engines.md, "Several numbers"): the
// engineId a send names or a list filters by, and the workspace's default engine.

// engineIDRE is the form of an engine id.
var engineIDRE = regexp.MustCompile(`^eng_[A-Za-z0-9_-]{1,120}$`)

// engineFilter checks the engineId filter of a list into p and returns the id
// to filter by ("" for none). An id the workspace does not have selects nothing.
func engineFilter(p *switchboard.Problems, id *string) string {
	if id == nil {
		return ""
	}
	if !engineIDRE.MatchString(*id) {
		p.Add("engineId", "invalid_string", "engineId must be an engine id (eng_…)")
	}
	return *id
}

// sendingEngine checks the engine a send or an edit names and returns its id
// ("" when it names none, nil or ""): 400 when malformed, 404 when the
// workspace has no such engine. The sandbox is allowed: naming it is the only
// way a workspace with a real engine sends through it.
func (r *Resolver) sendingEngine(ctx context.Context, id *string) (string, error) {
	if id == nil || *id == "" {
		return "", nil
	}
	var p switchboard.Problems
	if engineFilter(&p, id); len(p) > 0 {
		return "", p.Err(switchboard.EINVALID)
	}
	if _, err := r.Client.Engine.Get(ctx, *id); ent.IsNotFound(err) {
		return "", notFound("engineId", "No engine with id %s in this workspace.", quote(*id))
	} else if err != nil {
		return "", err
	}
	return *id, nil
}

// setDefaultEngine is the use case behind setDefaultEngine (POST
// /v1/engines/{id}/default).
func (r *Resolver) setDefaultEngine(ctx context.Context, id string) (*model.Engine, error) {
	v, _ := viewer.FromContext(ctx)
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := r.Client.Workspace.UpdateOneID(v.WorkspaceID).SetDefaultEngineID(row.ID).Exec(ctx); err != nil {
		return nil, err
	}
	return r.engineByID(ctx, row.ID)
}

// defaultEngine is the id of the workspace's default engine, "" when it has
// none (dispatch.DefaultEngines).
func (r *Resolver) defaultEngine(ctx context.Context, workspaceID string) (string, error) {
	ids, err := dispatch.DefaultEngines(ctx, r.Client, workspaceID)
	return ids[workspaceID], err
}
