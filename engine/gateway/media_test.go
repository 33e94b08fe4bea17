package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// readAll reads and closes the bytes of m.
func readAll(t *testing.T, m engine.Media) string {
	t.Helper()
	r, done := m.Reader()
	defer done()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// receivedImage has the engine receive an image stored at path and returns
// the reference it reported with the message.
func receivedImage(t *testing.T, h *harness, id, path string) (engine.Key, []byte) {
	t.Helper()
	h.f.emit(&events.Message{Info: msgInfo(contact, contact, id, false), Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		Mimetype: proto.String("image/jpeg"), DirectPath: proto.String(path), MediaKey: []byte("0123456789abcdef0123456789abcdef"),
		FileSHA256: []byte{1, 2}, FileEncSHA256: []byte{3, 4}, FileLength: proto.Uint64(5)}}})
	for _, ev := range h.sink.take() {
		if ev.Type == engine.EventMessage && ev.Message != nil && ev.Message.Media != nil {
			if len(ev.Message.Media.Ref) == 0 {
				t.Fatal("the received image carries no reference")
			}
			return ev.Message.Key, ev.Message.Media.Ref
		}
	}
	t.Fatal("no incoming image reported")
	return engine.Key{}, nil
}

func TestFetchMediaRefAfterFailOver(t *testing.T) {
	ctx := context.Background()
	first := newHarness(t, true)
	key, ref := receivedImage(t, first, "IMG1", "/v/img1")
	// Another process took the session over: it never saw the message.
	second := newHarness(t, true)
	second.f.cdn = map[string][]byte{"/v/img1": []byte("bytes")}
	if _, err := second.e.FetchMedia(ctx, key); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("without the reference: %v", err)
	}
	m, err := second.e.FetchMediaRef(ctx, key, ref)
	if err != nil {
		t.Fatal(err)
	}
	tmp := m.Body.(*tempFile).Name()
	if got := readAll(t, m); got != "bytes" || m.Size != 5 || m.Ref != nil {
		t.Errorf("media %q size %d ref %s", got, m.Size, m.Ref)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}
	if len(second.f.retryAsks) != 0 {
		t.Errorf("retry asked for media the CDN holds: %v", second.f.retryAsks)
	}
}

func TestMediaRetry(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true, func(c *Config) { c.MediaRetryWait = 100 * time.Millisecond })
	key, ref := receivedImage(t, h, "OLD1", "/v/expired")
	h.f.cdn = map[string][]byte{"/v/fresh": []byte("again")}
	h.f.retryPaths = map[types.MessageID]string{"OLD1": "/v/fresh"}
	m, err := h.e.FetchMediaRef(ctx, key, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, m); got != "again" {
		t.Errorf("media %q", got)
	}
	var moved mediaRef
	if err := json.Unmarshal(m.Ref, &moved); err != nil || moved.DirectPath != "/v/fresh" {
		t.Errorf("new reference %s: %v", m.Ref, err)
	}
	if len(h.f.retryAsks) != 1 || h.f.retryAsks[0] != "OLD1" {
		t.Errorf("retries asked: %v", h.f.retryAsks)
	}

	// A phone that never answers: the media awaits its sender.
	key2, ref2 := receivedImage(t, h, "OLD2", "/v/expired2")
	start := time.Now()
	_, err = h.e.FetchMediaRef(ctx, key2, ref2)
	var why *engine.MediaUnavailableError
	if !errors.As(err, &why) || why.Reason != engine.MediaAwaitingSender {
		t.Fatalf("unanswered retry: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("waited %s for the retry", d)
	}
}
