package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Provider makes an engine for a workspace on first use, or returns nil when the
// workspace gets none. It lets the sandbox serve workspaces created at run time.
type Provider func(workspaceID string) Engine

// Owns reports whether a workspace has an engine of its own (any engine but the
// provider's, connected or not). Such a workspace never sends through the
// provider's engine unless a send names it.
type Owns func(ctx context.Context, workspaceID string) (bool, error)

// Registry holds the engines this process runs, per workspace, and keeps their
// presence heartbeat alive.
type Registry struct {
	presence *Presence
	sink     Sink
	provide  Provider
	remote   Remote
	owns     Owns

	mu      sync.Mutex
	engines map[string][]Engine // by workspace id
	// provided is, by workspace id, the id of the engine the provider made (the
	// sandbox): the workspace's fallback, picked only when it has no other engine.
	provided map[string]string
}

// NewRegistry returns a Registry that reports presence to p and session events to
// sink. provide may be nil.
func NewRegistry(p *Presence, sink Sink, provide Provider) *Registry {
	return &Registry{presence: p, sink: sink, provide: provide, engines: map[string][]Engine{}, provided: map[string]string{}}
}

// SetRemote makes Pick and Find look for remote engines too. Call it before use.
func (r *Registry) SetRemote(rm Remote) { r.remote = rm }

// SetOwns gives Pick the test of whether a workspace has engines of its own.
// Without it, the provider's engine answers whenever no other is connected. Call
// it before use.
func (r *Registry) SetOwns(owns Owns) { r.owns = owns }

// Presence returns the registry's presence store.
func (r *Registry) Presence() *Presence { return r.presence }

// Attach adds a connected engine to a workspace and announces it.
func (r *Registry) Attach(ctx context.Context, workspaceID string, e Engine) {
	r.mu.Lock()
	r.engines[workspaceID] = append(r.engines[workspaceID], e)
	r.mu.Unlock()
	r.beat(ctx, workspaceID, e)
}

// Detach removes an engine, closes it and announces that it left.
func (r *Registry) Detach(ctx context.Context, workspaceID, engineID string) {
	r.mu.Lock()
	list := r.engines[workspaceID]
	var gone Engine
	for i, e := range list {
		if e.ID() == engineID {
			gone = e
			r.engines[workspaceID] = append(list[:i:i], list[i+1:]...)
			if r.provided[workspaceID] == engineID {
				delete(r.provided, workspaceID)
			}
			break
		}
	}
	r.mu.Unlock()
	if gone == nil {
		return
	}
	_ = gone.Close()
	c := Connection{ID: gone.ID(), Kind: gone.Kind()}
	if err := r.presence.Leave(ctx, workspaceID, c); err != nil {
		slog.Warn("engine presence leave failed", "workspace", workspaceID, "engine", c.ID, "err", err)
	}
	r.emit(ctx, Event{Type: EventGone, WorkspaceID: workspaceID, EngineID: c.ID, At: time.Now()})
}

// Pick returns an engine of the workspace to send through, or ErrNoEngine. The
// provider's engine (the sandbox) never shadows a real one: an engine attached to
// this process comes first, then a remote or gateway engine connected to any
// replica; the provider's engine only in a workspace that owns no other (when
// its own are all disconnected, nothing is picked: sends wait for them).
func (r *Registry) Pick(ctx context.Context, workspaceID string) (Engine, error) {
	if e := r.attached(workspaceID); e != nil {
		return e, nil
	}
	if r.remote != nil {
		e, err := r.remote.Lookup(ctx, workspaceID)
		if err == nil || !errors.Is(err, ErrNoEngine) {
			return e, err
		}
	}
	if r.owns != nil {
		if owns, err := r.owns(ctx, workspaceID); err != nil {
			return nil, err
		} else if owns {
			return nil, ErrNoEngine
		}
	}
	return r.Ensure(ctx, workspaceID)
}

// attached is the first engine of the workspace this process holds that the
// provider did not make, or nil.
func (r *Registry) attached(workspaceID string) Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.engines[workspaceID] {
		if e.ID() != r.provided[workspaceID] {
			return e
		}
	}
	return nil
}

// Ensure makes sure this process holds the provider's engine of the workspace,
// if it has one, and returns an engine the process holds, or ErrNoEngine.
func (r *Registry) Ensure(ctx context.Context, workspaceID string) (Engine, error) {
	r.mu.Lock()
	list := r.engines[workspaceID]
	r.mu.Unlock()
	if len(list) > 0 {
		return list[0], nil
	}
	return r.Provided(ctx, workspaceID)
}

