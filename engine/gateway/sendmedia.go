package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/mediaproc"
)

// Bounds of an attachment the gateway sends, by default: WhatsApp's own limits
// (100 MB for media, 2 GB for documents). Attachments are spooled to a
// temporary file, never held in memory.
const (
	DefaultMaxMediaBytes    = 100 << 20
	DefaultMaxDocumentBytes = 2 << 30
)

// mediaTypes is the upload type of each media kind WhatsApp sends as such;
// any other kind goes out as a document.
var mediaTypes = map[string]whatsmeow.MediaType{"image": whatsmeow.MediaImage, "sticker": whatsmeow.MediaImage,
	"video": whatsmeow.MediaVideo, "gif": whatsmeow.MediaVideo, "ptv": whatsmeow.MediaVideo,
	"audio": whatsmeow.MediaAudio, "voice": whatsmeow.MediaAudio}

// spooled is an attachment copied to a temporary file.
type spooled struct {
	path, contentType, name string
}

func (s *spooled) remove() { _ = os.Remove(s.path) }

// spool copies the attachment behind a media URL to a temporary file, at most
// limit bytes: from Switchboard's media store when it issued the URL, else over
// HTTP through netguard.
func (e *Engine) spool(ctx context.Context, rawURL string, limit int64) (*spooled, error) {
	if e.cfg.Media != nil {
		rc, o, ok, err := e.cfg.Media.Open(ctx, rawURL)
		if err != nil {
			return nil, fmt.Errorf("gateway: media store: %w", err)
		}
		if ok {
			defer rc.Close()
			if o.Size > limit {
				return nil, tooLarge(limit)
			}
			return spoolFrom(rc, limit, o.ContentType, o.Filename)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: bad media URL: %v", engine.ErrRejected, err)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway: fetch media: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, fmt.Errorf("gateway: fetch media: HTTP %d", resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: media URL answered HTTP %d", engine.ErrRejected, resp.StatusCode)
	case resp.ContentLength > limit:
		return nil, tooLarge(limit)
	}
	return spoolFrom(resp.Body, limit, resp.Header.Get("Content-Type"), path.Base(req.URL.Path))
}

// spoolFrom copies r to a new temporary file; contentType "" is sniffed from
// the first bytes.
func spoolFrom(r io.Reader, limit int64, contentType, name string) (*spooled, error) {
	f, err := os.CreateTemp("", "switchboard-send-*")
	if err != nil {
		return nil, fmt.Errorf("gateway: spool media: %w", err)
	}
	s := &spooled{path: f.Name(), contentType: contentType, name: name}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = tooLarge(limit)
	} else if err != nil {
		err = fmt.Errorf("gateway: fetch media: %w", err)
	}
	if err == nil && s.contentType == "" {
		head := make([]byte, 512)
		k, _ := f.ReadAt(head, 0)
		s.contentType = http.DetectContentType(head[:k])
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gateway: spool media: %w", cerr)
	}
	if err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: media larger than %d bytes", engine.ErrRejected, limit)
}

// buildMedia fetches an attachment to a temporary file, prepares it (see
// mediaproc: dimensions, duration, thumbnail, waveform; a voice note converted
// to Ogg/Opus, a GIF to MP4), uploads it (encrypted, streamed, to WhatsApp's
// media servers) and wraps it.
func (e *Engine) buildMedia(ctx context.Context, cl client, m engine.Outgoing, caption string, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	kind, limit := m.MediaKind, e.cfg.MaxMediaBytes
	if _, ok := mediaTypes[kind]; !ok {
		kind, limit = "document", e.cfg.MaxDocumentBytes
	}
	sp, err := e.spool(ctx, m.MediaURL, limit)
	if err != nil {
		return nil, err
	}
	defer sp.remove()
	ct := sp.contentType
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		ct = mt
	}
	prep, err := e.proc.Prepare(ctx, kind, sp.path, ct)
	if errors.Is(err, mediaproc.ErrNoFFmpeg) || errors.Is(err, mediaproc.ErrInput) {
		return nil, fmt.Errorf("%w: %v", engine.ErrRejected, err)
	} else if err != nil {
		return nil, fmt.Errorf("gateway: prepare media: %w", err)
	}
	defer prep.Close()
	if len(prep.Missing) > 0 {
		e.log.Info("gateway: media sent without some of its details", "kind", kind, "missing", strings.Join(prep.Missing, "; "))
	}
	up, err := upload(ctx, cl, prep.Path, mediaTypes[prep.Kind])
	if err != nil {
		return nil, err
	}
	name := sp.name
	if m.MediaFilename != "" {
		name = m.MediaFilename
	}
	return mediaMessage(prep, up, caption, name, ci), nil
}

