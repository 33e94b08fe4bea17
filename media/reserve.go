package media

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/media"
)

// States of stored media.
const (
	// StateReady: the bytes are stored.
	StateReady = "ready"
	// StatePending: the URL is issued, the bytes are being fetched (Reserve).
	StatePending = "pending"
	// StateUnavailable: the bytes could not be had; the reason says why (Fail).
	StateUnavailable = "unavailable"
)

// DefaultFillWait is how long a read of pending media waits for its bytes
// when Store.FillWait is zero.
const DefaultFillWait = 20 * time.Second

// fillPoll is the pace at which a waiting read looks at the media's state.
const fillPoll = 250 * time.Millisecond

// Reserve issues the URL of media whose bytes are still to come (a received
// message's attachment, downloaded after it was stored), so that the URL can be
// handed out at once. Fill stores the bytes, Fail records why there are none; a
// read in between waits up to FillWait.
func (s *Store) Reserve(ctx context.Context, contentType, filename string) (Object, error) {
	o := Object{Token: switchboard.RandomToken(20), ContentType: contentType, Filename: filename}
	err := s.client.Media.Create().SetToken(o.Token).SetContentType(contentType).
		SetFilename(filename).SetState(StatePending).Exec(ctx)
	if err != nil {
		return Object{}, err
	}
	o.URL = s.urlOf(o.Token, filename)
	return o, nil
}

// Fill streams what r yields into the store's backend as the bytes of the
// media reserved under rawURL (contentType "" keeps the reserved type) and
// returns its Object. Media not reserved here, or gone, are ENOTFOUND; a file
// past the store's bound is ErrTooLarge and leaves the media pending (the
// caller records why with Fail). Bytes an earlier Fill stored are replaced.
func (s *Store) Fill(ctx context.Context, rawURL string, r io.Reader, contentType string) (Object, error) {
	m, err := s.reserved(ctx, rawURL)
	if err != nil {
		return Object{}, err
	}
	if m.State == StateReady {
		if err := s.dropBytes(ctx, m); err != nil {
			return Object{}, err
		}
	}
	b := s.backend()
	size, sum, err := s.stream(ctx, b, m.Token, r)
	if err != nil {
		return Object{}, err
	}
	if contentType == "" {
		contentType = m.ContentType
	}
	err = m.Update().SetSize(size).SetSha256(sum).SetBackend(b.Name()).ClearData().
		SetContentType(contentType).SetState(StateReady).ClearReason().Exec(ctx)
	if err != nil {
		return Object{}, errors.Join(err, b.Delete(context.WithoutCancel(ctx), keyOf(m.Token)))
	}
	return Object{URL: s.urlOf(m.Token, m.Filename), Token: m.Token, ContentType: contentType,
		Filename: m.Filename, Size: size, SHA256: sum}, nil
}

// dropBytes deletes the stored bytes of m (before a Fill replaces them).
func (s *Store) dropBytes(ctx context.Context, m *ent.Media) error {
	if m.Backend == "" {
		return nil
	}
	b, err := s.backendFor(m.Backend)
	if err != nil {
		return err
	}
	return b.Delete(ctx, keyOf(m.Token))
}

// Fail records that the media reserved under rawURL cannot be had, for reason
// (engine.MediaExpired, engine.MediaAwaitingSender, "error"). Reads answer it
// at once instead of waiting.
func (s *Store) Fail(ctx context.Context, rawURL, reason string) error {
	m, err := s.reserved(ctx, rawURL)
	if err != nil {
		return err
	}
	return m.Update().SetState(StateUnavailable).SetReason(reason).Exec(ctx)
}

// reserved is the media row behind a URL this store issued.
func (s *Store) reserved(ctx context.Context, rawURL string) (*ent.Media, error) {
	token, ok := s.tokenOf(rawURL)
	if !ok {
		return nil, errNoMedia
	}
	m, err := s.client.Media.Query().Where(media.Token(token)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNoMedia
	}
	return m, err
}

// awaitFilled is m once it is no longer pending, or after FillWait: the read
// of pending media waits for its download.
func (s *Store) awaitFilled(ctx context.Context, m *ent.Media) (*ent.Media, error) {
	wait := s.FillWait
	if wait <= 0 {
		wait = DefaultFillWait
	}
	deadline := time.Now().Add(wait)
	t := time.NewTicker(fillPoll)
	defer t.Stop()
	for m.State == StatePending && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		var err error
		if m, err = s.client.Media.Get(ctx, m.ID); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// unavailable is the error of a read of media m that has no bytes.
func unavailable(m *ent.Media) error {
	if m.State == StatePending {
		e := switchboard.Errorf(switchboard.EUNAVAILABLE,
			"The media is still being fetched from the phone; try again shortly.")
		e.RetryAfter = 5 * time.Second
		return e
	}
	return switchboard.Errorf(switchboard.ENOTFOUND,
		"The media could not be fetched from the network (%s).", m.Reason)
}
