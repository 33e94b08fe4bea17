package remote

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// held is an engine this replica runs in process (a gateway session): the hub
// routes other replicas' commands to it as it does to a socket it holds.
type held struct {
	eng         engine.Engine
	workspaceID string
	caps        []string
	live        bool                // in presence: connected to its network
	onEnd       func(reason string) // the session was ended from some replica
}

// Hold makes eng, which this replica runs, reachable from every replica by its
// id until Release: their commands to it are carried here. It is in presence
// (ping, sends) only while SetLive says it is connected. onEnd is called when
// the engine's session is ended (reason logged_out or deleted) on any replica.
func (h *Hub) Hold(ctx context.Context, workspaceID string, eng engine.Engine, onEnd func(reason string)) error {
	he := &held{eng: eng, workspaceID: workspaceID, caps: engine.CapabilitiesOf(eng), onEnd: onEnd}
	h.mu.Lock()
	h.held[eng.ID()] = he
	h.mu.Unlock()
	return h.refreshOne(ctx, eng.ID(), he)
}

// SetLive puts a held engine in presence (it connected to its network) or takes
// it out (it disconnected); the change is recorded as a session event once.
func (h *Hub) SetLive(ctx context.Context, engineID string, live bool) error {
	h.mu.Lock()
	he := h.held[engineID]
	was := he != nil && he.live
	if he != nil {
		he.live = live
	}
	h.mu.Unlock()
	switch {
	case he == nil:
		return nil
	case live:
		return h.refreshOne(ctx, engineID, he)
	case was:
		return h.leave(ctx, he.workspaceID, engineID, he.eng.Kind())
	}
	return nil
}

// Release forgets a held engine: it leaves presence and its route.
func (h *Hub) Release(ctx context.Context, engineID string) {
	h.mu.Lock()
	he := h.held[engineID]
	delete(h.held, engineID)
	h.mu.Unlock()
	if he == nil {
		return
	}
	if err := dropRoute.Run(ctx, h.rdb, []string{routePrefix + engineID}, `"replica":"`+h.replica+`"`).Err(); err != nil {
		h.log().Warn("engine route not dropped", "engine", engineID, "err", err)
	}
	if he.live {
		if err := h.leave(ctx, he.workspaceID, engineID, he.eng.Kind()); err != nil {
			h.log().Warn("engine presence leave failed", "engine", engineID, "err", err)
		}
	}
}

// heldEngine returns the engine this replica runs for engineID, or nil.
func (h *Hub) heldEngine(engineID string) *held {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[engineID]
}

// refreshHeld renews the routes (and, while connected, the presence) of the held
// engines every third of the presence TTL until ctx ends.
func (h *Hub) refreshHeld(ctx context.Context) {
	t := time.NewTicker(h.ttl() / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		all := make(map[string]*held, len(h.held))
		for id, he := range h.held {
			all[id] = he
		}
		h.mu.Unlock()
		for id, he := range all {
			if err := h.refreshOne(ctx, id, he); err != nil {
				h.log().Warn("engine route not renewed", "engine", id, "err", err)
			}
		}
	}
}

// refreshOne renews a held engine's route for another TTL, with its
// restriction now, and its presence while it is connected.
func (h *Hub) refreshOne(ctx context.Context, engineID string, he *held) error {
	rt := route{Replica: h.replica, WorkspaceID: he.workspaceID, Kind: he.eng.Kind(), Capabilities: he.caps}
	if r, ok := he.eng.(engine.Restrictor); ok {
		rt.Restriction, _ = r.Restriction()
	}
	raw, _ := json.Marshal(rt)
	if err := h.rdb.Set(ctx, routePrefix+engineID, raw, h.ttl()).Err(); err != nil {
		return err
	}
	h.mu.Lock()
	live := he.live
	h.mu.Unlock()
	if !live {
		return nil
	}
	return h.beat(ctx, he.workspaceID, engineID, he.eng.Kind())
}
