package remote

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// DisappearingTimer implements engine.DisappearingTimer (capability
// disappearing).
func (e *Engine) DisappearingTimer(ctx context.Context, chatID string) (seconds uint32, err error) {
	return seconds, e.invoke(ctx, "DisappearingTimer", []any{&seconds}, chatID)
}

// SetDisappearingTimer implements engine.DisappearingTimer (capability
// disappearing).
func (e *Engine) SetDisappearingTimer(ctx context.Context, chatID string, seconds uint32) error {
	return e.invoke(ctx, "SetDisappearingTimer", nil, chatID, seconds)
}

var _ engine.DisappearingTimer = (*Engine)(nil)