// Provided returns the provider's engine of the workspace (the sandbox), made
// on first use, or ErrNoEngine when the workspace gets none: the engine a send
// that names the sandbox goes through, whatever other engines it has.
func (r *Registry) Provided(ctx context.Context, workspaceID string) (Engine, error) {
	if e := r.providedEngine(workspaceID); e != nil {
		return e, nil
	}
	if r.provide == nil {
		return nil, ErrNoEngine
	}
	e := r.provide(workspaceID)
	if e == nil {
		return nil, ErrNoEngine
	}
	r.mu.Lock()
	if _, ok := r.provided[workspaceID]; ok { // provided concurrently
		r.mu.Unlock()
		_ = e.Close()
		if cur := r.providedEngine(workspaceID); cur != nil {
			return cur, nil
		}
		return nil, ErrNoEngine
	}
	r.engines[workspaceID] = append(r.engines[workspaceID], e)
	r.provided[workspaceID] = e.ID()
	r.mu.Unlock()
	r.beat(ctx, workspaceID, e)
	return e, nil
}

// providedEngine is the provider's engine of the workspace this process holds,
// or nil.
func (r *Registry) providedEngine(workspaceID string) Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.provided[workspaceID]
	if !ok {
		return nil
	}
	for _, e := range r.engines[workspaceID] {
		if e.ID() == id {
			return e
		}
	}
	return nil
}

// Find returns the engine engineID of the workspace wherever its session runs, or
// ErrDisconnected.
func (r *Registry) Find(ctx context.Context, workspaceID, engineID string) (Engine, error) {
	r.mu.Lock()
	for _, e := range r.engines[workspaceID] {
		if e.ID() == engineID {
			r.mu.Unlock()
			return e, nil
		}
	}
	r.mu.Unlock()
	if r.remote != nil {
		return r.remote.Get(ctx, workspaceID, engineID)
	}
	return nil, ErrDisconnected
}

// Held reports whether this process holds the session of engineID.
func (r *Registry) Held(workspaceID, engineID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.engines[workspaceID] {
		if e.ID() == engineID {
			return true
		}
	}
	return false
}

// Connections lists the live engines of a workspace across all replicas. With a
// provider, a workspace that has none yet gets its engine first.
func (r *Registry) Connections(ctx context.Context, workspaceID string) ([]Connection, error) {
	if r.provide != nil {
		if _, err := r.Ensure(ctx, workspaceID); err != nil && err != ErrNoEngine {
			return nil, err
		}
	}
	return r.presence.List(ctx, workspaceID)
}

// Run refreshes the heartbeat of every engine until ctx is done, then detaches them.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(r.presence.TTL() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.closeAll()
			return
		case <-t.C:
			r.mu.Lock()
			all := map[string][]Engine{}
			for ws, list := range r.engines {
				all[ws] = append([]Engine(nil), list...)
			}
			r.mu.Unlock()
			for ws, list := range all {
				for _, e := range list {
					r.beat(ctx, ws, e)
				}
			}
		}
	}
}

func (r *Registry) closeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.mu.Lock()
	ids := map[string][]string{}
	for ws, list := range r.engines {
		for _, e := range list {
			ids[ws] = append(ids[ws], e.ID())
		}
	}
	r.mu.Unlock()
	for ws, list := range ids {
		for _, id := range list {
			r.Detach(ctx, ws, id)
		}
	}
}

func (r *Registry) beat(ctx context.Context, workspaceID string, e Engine) {
	fresh, err := r.presence.Beat(ctx, workspaceID, Connection{ID: e.ID(), Kind: e.Kind()})
	if err != nil {
		slog.Warn("engine presence heartbeat failed", "workspace", workspaceID, "engine", e.ID(), "err", err)
		return
	}
	if fresh {
		r.emit(ctx, Event{Type: EventConnected, WorkspaceID: workspaceID, EngineID: e.ID(), At: time.Now()})
	}
}

func (r *Registry) emit(ctx context.Context, ev Event) {
	if r.sink == nil {
		return
	}
	if err := r.sink.HandleEvent(ctx, ev); err != nil {
		slog.Warn("engine event not recorded", "type", ev.Type, "workspace", ev.WorkspaceID, "err", err)
	}
}