// upload encrypts and uploads the file at p, with the file itself as
// whatsmeow's scratch space (the plaintext is overwritten: it is not needed
// after).
func upload(ctx context.Context, cl client, p string, mt whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	if mt == "" {
		mt = whatsmeow.MediaDocument
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return whatsmeow.UploadResponse{}, fmt.Errorf("gateway: upload media: %w", err)
	}
	defer f.Close()
	up, err := cl.UploadReader(ctx, f, f, mt)
	if err != nil {
		return whatsmeow.UploadResponse{}, fmt.Errorf("gateway: upload media: %w", err)
	}
	return up, nil
}

// mediaMessage is the message of an uploaded attachment of prep.Kind.
func mediaMessage(prep *mediaproc.Prepared, up whatsmeow.UploadResponse, caption, name string, ci *waE2E.ContextInfo) *waE2E.Message {
	var capt *string
	if caption != "" {
		capt = proto.String(caption)
	}
	ct, thumb := proto.String(prep.ContentType), prep.Thumbnail
	w, h, secs := dim(prep.Width), dim(prep.Height), dim(prep.Seconds)
	url, dp, length := proto.String(up.URL), proto.String(up.DirectPath), proto.Uint64(up.FileLength)
	switch prep.Kind {
	case "image":
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: capt, Mimetype: ct, Width: w, Height: h, JPEGThumbnail: thumb,
			URL: url, DirectPath: dp, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: ci}}
	case "sticker":
		return &waE2E.Message{StickerMessage: &waE2E.StickerMessage{Mimetype: ct, Width: w, Height: h,
			URL: url, DirectPath: dp, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: ci}}
	case "video", "gif", "ptv":
		v := &waE2E.VideoMessage{Caption: capt, Mimetype: ct, Width: w, Height: h, Seconds: secs, JPEGThumbnail: thumb,
			GifPlayback: proto.Bool(prep.Kind == "gif"),
			URL:         url, DirectPath: dp, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: ci}
		if prep.Kind == "ptv" {
			v.Caption = nil // a video note has none
			return &waE2E.Message{PtvMessage: v}
		}
		return &waE2E.Message{VideoMessage: v}
	case "audio", "voice":
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{Mimetype: ct, PTT: proto.Bool(prep.Kind == "voice"), Seconds: secs, Waveform: prep.Waveform,
			URL: url, DirectPath: dp, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: ci}}
	}
	if name == "" || name == "." || name == "/" {
		name = "file"
	}
	return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: capt, Mimetype: ct, FileName: proto.String(name), Title: proto.String(name),
		URL: url, DirectPath: dp, MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: ci}}
}

// dim is a proto uint32 of a known dimension or duration, nil when unknown.
func dim(n int) *uint32 {
	if n <= 0 {
		return nil
	}
	return proto.Uint32(uint32(n))
}

// CheckMedia implements engine.MediaChecker: without ffmpeg, a voice note of a
// type other than Ogg/Opus cannot be made (the send would fail with the same
// reason).
func (e *Engine) CheckMedia(kind, contentType string) error {
	ct := strings.ToLower(contentType)
	if kind != "voice" || ct == "" || e.proc.Available() || strings.Contains(ct, "ogg") || strings.Contains(ct, "opus") {
		return nil
	}
	return fmt.Errorf("a voice note of type %s must be converted to Ogg/Opus: %w", contentType, mediaproc.ErrNoFFmpeg)
}
