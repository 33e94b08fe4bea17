package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Provider makes an engine for a workspace on first use, or returns nil when the
// workspace gets none. It lets the sandbox serve workspaces created at run time.
type Provider func(workspaceID string) Engine

// Registry holds the engines this process runs, per workspace, and keeps their
// presence heartbeat alive.
type Registry struct {
	presence *Presence
	sink     Sink
	provide  Provider

	mu      sync.Mutex
	engines map[string][]Engine // by workspace id
}

// NewRegistry returns a Registry that reports presence to p and session events to
// sink. provide may be nil.
func NewRegistry(p *Presence, sink Sink, provide Provider) *Registry {
	return &Registry{presence: p, sink: sink, provide: provide, engines: map[string][]Engine{}}
}

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

// Pick returns an engine of the workspace to send through, or ErrNoEngine.
func (r *Registry) Pick(ctx context.Context, workspaceID string) (Engine, error) {
	r.mu.Lock()
	list := r.engines[workspaceID]
	if len(list) == 0 && r.provide != nil {
		if e := r.provide(workspaceID); e != nil {
			r.engines[workspaceID] = []Engine{e}
			list = r.engines[workspaceID]
			r.mu.Unlock()
			r.beat(ctx, workspaceID, e)
			return e, nil
		}
	}
	r.mu.Unlock()
	if len(list) == 0 {
		return nil, ErrNoEngine
	}
	return list[0], nil
}

// Connections lists the live engines of a workspace across all replicas. With a
// provider, a workspace that has none yet gets its engine first.
func (r *Registry) Connections(ctx context.Context, workspaceID string) ([]Connection, error) {
	if r.provide != nil {
		if _, err := r.Pick(ctx, workspaceID); err != nil && err != ErrNoEngine {
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
