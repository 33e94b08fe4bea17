package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waMmsRetry"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// Received media. The engine hands every received attachment's download keys
// to Switchboard with the message (engine.MediaInfo.Ref, a mediaRef), which
// keeps them with the stored message and gives them back to FetchMediaRef: the
// bytes can be had after a restart, or by the process that took the session
// over. A download goes to a temporary file (whatsmeow's DownloadToFile),
// streamed to the caller and removed once read. When the network's CDN no
// longer holds the file (404/410) the engine asks the sender's phone to upload
// it again (a media retry receipt) and waits up to Config.MediaRetryWait for the
// answer (events.MediaRetry), which names the file's new direct path.

// DefaultMediaRetryWait bounds the wait for a media retry's answer when
// Config.MediaRetryWait is zero.
const DefaultMediaRetryWait = time.Minute

// mediaRef is what the engine keeps of a received attachment to download it
// later: whatsmeow's DownloadableMessage fields, and the media type that
// derives the keys. It implements whatsmeow.DownloadableMessage and
// whatsmeow.MediaTypeable.
type mediaRef struct {
	Type       whatsmeow.MediaType `json:"type"`
	DirectPath string              `json:"directPath"`
	MediaKey   []byte              `json:"mediaKey"`
	EncSHA256  []byte              `json:"fileEncSha256,omitempty"`
	SHA256     []byte              `json:"fileSha256,omitempty"`
	Length     uint64              `json:"fileLength,omitempty"`
}

// GetDirectPath implements whatsmeow.DownloadableMessage.
func (r *mediaRef) GetDirectPath() string { return r.DirectPath }

// GetMediaKey implements whatsmeow.DownloadableMessage.
func (r *mediaRef) GetMediaKey() []byte { return r.MediaKey }

// GetFileSHA256 implements whatsmeow.DownloadableMessage.
func (r *mediaRef) GetFileSHA256() []byte { return r.SHA256 }

// GetFileEncSHA256 implements whatsmeow.DownloadableMessage.
func (r *mediaRef) GetFileEncSHA256() []byte { return r.EncSHA256 }

// GetMediaType implements whatsmeow.MediaTypeable.
func (r *mediaRef) GetMediaType() whatsmeow.MediaType { return r.Type }

// sized is a downloadable message that tells its length.
type sized interface{ GetFileLength() uint64 }

// refOf is the reference of a received attachment d, encoded for
// engine.MediaInfo.Ref; nil when d has no direct path to download from.
func refOf(d whatsmeow.DownloadableMessage) []byte {
	if d == nil || d.GetDirectPath() == "" || len(d.GetMediaKey()) == 0 {
		return nil
	}
	r := mediaRef{Type: whatsmeow.GetMediaType(d), DirectPath: d.GetDirectPath(), MediaKey: d.GetMediaKey(),
		EncSHA256: d.GetFileEncSHA256(), SHA256: d.GetFileSHA256()}
	if s, ok := d.(sized); ok {
		r.Length = s.GetFileLength()
	}
	if r.Type == "" {
		return nil
	}
	b, _ := json.Marshal(r)
	if len(b) > engine.MaxMediaRef {
		return nil
	}
	return b
}

// FetchMediaRef implements engine.MediaRefFetcher: the attachment of the
// message key, downloaded from the reference the engine gave with it, with a
// media retry when the network's copy expired.
func (e *Engine) FetchMediaRef(ctx context.Context, key engine.Key, ref []byte) (engine.Media, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.Media{}, err
	}
	var r mediaRef
	if err := json.Unmarshal(ref, &r); err != nil || r.DirectPath == "" || r.Type == "" {
		return engine.Media{}, &engine.MediaUnavailableError{Reason: "error", Message: "the media reference is not the gateway's"}
	}
	return e.download(ctx, cl, key, &r)
}

// download downloads r to a temporary file and hands it over as the Media's
// Body; a file the CDN no longer holds is asked for again (mediaRetry), and the
// Media then carries the new reference.
func (e *Engine) download(ctx context.Context, cl client, key engine.Key, r *mediaRef) (engine.Media, error) {
	body, n, err := downloadToFile(ctx, cl, r)
	moved := false
	if gone(err) {
		fresh, rerr := e.mediaRetry(ctx, cl, key, r)
		if rerr != nil {
			return engine.Media{}, rerr
		}
		if body, n, err = downloadToFile(ctx, cl, fresh); gone(err) {
			return engine.Media{}, &engine.MediaUnavailableError{Reason: engine.MediaExpired,
				Message: "the file the sender's phone uploaded again is gone too: " + err.Error()}
		}
		r, moved = fresh, true
	}
	if err != nil {
		return engine.Media{}, fmt.Errorf("gateway: download media: %w", err)
	}
	m := engine.Media{Body: body, Size: n}
	if moved {
		m.Ref, _ = json.Marshal(r)
	}
	return m, nil
}

