package sandbox

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/engine"
)

// Numbers in the sandbox (docs/contacts.md): a number ending in 0000 is not on
// the network (the same numbers a send fails to); one ending in 5555 is a
// business named "Sandbox Business <last 4 digits>"; every other number is on
// it. The network tells the LID of every number on it (LIDOf). The block list
// is the process's memory of the sandbox network: it starts empty and is
// forgotten when the server restarts.

// CheckNumbers implements engine.NumberChecker.
func (e *Engine) CheckNumbers(_ context.Context, phones []string) ([]engine.NumberStatus, error) {
	out := make([]engine.NumberStatus, len(phones))
	for i, p := range phones {
		st := engine.NumberStatus{Phone: p}
		if !strings.HasSuffix(p, "0000") {
			st.OnNetwork, st.ChatID = true, p+"@c.us"
			st.LID = LIDOf(st.ChatID)
			if strings.HasSuffix(p, "5555") {
				st.IsBusiness, st.BusinessName = true, "Sandbox Business "+p[len(p)-4:]
			}
		}
		out[i] = st
	}
	return out, nil
}

// blockKey is the key of an engine's block list in the network's memory.
func (e *Engine) blockKey() string { return e.workspaceID + "|" + e.id }

// Block implements engine.Blocker.
func (e *Engine) Block(_ context.Context, chatID string) error {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	if e.net.blocked == nil {
		e.net.blocked = map[string][]string{}
	}
	k := e.blockKey()
	if !slices.Contains(e.net.blocked[k], numberOf(chatID)) {
		e.net.blocked[k] = append(e.net.blocked[k], numberOf(chatID))
	}
	return nil
}

// Unblock implements engine.Blocker.
func (e *Engine) Unblock(_ context.Context, chatID string) error {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	k := e.blockKey()
	e.net.blocked[k] = slices.DeleteFunc(e.net.blocked[k], func(s string) bool { return s == numberOf(chatID) })
	return nil
}

// Blocklist implements engine.Blocker: the blocked contacts in the order blocked.
func (e *Engine) Blocklist(context.Context) ([]string, error) {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	return append([]string{}, e.net.blocked[e.blockKey()]...), nil
}
