package remote

import (
	"context"
	"slices"

	"github.com/switchboardhq/switchboard/engine"
)

// Profile implements engine.Profiler (capability profile).
func (e *Engine) Profile(ctx context.Context) (p engine.Profile, err error) {
	return p, e.invoke(ctx, "Profile", []any{&p})
}

// ProfilePicture implements engine.Profiler (capability profile); the bytes
// travel base64-encoded in the result, or, from an engine that announced
// FeatureMediaRefs, through an upload slot (see FetchMedia). Either way they
// are returned as Data (a picture is small; callers read Data).
func (e *Engine) ProfilePicture(ctx context.Context) (engine.Media, error) {
	return e.mediaResult(ctx, "ProfilePicture", true)
}

// SetProfile implements engine.Profiler (capability profile). A new picture
// goes to an engine that announced FeatureMediaRefs as a URL (see
// SetGroupPicture).
func (e *Engine) SetProfile(ctx context.Context, u engine.ProfileUpdate) error {
	if u.Picture != nil && slices.Contains(e.caps, methodCapability["SetProfile"]) {
		ref, done, err := e.pictureRef(ctx, *u.Picture)
		if err != nil {
			return err
		}
		defer done()
		u.Picture = &ref
	}
	return e.invoke(ctx, "SetProfile", nil, u)
}

// RejectCall implements engine.CallRejecter (capability calls).
func (e *Engine) RejectCall(ctx context.Context, from, callID string) error {
	return e.invoke(ctx, "RejectCall", nil, from, callID)
}
