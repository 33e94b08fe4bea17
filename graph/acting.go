package graph

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Operations on the account and its contacts (number checks, the block list,
// contact details, the profile, calls) each act through one engine: the one
// engineId names, else the one a message without an engine would go through
// (the workspace's default engine, else any connected one: dispatch's routing).

// actingEngine returns the engine such an operation acts through: engineID
// when given (400 malformed, 404 unknown), else the routed one; 503
// engine_unavailable when it is not connected, and 501 not_supported when it
// does not serve capability (none checked when capability is ""). what names
// the operation in the errors.
func (r *Resolver) actingEngine(ctx context.Context, engineID *string, capability, what string) (engine.Engine, error) {
	id, err := r.sendingEngine(ctx, engineID)
	if err != nil {
		return nil, err
	}
	return r.actingEngineID(ctx, id, capability, what)
}

// actingEngineID is actingEngine for an engine id already checked ("" for the
// routed one).
func (r *Resolver) actingEngineID(ctx context.Context, id, capability, what string) (engine.Engine, error) {
	eng, err := r.Dispatcher.Route(ctx, viewerWorkspace(ctx), "", id)
	if (errors.Is(err, engine.ErrNoEngine) || errors.Is(err, engine.ErrDisconnected)) && id != "" {
		return nil, switchboard.Errorf(switchboard.ENOENGINE, "The engine %s is not connected; %s needs it.", id, what)
	}
	if eng, err = phoneAs[engine.Engine](eng, err, what); err != nil {
		return nil, err
	}
	if capability != "" && !engine.Serves(eng, capability) {
		return nil, switchboard.NotSupported(eng.ID(), capability)
	}
	return eng, nil
}

// actingAs is actingEngine as the interface T that serves capability.
func actingAs[T any](ctx context.Context, r *Resolver, engineID *string, capability, what string) (T, engine.Engine, error) {
	var zero T
	eng, err := r.actingEngine(ctx, engineID, capability, what)
	if err != nil {
		return zero, nil, err
	}
	t, ok := eng.(T)
	if !ok {
		return zero, nil, switchboard.NotSupported(eng.ID(), capability)
	}
	return t, eng, nil
}
