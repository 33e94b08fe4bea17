package remote

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// PostStatus implements engine.StatusPoster (capability status).
func (e *Engine) PostStatus(ctx context.Context, s engine.StatusPost) (key engine.Key, err error) {
	return key, e.invoke(ctx, "PostStatus", []any{&key}, s)
}

// RevokeStatus implements engine.StatusPoster (capability status).
func (e *Engine) RevokeStatus(ctx context.Context, id string) error {
	return e.invoke(ctx, "RevokeStatus", nil, id)
}

var _ engine.StatusPoster = (*Engine)(nil)
