package sandbox

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Statuses on the sandbox (docs/status.md): a posted status is kept in the
// process's memory, per workspace and engine (a restart forgets them), and
// always goes out; revoking one the engine never posted is not found. Contacts
// post statuses only when told to (POST /v1/sandbox/statuses, Simulate with an
// EventStatus).

var _ engine.StatusPoster = (*Engine)(nil)

// statusKey is the key of an engine's statuses in the network's memory.
func (e *Engine) statusKey() string { return e.workspaceID + "|" + e.id }

// PostStatus implements engine.StatusPoster.
func (e *Engine) PostStatus(_ context.Context, s engine.StatusPost) (engine.Key, error) {
	if s.Type != "text" && s.Type != "media" {
		return engine.Key{}, fmt.Errorf("%w: status type %q", engine.ErrRejected, s.Type)
	}
	id := s.WireID
	if id == "" {
		id = engine.WireID(switchboard.NewID("status"))
	}
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	if e.net.statuses == nil {
		e.net.statuses = map[string][]string{}
	}
	k := e.statusKey()
	if !slices.Contains(e.net.statuses[k], id) {
		e.net.statuses[k] = append(e.net.statuses[k], id)
	}
	return engine.Key{FromMe: true, Remote: engine.StatusChat, ID: id}, nil
}

// RevokeStatus implements engine.StatusPoster.
func (e *Engine) RevokeStatus(_ context.Context, id string) error {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	k := e.statusKey()
	i := slices.Index(e.net.statuses[k], id)
	if i < 0 {
		return fmt.Errorf("%w: status %s", engine.ErrNotFound, id)
	}
	e.net.statuses[k] = slices.Delete(e.net.statuses[k], i, i+1)
	return nil
}