// gone reports whether a download failed because the CDN no longer holds the
// file.
func gone(err error) bool {
	return errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404) || errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith410)
}

// downloadToFile downloads r into a temporary file and returns it, rewound, as
// a reader that removes the file when closed, and its length.
func downloadToFile(ctx context.Context, cl client, r *mediaRef) (io.ReadCloser, int64, error) {
	f, err := os.CreateTemp("", "switchboard-media-*")
	if err != nil {
		return nil, 0, fmt.Errorf("gateway: temporary file: %w", err)
	}
	t := &tempFile{File: f}
	if err := cl.DownloadToFile(ctx, r, f); err != nil {
		_ = t.Close()
		return nil, 0, err
	}
	n, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = t.Close()
		return nil, 0, fmt.Errorf("gateway: rewind temporary file: %w", err)
	}
	return t, n, nil
}

// tempFile is a file removed when it is closed.
type tempFile struct{ *os.File }

// Close closes and removes the file.
func (t *tempFile) Close() error {
	err := t.File.Close()
	if rerr := os.Remove(t.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// mediaRetry asks the sender's phone to upload the attachment of key again and
// returns its new reference; a phone that does not answer within
// MediaRetryWait is MediaAwaitingSender, one that no longer has the file (or
// answers anything but success) MediaExpired.
func (e *Engine) mediaRetry(ctx context.Context, cl client, key engine.Key, r *mediaRef) (*mediaRef, error) {
	info, err := retryInfo(key)
	if err != nil {
		return nil, err
	}
	answer := e.retries.await(key.ID)
	defer e.retries.forget(key.ID, answer)
	if err := cl.SendMediaRetryReceipt(ctx, info, r.MediaKey); err != nil {
		return nil, fmt.Errorf("gateway: media retry receipt: %w", err)
	}
	wait := e.cfg.MediaRetryWait
	if wait <= 0 {
		wait = DefaultMediaRetryWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	var evt *events.MediaRetry
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &engine.MediaUnavailableError{Reason: engine.MediaAwaitingSender,
			Message: fmt.Sprintf("the network's copy expired and the sender's phone did not upload it again within %s", wait)}
	case evt = <-answer:
	}
	notif, err := whatsmeow.DecryptMediaRetryNotification(evt, r.MediaKey)
	if err != nil {
		return nil, &engine.MediaUnavailableError{Reason: engine.MediaExpired, Message: "media retry: " + err.Error()}
	}
	if res := notif.GetResult(); res != waMmsRetry.MediaRetryNotification_SUCCESS || notif.GetDirectPath() == "" {
		return nil, &engine.MediaUnavailableError{Reason: engine.MediaExpired,
			Message: "the sender's phone answered the media retry with " + res.String()}
	}
	fresh := *r
	fresh.DirectPath = notif.GetDirectPath()
	return &fresh, nil
}

// retryInfo is the message info a media retry receipt names for key.
func retryInfo(key engine.Key) (*types.MessageInfo, error) {
	chat, err := parseChat(key.Remote)
	if err != nil {
		return nil, err
	}
	info := &types.MessageInfo{ID: key.ID, MessageSource: types.MessageSource{Chat: chat, IsFromMe: key.FromMe,
		IsGroup: chat.Server == types.GroupServer, Sender: senderOf(key)}}
	return info, nil
}

// mediaRetries routes the answers of media retries (events.MediaRetry) to the
// downloads waiting for them, by message id.
type mediaRetries struct {
	mu      sync.Mutex
	waiting map[string]chan *events.MediaRetry
}

// await registers a wait for the answer about the message id.
func (m *mediaRetries) await(id string) chan *events.MediaRetry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.waiting == nil {
		m.waiting = map[string]chan *events.MediaRetry{}
	}
	ch := make(chan *events.MediaRetry, 1)
	m.waiting[id] = ch
	return ch
}

// forget ends the wait ch about the message id.
func (m *mediaRetries) forget(id string, ch chan *events.MediaRetry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.waiting[id] == ch {
		delete(m.waiting, id)
	}
}

// deliver hands evt to the download waiting for it; an answer nobody waits for
// (its wait ended) is dropped: the next download asks again.
func (m *mediaRetries) deliver(evt *events.MediaRetry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.waiting[evt.MessageID]; ok {
		select {
		case ch <- evt:
		default:
		}
	}
}
