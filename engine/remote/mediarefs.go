package remote

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/viewer"
)

// Media by reference, the server's side (docs/engine-protocol.md, "Media"):
// with an engine that announced FeatureMediaRefs, media it hands the server
// goes through an upload slot and media the server hands it through a URL of
// the media store; with any other, the bytes travel base64 in the frames.

// byRef reports whether media moves by reference with this engine.
func (e *Engine) byRef() bool {
	return e.hub.refs() && slices.Contains(e.features, FeatureMediaRefs)
}

// mediaResult runs a command whose one result is media (FetchMedia,
// ProfilePicture). By reference, a slot is minted first and its URL passed as
// the trailing uploadUrl param; the engine uploads the bytes there and replies
// without data, and the Media returned streams them from the media store
// (Body), which removes them once the caller closes it; inMemory reads them
// into Data instead and removes them at once (a profile picture, whose callers
// read Data). An engine that replies with data anyway is taken at its word.
func (e *Engine) mediaResult(ctx context.Context, method string, inMemory bool, args ...any) (engine.Media, error) {
	var m engine.Media
	if capability := methodCapability[method]; !e.byRef() || !slices.Contains(e.caps, capability) {
		return m, e.invoke(ctx, method, []any{&m}, args...)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.hub.commandTimeout())
		defer cancel()
		deadline, _ = ctx.Deadline()
	}
	s, err := e.hub.mintUpload(ctx, e.workspaceID, e.id, deadline)
	if err != nil {
		return m, err
	}
	if err := e.invoke(ctx, method, []any{&m}, append(args, s.url)...); err != nil {
		e.hub.dropUpload(s, true)
		return engine.Media{}, err
	}
	if m.Data != nil {
		e.hub.dropUpload(s, true)
		return m, nil
	}
	rc, o, err := e.hub.Media.OpenFilled(viewer.WorkspaceContext(ctx, e.workspaceID), s.mediaURL)
	if err != nil {
		e.hub.dropUpload(s, true)
		return engine.Media{}, fmt.Errorf("remote engine: %s replied without data and nothing was uploaded to its uploadUrl: %w", method, err)
	}
	m.Size = o.Size
	if m.MimeType == "" {
		m.MimeType = o.ContentType
	}
	if inMemory {
		m.Data, err = io.ReadAll(rc)
		_ = rc.Close()
		e.hub.dropUpload(s, false)
		if err != nil {
			return engine.Media{}, fmt.Errorf("remote engine: read the upload of %s: %w", method, err)
		}
		return m, nil
	}
	m.Body = &removeOnClose{ReadCloser: rc, remove: func() { e.hub.dropUpload(s, false) }}
	return m, nil
}

// removeOnClose is the uploaded bytes of a slot, removed from the media store
// once read.
type removeOnClose struct {
	io.ReadCloser
	remove func()
	closed bool
}

// Close closes the reader and removes the bytes.
func (r *removeOnClose) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.ReadCloser.Close()
	r.remove()
	return err
}

// pictureRef stores the bytes of a picture the server hands the engine and
// returns it by reference (url, no data), and a function that removes the
// stored bytes once the command is over. A picture without bytes (one that
// removes the picture) and an engine without FeatureMediaRefs get it as it is.
func (e *Engine) pictureRef(ctx context.Context, p engine.Media) (engine.Media, func(), error) {
	if !e.byRef() || (p.Body == nil && len(p.Data) == 0) {
		return p, func() {}, nil
	}
	r, release := p.Reader()
	defer release()
	o, err := e.hub.Media.Save(viewer.WorkspaceContext(ctx, e.workspaceID), r, p.MimeType, p.Filename)
	if err != nil {
		return p, nil, fmt.Errorf("remote: store the picture for the engine: %w", err)
	}
	ref := engine.Media{URL: o.URL, Size: o.Size, MimeType: o.ContentType, Filename: p.Filename, Preview: p.Preview}
	return ref, func() {
		ctx, cancel := context.WithTimeout(viewer.WorkspaceContext(context.Background(), e.workspaceID), 10*time.Second)
		defer cancel()
		if err := e.hub.Media.Remove(ctx, o.URL); err != nil {
			e.hub.log().Warn("picture handed to an engine not removed (the media prune removes it)", "err", err)
		}
	}, nil
}
