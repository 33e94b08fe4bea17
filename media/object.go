package media

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
)

// DefaultMaxBytes bounds one stored file when Store.MaxBytes is zero: 100 MiB,
// WhatsApp's own limit for media other than documents.
const DefaultMaxBytes = 100 << 20

// Object describes media this store holds.
type Object struct {
	// URL is where the media are served (unguessable: the token is the only
	// credential).
	URL         string
	Token       string
	ContentType string
	Filename    string
	Size        int64
	// SHA256 is the hex SHA-256 of the bytes.
	SHA256 string
}

// ErrTooLarge is Save's error for a file longer than the store's bound.
var ErrTooLarge = switchboard.Errorf(switchboard.EINVALID, "The media file is too large.")

// Save streams what r yields into the store's backend and returns its Object.
// contentType "" is sniffed from the first 512 bytes; a file longer than the
// store's bound is ErrTooLarge and nothing is kept. The row is written first,
// pending, so that bytes a crash leaves half-written are still found (and
// pruned) through it.
func (s *Store) Save(ctx context.Context, r io.Reader, contentType, filename string) (Object, error) {
	br := bufio.NewReaderSize(r, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return Object{}, fmt.Errorf("media: read: %w", err)
	}
	if contentType == "" {
		contentType = http.DetectContentType(head)
	}
	b := s.backend()
	o := Object{Token: switchboard.RandomToken(20), ContentType: contentType, Filename: filename}
	m, err := s.client.Media.Create().SetToken(o.Token).SetContentType(contentType).SetFilename(filename).
		SetState(StatePending).SetBackend(b.Name()).Save(ctx)
	if err != nil {
		return Object{}, err
	}
	if o.Size, o.SHA256, err = s.stream(ctx, b, o.Token, br); err == nil {
		err = m.Update().SetSize(o.Size).SetSha256(o.SHA256).SetState(StateReady).Exec(ctx)
	}
	if err != nil {
		drop := s.client.Media.DeleteOne(m).Exec(context.WithoutCancel(ctx))
		return Object{}, errors.Join(err, b.Delete(context.WithoutCancel(ctx), keyOf(o.Token)), drop)
	}
	o.URL = s.urlOf(o.Token, filename)
	return o, nil
}

// sniffLen is how many bytes the type of a file is sniffed from.
const sniffLen = 512

// stream puts what r yields under the key of token in b, counting and hashing
// it, and bounded by the store's bound (ErrTooLarge, with nothing left in b).
func (s *Store) stream(ctx context.Context, b Backend, token string, r io.Reader) (size int64, sum string, err error) {
	h := sha256.New()
	in := &boundedReader{r: io.TeeReader(r, h), left: s.maxBytes()}
	err = b.Put(ctx, keyOf(token), in, -1)
	switch {
	case in.over:
		return 0, "", ErrTooLarge
	case in.err != nil:
		return 0, "", fmt.Errorf("media: read: %w", in.err)
	case err != nil:
		return 0, "", err
	}
	return in.n, hex.EncodeToString(h.Sum(nil)), nil
}

// boundedReader counts what it reads and fails past left bytes; it records
// its source's error, to tell it from the backend's.
type boundedReader struct {
	r    io.Reader
	left int64
	n    int64
	over bool
	err  error
}

// errBound is a boundedReader's error past its bound.
var errBound = errors.New("media: past the bound")

// Read reads from the source, failing once more than the bound has come.
func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.left {
		b.over = true
		return 0, errBound
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// Open returns the bytes behind a URL this store issued, streamed from where
// they live, and their Object; ok is false for any other URL, or one whose
// media is gone. The caller closes the reader.
func (s *Store) Open(ctx context.Context, rawURL string) (rc io.ReadCloser, o Object, ok bool, err error) {
	token, found := s.tokenOf(rawURL)
	if !found {
		return nil, Object{}, false, nil
	}
	m, err := s.ready(ctx, token)
	if errors.Is(err, errNoMedia) {
		return nil, Object{}, false, nil
	} else if err != nil {
		return nil, Object{}, false, err
	}
	rsc, err := s.bytesOf(ctx, m)
	if errors.Is(err, errNoMedia) {
		return nil, Object{}, false, nil
	} else if err != nil {
		return nil, Object{}, false, err
	}
	o = Object{URL: s.urlOf(m.Token, m.Filename), Token: m.Token, ContentType: m.ContentType,
		Filename: m.Filename, Size: m.Size, SHA256: m.Sha256}
	return rsc, o, true, nil
}

// bytesOf opens the bytes of ready media m where they live: rows from before
// backends hold them in their data column; a backend that has lost them is
// errNoMedia.
func (s *Store) bytesOf(ctx context.Context, m *ent.Media) (io.ReadSeekCloser, error) {
	if m.Backend == "" {
		return nopSeekCloser{bytes.NewReader(m.Data)}, nil
	}
	b, err := s.backendFor(m.Backend)
	if err != nil {
		return nil, err
	}
	rsc, err := b.Open(ctx, keyOf(m.Token), m.Size)
	if errors.Is(err, ErrMissing) {
		return nil, errNoMedia
	}
	return rsc, err
}

// nopSeekCloser is a ReadSeeker with nothing to close.
type nopSeekCloser struct{ io.ReadSeeker }

// Close does nothing.
func (nopSeekCloser) Close() error { return nil }

// backend is where new bytes go: Store.Backend, or the database.
func (s *Store) backend() Backend {
	if s.Backend != nil {
		return s.Backend
	}
	return s.db
}

// backendFor is the backend a row names as holding its bytes: the configured
// one, or the database (always reachable). Bytes in a backend this server is
// no longer configured for cannot be read.
func (s *Store) backendFor(name string) (Backend, error) {
	if b := s.backend(); b.Name() == name {
		return b, nil
	}
	if name == s.db.Name() {
		return s.db, nil
	}
	return nil, switchboard.Errorf(switchboard.EUNAVAILABLE,
		"The media is kept in the %s backend, which this server is not configured for (SWITCHBOARD_MEDIA_URL).", name)
}

// maxBytes is the bound of one stored file.
func (s *Store) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

// urlOf is the public URL of the media of token, named filename.
func (s *Store) urlOf(token, filename string) string {
	u := s.baseURL + "/media/" + token
	if filename != "" {
		u += "/" + urlSafeName(filename)
	}
	return u
}

// tokenOf is the token of a URL this store issued.
func (s *Store) tokenOf(rawURL string) (string, bool) {
	rest, found := strings.CutPrefix(rawURL, s.baseURL+"/media/")
	if !found {
		return "", false
	}
	token, _, _ := strings.Cut(rest, "/")
	return token, true
}
