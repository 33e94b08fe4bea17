package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// Issue 32 item 4: media sixteen times the frame limit arrives whole through
// the upload slot; every frame stays small; the slot takes one upload, only
// from its engine, and not once expired; the bytes are removed once read.
func TestFetchMediaLargerThanAFrame(t *testing.T) {
	s := newMediaServer(t, 64<<10, 0)
	a := &album{payload: randomBytes(t, 1<<20), release: make(chan struct{}), asked: make(chan struct{})}
	far := s.connect(t, a, false)

	type fetched struct {
		m   engine.Media
		err error
	}
	done := make(chan fetched, 1)
	go func() {
		m, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0A"})
		done <- fetched{m, err}
	}()
	select {
	case <-a.asked:
	case got := <-done:
		t.Fatalf("FetchMedia = %v before the engine was asked", got.err)
	}
	params := s.commands("FetchMedia")
	var args []json.RawMessage
	var uploadURL string
	if len(params) != 1 || json.Unmarshal(params[0], &args) != nil || len(args) != 2 || json.Unmarshal(args[1], &uploadURL) != nil {
		t.Fatalf("FetchMedia params = %s, want [key, uploadUrl]", params)
	}
	if !strings.HasPrefix(uploadURL, s.url+remote.UploadPath) {
		t.Fatalf("uploadUrl %q is not under %s", uploadURL, s.url+remote.UploadPath)
	}
	// While the engine works, nobody else fills its slot.
	refusals := []struct {
		name, token string
		status      int
		code        string
	}{
		{"no token", "", 401, switchboard.EUNAUTHORIZED},
		{"a wrong token", "sbe_nope", 401, switchboard.EUNAUTHORIZED},
		{"another engine's token", s.other, 403, switchboard.EFORBIDDEN},
	}
	for _, r := range refusals {
		if status, code := put(t, uploadURL, r.token, []byte("forged")); status != r.status || code != r.code {
			t.Errorf("PUT with %s = %d %s, want %d %s", r.name, status, code, r.status, r.code)
		}
	}
	close(a.release)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.m.Data != nil || got.m.Body == nil {
		t.Fatalf("media came inline (%d bytes of data), want streamed from the store", len(got.m.Data))
	}
	if status, code := put(t, uploadURL, s.token, []byte("again")); status != 409 || code != switchboard.ECONFLICT {
		t.Errorf("a second PUT = %d %s, want 409 conflict", status, code)
	}
	if diff := cmp.Diff(struct {
		Size           int64
		Mime, Filename string
	}{1 << 20, "video/mp4", "clip.mp4"}, struct {
		Size           int64
		Mime, Filename string
	}{got.m.Size, got.m.MimeType, got.m.Filename}); diff != "" {
		t.Errorf("media (-want +got):\n%s", diff)
	}
	if b := readAll(t, got.m); !bytes.Equal(b, a.payload) {
		t.Errorf("read %d bytes, not the %d the engine had", len(b), len(a.payload))
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store after the read, want 0", n)
	}
	if diff := cmp.Diff([]string{remote.FeatureMediaRefs}, s.welcomeFeatures()); diff != "" {
		t.Errorf("welcome features (-want +got):\n%s", diff)
	}
	if n := s.largest(); n > 8<<10 {
		t.Errorf("largest frame %d bytes, want small", n)
	}
}

// A slot expires at its command's deadline: a PUT after it is refused, and a
// command that ended leaves no media in the store.
func TestUploadSlotExpires(t *testing.T) {
	s := newMediaServer(t, 0, 0)
	a := &album{payload: []byte("late"), release: make(chan struct{}), asked: make(chan struct{})}
	far := s.connect(t, a, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := far.(engine.MediaFetcher).FetchMedia(ctx, engine.Key{Remote: "15552223333@c.us", ID: "3EB0B"})
		done <- err
	}()
	<-a.asked
	var args []string
	params := s.commands("FetchMedia")
	var raw []json.RawMessage
	_ = json.Unmarshal(params[0], &raw)
	for _, r := range raw {
		var u string
		if json.Unmarshal(r, &u) == nil {
			args = append(args, u)
		}
	}
	if len(args) != 1 {
		t.Fatalf("FetchMedia params = %s, want an uploadUrl", params)
	}
	s.redis.FastForward(31 * time.Second) // past the command's deadline
	if status, code := put(t, args[0], s.token, []byte("late")); status != 404 || code != switchboard.ENOTFOUND {
		t.Errorf("PUT to an expired slot = %d %s, want 404 not_found", status, code)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("FetchMedia after the deadline succeeded")
	}
	eventually(t, "the reserved media removed", func() bool { return s.mediaRows(t) == 0 })
}

// A PUT past the media store's bound is refused with 413 in the error
// envelope, and the command fails.
func TestUploadOverTheBound(t *testing.T) {
	s := newMediaServer(t, 0, 1000)
	a := &album{payload: randomBytes(t, 4000)}
	far := s.connect(t, a, false)
	_, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0C"})
	if err == nil || !strings.Contains(err.Error(), "413") {
		t.Errorf("FetchMedia of media over the bound = %v, want the upload's 413", err)
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store, want 0", n)
	}
}

// An engine that does not announce media_refs gets no uploadUrl and answers
// with inline data, as before; the server still takes it.
func TestEngineWithoutMediaRefsStaysInline(t *testing.T) {
	s := newMediaServer(t, 0, 0)
	a := &album{payload: []byte("small clip")}
	far := s.connect(t, a, true)
	m, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0D"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Data, a.payload) || m.Body != nil {
		t.Errorf("FetchMedia = data %q, body %v; want the bytes inline", m.Data, m.Body)
	}
	if f := s.welcomeFeatures(); len(f) != 0 {
		t.Errorf("welcome features %v, want none", f)
	}
	if params := s.commands("FetchMedia"); len(params) != 1 || strings.Contains(string(params[0]), "http") {
		t.Errorf("FetchMedia params = %s, want no uploadUrl", params)
	}
	picture := []byte("\x89PNG inline")
	if err := far.(engine.GroupAdmin).SetGroupPicture(context.Background(), "g1@g.us", engine.Media{Data: picture, MimeType: "image/png"}); err != nil {
		t.Fatal(err)
	}
	if params := s.commands("SetGroupPicture"); len(params) != 1 || !strings.Contains(string(params[0]), `"data"`) {
		t.Errorf("SetGroupPicture params = %s, want the picture's data", params)
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store, want 0", n)
	}
}
