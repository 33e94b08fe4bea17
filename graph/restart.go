package graph

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/viewer"
)

// restartEngine is the use case behind restartEngine (POST
// /v1/engines/{id}/restart): the engine's session, wherever it runs, is
// disconnected and connected again on the same device. A sandbox has no
// session to restart, a remote engine only when it serves restart, a gateway
// only with a phone paired (conflict otherwise).
func (r *Resolver) restartEngine(ctx context.Context, id string) (*model.Engine, error) {
	v, _ := viewer.FromContext(ctx)
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	notRestartable := &switchboard.Error{Code: switchboard.ECONFLICT,
		Message: fmt.Sprintf("The %s engine %s has no session the server can restart.", row.Kind, row.ID),
		Details: []switchboard.Detail{{Path: "id", Code: "not_restartable", Message: "engine kind is " + string(row.Kind)}}}
	switch {
	case row.Kind == entengine.KindSandbox:
		return nil, notRestartable
	case row.Kind == entengine.KindGateway && row.DeviceJid == "":
		return nil, &switchboard.Error{Code: switchboard.ECONFLICT,
			Message: fmt.Sprintf("The gateway engine %s has no phone paired (state %s): pair it with its QR code or a pairing code.", row.ID, row.State),
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_state", Message: "engine state is " + row.State}}}
	}
	eng, err := r.Engines.Find(ctx, v.WorkspaceID, row.ID)
	if err != nil {
		return nil, err
	}
	rs, ok := eng.(engine.Restarter)
	if !ok || !engine.Serves(eng, "restart") {
		return nil, notRestartable
	}
	if err := rs.Restart(ctx); err != nil {
		return nil, err
	}
	r.Engines.Presence().Forget(v.WorkspaceID) // the session may run on another replica
	return r.engineByID(ctx, row.ID)
}
