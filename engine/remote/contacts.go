package remote

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// CheckNumbers implements engine.NumberChecker (capability check_numbers).
func (e *Engine) CheckNumbers(ctx context.Context, phones []string) (out []engine.NumberStatus, err error) {
	return out, e.invoke(ctx, "CheckNumbers", []any{&out}, phones)
}

// Block implements engine.Blocker (capability block_list).
func (e *Engine) Block(ctx context.Context, chatID string) error {
	return e.invoke(ctx, "Block", nil, chatID)
}

// Unblock implements engine.Blocker (capability block_list).
func (e *Engine) Unblock(ctx context.Context, chatID string) error {
	return e.invoke(ctx, "Unblock", nil, chatID)
}

// Blocklist implements engine.Blocker (capability block_list).
func (e *Engine) Blocklist(ctx context.Context) (out []string, err error) {
	return out, e.invoke(ctx, "Blocklist", []any{&out})
}
