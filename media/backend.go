package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboardhq/switchboard/ent"
)

// A Backend keeps the bytes of stored media under a key; everything else about
// them (token, type, name, size, SHA-256, state) stays in their Media row, in
// the database, whichever backend holds the bytes. Bytes go in and out as
// streams: no backend holds a whole file in memory.
type Backend interface {
	// Name is what a Media row records as the backend holding its bytes ("db", "s3").
	Name() string
	// Put stores what r yields under key; size is its length, or -1 when not
	// known. An error from r is returned (wrapped) and nothing is left under key.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Open reads the size bytes stored under key; the reader is also an
	// io.Seeker (so reads can serve ranges). The caller closes it.
	Open(ctx context.Context, key string, size int64) (io.ReadSeekCloser, error)
	// Delete removes what is stored under keys; a key with nothing stored is no error.
	Delete(ctx context.Context, keys ...string) error
}

// ErrMissing is a backend's error for a key with nothing stored under it.
var ErrMissing = errors.New("media: no bytes stored under the key")

// keyOf is the backend key of the media of token: its SHA-256, so the key
// names the bytes without being the token, the URL's only credential (a
// listing of the bucket or table gives no URL away).
func keyOf(token string) string {
	sum := sha256.Sum256([]byte("switchboard media " + token))
	return hex.EncodeToString(sum[:])
}

// OpenBackend returns the backend rawURL (SWITCHBOARD_MEDIA_URL) names: "" or
// "db:" the database client holds, "s3://bucket/prefix?endpoint=…" an
// S3-compatible bucket (see ParseS3URL), checked and created if missing.
func OpenBackend(ctx context.Context, rawURL string, client *ent.Client) (Backend, error) {
	if err := CheckURL(rawURL); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(rawURL, "s3://") {
		return NewDBBackend(client), nil
	}
	cfg, err := ParseS3URL(rawURL)
	if err != nil {
		return nil, err
	}
	return NewS3Backend(ctx, cfg)
}

// CheckURL reports what is wrong with a SWITCHBOARD_MEDIA_URL, without
// connecting to anything.
func CheckURL(rawURL string) error {
	switch {
	case rawURL == "" || rawURL == "db:":
		return nil
	case strings.HasPrefix(rawURL, "s3://"):
		_, err := ParseS3URL(rawURL)
		return err
	}
	scheme, _, _ := strings.Cut(rawURL, ":")
	return fmt.Errorf("media: SWITCHBOARD_MEDIA_URL: unsupported %q (want db: or s3://bucket/prefix?endpoint=host:port)", scheme)
}
