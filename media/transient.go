package media

import (
	"context"
	"errors"
	"io"

	"github.com/switchboardhq/switchboard/ent/media"
)

// Transient media: bytes an engine uploads to a reserved URL (the engine
// protocol's upload slots) or pictures handed to an engine by URL, read or
// fetched once and then removed.

// MaxSize is the bound of one stored file (Store.MaxBytes, or DefaultMaxBytes).
func (s *Store) MaxSize() int64 { return s.maxBytes() }

// OpenFilled is Open without the wait: the bytes behind a URL this store
// issued if they are stored now. Media still pending (reserved and never
// filled) or gone are ENOTFOUND. The caller closes the reader.
func (s *Store) OpenFilled(ctx context.Context, rawURL string) (io.ReadCloser, Object, error) {
	m, err := s.reserved(ctx, rawURL)
	if err != nil {
		return nil, Object{}, err
	}
	if m.State != StateReady {
		return nil, Object{}, errNoMedia
	}
	rsc, err := s.bytesOf(ctx, m)
	if err != nil {
		return nil, Object{}, err
	}
	return rsc, Object{URL: s.urlOf(m.Token, m.Filename), Token: m.Token, ContentType: m.ContentType,
		Filename: m.Filename, Size: m.Size, SHA256: m.Sha256}, nil
}

// Remove deletes the media behind a URL this store issued, its bytes and then
// its row; media already gone are no error.
func (s *Store) Remove(ctx context.Context, rawURL string) error {
	m, err := s.reserved(ctx, rawURL)
	if errors.Is(err, errNoMedia) {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.dropBytes(ctx, m); err != nil {
		return err
	}
	_, err = s.client.Media.Delete().Where(media.ID(m.ID)).Exec(ctx)
	return err
}
