package sandbox

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// A sandbox chat's disappearing-messages timer is kept in the process's
// memory, per workspace, engine and chat (a restart turns every timer off);
// reading a chat never set answers 0 (off). The sandbox's chats all take any
// allowed timer (docs/conversations.md).

var _ engine.DisappearingTimer = (*Engine)(nil)

// timerKey is the key of a chat's timer in the network's memory.
func (e *Engine) timerKey(chatID string) string {
	return e.workspaceID + "|" + e.id + "|" + chatID
}

// DisappearingTimer implements engine.DisappearingTimer.
func (e *Engine) DisappearingTimer(_ context.Context, chatID string) (uint32, error) {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	return e.net.timers[e.timerKey(chatID)], nil
}

// SetDisappearingTimer implements engine.DisappearingTimer.
func (e *Engine) SetDisappearingTimer(_ context.Context, chatID string, seconds uint32) error {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	if e.net.timers == nil {
		e.net.timers = map[string]uint32{}
	}
	if seconds == 0 {
		delete(e.net.timers, e.timerKey(chatID))
		return nil
	}
	e.net.timers[e.timerKey(chatID)] = seconds
	return nil
}
