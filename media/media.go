// Package media stores attachments sent as bytes (base64, data: URL or multipart)
// and serves them from unguessable URLs, so that engines only ever get a URL.
package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/media"
	"github.com/switchboardhq/switchboard/viewer"
)

// Store keeps media, their metadata in the database and their bytes in a
// Backend, and builds their public URLs.
type Store struct {
	client  *ent.Client
	db      *DBBackend
	baseURL string
	// Backend holds the bytes of new media (the database when nil); media kept
	// by the database stay readable whatever it is.
	Backend Backend
	// MaxBytes bounds one file Save stores (DefaultMaxBytes when zero).
	MaxBytes int64
	// FillWait bounds how long a read of reserved media waits for its bytes
	// (DefaultFillWait when zero).
	FillWait time.Duration
}

// NewStore returns a Store whose URLs start with baseURL (the server's public URL).
func NewStore(client *ent.Client, baseURL string) *Store {
	return &Store{client: client, db: NewDBBackend(client), baseURL: strings.TrimRight(baseURL, "/")}
}

// Put stores data through tx and returns its public URL. The database
// backend writes the bytes in tx; another backend's are deleted if tx rolls back.
func (s *Store) Put(ctx context.Context, tx *ent.Tx, data []byte, contentType, filename string) (string, error) {
	token := switchboard.RandomToken(20)
	if contentType == "" {
		contentType = http.DetectContentType(data)
	}
	b := s.backend()
	if err := b.Put(ent.NewTxContext(ctx, tx), keyOf(token), bytes.NewReader(data), int64(len(data))); err != nil {
		return "", err
	}
	if b != Backend(s.db) {
		tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
			return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
				return errors.Join(next.Rollback(ctx, tx), b.Delete(context.WithoutCancel(ctx), keyOf(token)))
			})
		})
	}
	sum := sha256.Sum256(data)
	err := tx.Media.Create().SetToken(token).SetContentType(contentType).SetFilename(filename).
		SetSize(int64(len(data))).SetSha256(hex.EncodeToString(sum[:])).SetBackend(b.Name()).Exec(ctx)
	if err != nil {
		return "", err
	}
	return s.urlOf(token, filename), nil
}

// ServeMedia serves GET and HEAD /media/{token}[/{name}]; the token is the only
// credential. The bytes are someone's upload served from the API's origin, so they
// are never given a chance to run there: nosniff, a sandbox CSP, and a download
// (Content-Disposition: attachment) unless the type is an image, audio or video type
// a browser only ever displays (InlineSafe). A missing token is ENOTFOUND.
func (s *Store) ServeMedia(w http.ResponseWriter, r *http.Request) error {
	rest := strings.TrimPrefix(r.URL.Path, "/media/")
	token, _, _ := strings.Cut(rest, "/")
	if len(token) > 64 || !switchboard.IsToken(token) {
		return errNoMedia
	}
	m, err := s.ready(viewer.SystemContext(r.Context()), token)
	if err != nil {
		return err
	}
	rsc, err := s.bytesOf(r.Context(), m)
	if err != nil {
		return err
	}
	defer rsc.Close()
	SafeHeaders(w.Header(), m.ContentType, m.Filename)
	// ServeContent streams the bytes (Content-Length from the row's size, by
	// seeking to the end) and answers HEAD, Range and If-Modified-Since.
	http.ServeContent(w, r, "", m.CreatedAt, rsc)
	return nil
}

// SafeHeaders sets the headers under which stored bytes of contentType are served
// from the API's origin: nosniff, a sandbox CSP, private caching, and a download
// (Content-Disposition: attachment) unless the type is InlineSafe. filename, if
// any, is offered as the file's name.
func SafeHeaders(h http.Header, contentType, filename string) {
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "private, max-age=86400")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	disposition := "attachment"
	if InlineSafe(contentType) {
		disposition = "inline"
	}
	if filename != "" {
		disposition += `; filename="` + urlSafeName(filename) + `"`
	}
	h.Set("Content-Disposition", disposition)
}

