package media

import (
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
	"github.com/switchboardhq/switchboard/storage"
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

// Save stores what r yields and returns its Object. contentType "" is sniffed
// from the first bytes; a file longer than the store's bound is ErrTooLarge
// and nothing is kept.
func (s *Store) Save(ctx context.Context, r io.Reader, contentType, filename string) (Object, error) {
	limit := s.maxBytes()
	h := sha256.New()
	var buf bytes.Buffer
	n, err := io.Copy(io.MultiWriter(&buf, h), io.LimitReader(r, limit+1))
	if err != nil {
		return Object{}, fmt.Errorf("media: read: %w", err)
	}
	if n > limit {
		return Object{}, ErrTooLarge
	}
	if contentType == "" {
		contentType = http.DetectContentType(buf.Bytes())
	}
	o := Object{Token: switchboard.RandomToken(20), ContentType: contentType, Filename: filename,
		Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	err = storage.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		return tx.Media.Create().SetToken(o.Token).SetContentType(contentType).
			SetFilename(filename).SetSize(n).SetSha256(o.SHA256).SetData(buf.Bytes()).Exec(ctx)
	})
	if err != nil {
		return Object{}, err
	}
	o.URL = s.urlOf(o.Token, filename)
	return o, nil
}

// Open returns the bytes behind a URL this store issued, and their Object; ok
// is false for any other URL, or one whose media is gone. The caller closes
// the reader.
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
	o = Object{URL: s.urlOf(m.Token, m.Filename), Token: m.Token, ContentType: m.ContentType,
		Filename: m.Filename, Size: m.Size, SHA256: m.Sha256}
	return io.NopCloser(bytes.NewReader(m.Data)), o, true, nil
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
