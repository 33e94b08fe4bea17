package remote

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
)

// Profile implements engine.Profiler (capability profile).
func (e *Engine) Profile(ctx context.Context) (p engine.Profile, err error) {
	return p, e.invoke(ctx, "Profile", []any{&p})
}

// ProfilePicture implements engine.Profiler (capability profile); the bytes
// travel base64-encoded in the result.
func (e *Engine) ProfilePicture(ctx context.Context) (m engine.Media, err error) {
	return m, e.invoke(ctx, "ProfilePicture", []any{&m})
}

// SetProfile implements engine.Profiler (capability profile).
func (e *Engine) SetProfile(ctx context.Context, u engine.ProfileUpdate) error {
	return e.invoke(ctx, "SetProfile", nil, u)
}

// RejectCall implements engine.CallRejecter (capability calls).
func (e *Engine) RejectCall(ctx context.Context, from, callID string) error {
	return e.invoke(ctx, "RejectCall", nil, from, callID)
}
