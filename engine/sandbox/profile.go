package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // profile pictures are PNG or JPEG

	"github.com/switchboardhq/switchboard/engine"
)

// The profile a sandbox account starts with (docs/profile.md).
const (
	DefaultPushName = "Sandbox"
	DefaultAbout    = "Hey there! I am using WhatsApp."
)

// profileState is what the network holds of an account's own profile.
type profileState struct {
	pushName, about string
	picture         []byte // JPEG; nil when the account has none
}

var _ engine.Profiler = (*Engine)(nil)

// profileOf returns the engine's profile (the starting one until set); the
// caller holds n.mu.
func (n *Network) profileOf(engineID string) *profileState {
	if n.profiles == nil {
		n.profiles = map[string]*profileState{}
	}
	p, ok := n.profiles[engineID]
	if !ok {
		p = &profileState{pushName: DefaultPushName, about: DefaultAbout}
		n.profiles[engineID] = p
	}
	return p
}

// Profile implements engine.Profiler: the account's profile as this process's
// network holds it (a restart brings back the starting one). The picture's id
// is the first 16 hex digits of its JPEG's SHA-256.
func (e *Engine) Profile(ctx context.Context) (engine.Profile, error) {
	w, _, err := e.world(ctx)
	if err != nil {
		return engine.Profile{}, err
	}
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	p := e.net.profileOf(e.id)
	out := engine.Profile{ID: w.me, PushName: p.pushName, About: p.about}
	if p.picture != nil {
		sum := sha256.Sum256(p.picture)
		out.PictureID = hex.EncodeToString(sum[:8])
	}
	return out, nil
}

// ProfilePicture implements engine.Profiler.
func (e *Engine) ProfilePicture(ctx context.Context) (engine.Media, error) {
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	p := e.net.profileOf(e.id)
	if p.picture == nil {
		return engine.Media{}, engine.ErrNotFound
	}
	return engine.Media{Data: bytes.Clone(p.picture), MimeType: "image/jpeg", Filename: "profile.jpg"}, nil
}

// SetProfile implements engine.Profiler. Like WhatsApp, the network keeps the
// picture as a JPEG (a PNG is converted).
func (e *Engine) SetProfile(ctx context.Context, u engine.ProfileUpdate) error {
	var pic []byte
	if u.Picture != nil && len(u.Picture.Data) > 0 {
		var err error
		if pic, err = asJPEG(u.Picture.Data); err != nil {
			return err
		}
	}
	e.net.mu.Lock()
	defer e.net.mu.Unlock()
	p := e.net.profileOf(e.id)
	if u.PushName != nil {
		p.pushName = *u.PushName
	}
	if u.About != nil {
		p.about = *u.About
	}
	if u.Picture != nil {
		p.picture = pic
	}
	return nil
}

// asJPEG returns a PNG or JPEG image as a JPEG.
func asJPEG(data []byte) ([]byte, error) {
	if bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}) {
		return bytes.Clone(data), nil
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: the picture is not a PNG or JPEG image: %v", engine.ErrRejected, err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var _ engine.CallRejecter = (*Engine)(nil)

// RejectCall implements engine.CallRejecter: the sandbox's callers hang up
// when rejected; the network remembers nothing of it.
func (e *Engine) RejectCall(ctx context.Context, from, callID string) error { return nil }
