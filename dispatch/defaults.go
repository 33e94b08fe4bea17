package dispatch

import (
	"context"

	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/workspace"
	"github.com/switchboardhq/switchboard/viewer"
)

// DefaultEngines returns, by workspace id, the default engine of each workspace
// of ids that has one: the engine set as its default (POST
// /v1/engines/{id}/default) while it exists, else its first paired real engine
// (the oldest gateway with a device, or remote engine that ever connected). A
// workspace with neither has none: its sends go through Engines.Pick.
func DefaultEngines(ctx context.Context, client *ent.Client, ids ...string) (map[string]string, error) {
	sys := viewer.SystemContext(ctx)
	out := make(map[string]string, len(ids))
	wss, err := client.Workspace.Query().Where(workspace.IDIn(ids...), workspace.DefaultEngineIDNEQ("")).
		Select(workspace.FieldDefaultEngineID).All(sys)
	if err != nil {
		return nil, err
	}
	set := make([]string, len(wss))
	for i, w := range wss {
		set[i] = w.DefaultEngineID
	}
	// The engines set as default that exist, and the paired real engines, oldest
	// first: the first of a workspace is its default.
	rows, err := client.Engine.Query().Where(entengine.WorkspaceIDIn(ids...), entengine.Or(entengine.IDIn(set...),
		entengine.And(entengine.KindEQ(entengine.KindGateway), entengine.DeviceJidNEQ("")),
		entengine.And(entengine.KindEQ(entengine.KindRemote), entengine.ConnectedAtNotNil()))).
		Order(ent.Asc(entengine.FieldCreatedAt), ent.Asc(entengine.FieldID)).
		Select(entengine.FieldWorkspaceID, entengine.FieldKind).All(sys)
	if err != nil {
		return nil, err
	}
	workspaceOf := make(map[string]string, len(rows))
	for _, row := range rows {
		workspaceOf[row.ID] = row.WorkspaceID
	}
	for _, w := range wss {
		if workspaceOf[w.DefaultEngineID] == w.ID {
			out[w.ID] = w.DefaultEngineID
		}
	}
	for _, row := range rows {
		if _, ok := out[row.WorkspaceID]; !ok && row.Kind != entengine.KindSandbox {
			out[row.WorkspaceID] = row.ID
		}
	}
	return out, nil
}