var errNoMedia = switchboard.Errorf(switchboard.ENOTFOUND, "No such media.")

// inlineSafe are the media types a browser displays without running anything.
// SVG (an image that carries scripts) is not among them.
var inlineSafe = []string{
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/heic", "image/avif",
	"audio/mpeg", "audio/ogg", "audio/opus", "audio/mp4", "audio/aac", "audio/wav", "audio/webm", "audio/amr",
	"video/mp4", "video/webm", "video/ogg", "video/3gpp", "video/quicktime",
}

// InlineSafe reports whether media of contentType may be shown inline.
func InlineSafe(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && slices.Contains(inlineSafe, mt)
}

// DecodeBase64 decodes raw base64 (standard or URL alphabet, padded or not) or a
// data: URL, returning the bytes and the content type a data: URL declares.
func DecodeBase64(s string) ([]byte, string, error) {
	var contentType string
	if strings.HasPrefix(s, "data:") {
		meta, payload, ok := strings.Cut(s[len("data:"):], ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, "", errors.New("must be a base64 data: URL")
		}
		contentType = strings.TrimSuffix(meta, ";base64")
		s = payload
	}
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) == 0 {
				return nil, "", errors.New("must not be empty")
			}
			return b, contentType, nil
		}
	}
	return nil, "", errors.New("must be valid base64")
}

// DetectKind guesses the media kind from a content type and a file name.
func DetectKind(contentType, name string) string {
	ct := strings.ToLower(contentType)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case ct == "image/gif" || ext == ".gif":
		return "gif"
	case ct == "image/webp" || ext == ".webp":
		return "sticker"
	case strings.HasPrefix(ct, "image/") || oneOf(ext, ".jpg", ".jpeg", ".png", ".heic", ".bmp"):
		return "image"
	case strings.HasPrefix(ct, "video/") || oneOf(ext, ".mp4", ".mov", ".3gp", ".mkv", ".webm"):
		return "video"
	case strings.Contains(ct, "ogg") || strings.Contains(ct, "opus") || oneOf(ext, ".ogg", ".opus"):
		return "voice"
	case strings.HasPrefix(ct, "audio/") || oneOf(ext, ".mp3", ".m4a", ".aac", ".wav", ".amr"):
		return "audio"
	}
	return "document"
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

func urlSafeName(name string) string {
	var b strings.Builder
	for _, r := range path.Base(name) {
		if r < 0x80 && (r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Issued reports whether rawURL is of this store's form (whether or not its
// media is still stored).
func (s *Store) Issued(rawURL string) bool {
	return strings.HasPrefix(rawURL, s.baseURL+"/media/")
}

// Info returns the type and file name of the media behind a URL this store
// issued, without its bytes (ok false for any other URL, or one whose media is
// gone).
func (s *Store) Info(ctx context.Context, rawURL string) (contentType, filename string, ok bool, err error) {
	token, found := s.tokenOf(rawURL)
	if !found {
		return "", "", false, nil
	}
	m, err := s.client.Media.Query().Where(media.Token(token)).
		Select(media.FieldContentType, media.FieldFilename).Only(ctx)
	if ent.IsNotFound(err) {
		return "", "", false, nil
	} else if err != nil {
		return "", "", false, err
	}
	return m.ContentType, m.Filename, true, nil
}

// ready is the media of token with its bytes: pending media are waited for
// (FillWait), and media without bytes are an error saying why.
func (s *Store) ready(ctx context.Context, token string) (*ent.Media, error) {
	m, err := s.client.Media.Query().Where(media.Token(token)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNoMedia
	} else if err != nil {
		return nil, err
	}
	if m.State == StatePending {
		if m, err = s.awaitFilled(ctx, m); err != nil {
			return nil, err
		}
	}
	if m.State != StateReady {
		return nil, unavailable(m)
	}
	return m, nil
}
