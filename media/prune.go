package media

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/media"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/viewer"
)

// prunePage is how many media rows (or waiting messages) one read of Prune takes.
const prunePage = 500

// Prune deletes the media stored before cutoff, their bytes (in whichever
// backend holds them) and then their rows, except media that a message still
// waiting to be sent (pending or sending) points at, and returns how many it
// deleted. It pages through both with a cursor. Media kept by a backend this
// server is not configured for are left until it is. The periodic prune task
// calls it with now minus the configured retention
// (SWITCHBOARD_MEDIA_RETENTION), so uploads are not public forever.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	ctx = viewer.SystemContext(ctx)
	// The waiting messages may be many (100,000 scheduled: 130-190 ms a read), and
	// most passes find no media expired: they are read only when some has.
	expired, err := s.client.Media.Query().Where(media.CreatedAtLT(cutoff)).Exist(ctx)
	if err != nil || !expired {
		return 0, err
	}
	keep, err := s.waitingTokens(ctx)
	if err != nil {
		return 0, err
	}
	total, after := 0, 0
	for {
		page, err := s.client.Media.Query().Where(media.CreatedAtLT(cutoff), media.IDGT(after)).
			Order(media.ByID()).Limit(prunePage).Select(media.FieldToken, media.FieldBackend).All(ctx)
		if err != nil || len(page) == 0 {
			return total, err
		}
		after = page[len(page)-1].ID
		n, err := s.prunePage(ctx, page, keep)
		total += n
		if err != nil {
			return total, err
		}
	}
}

// prunePage deletes the bytes, then the rows, of the media of page that no
// waiting message needs.
func (s *Store) prunePage(ctx context.Context, page []*ent.Media, keep map[string]bool) (int, error) {
	var ids []int
	keys := map[string][]string{}
	for _, m := range page {
		if keep[m.Token] {
			continue
		}
		if m.Backend != "" {
			if _, err := s.backendFor(m.Backend); err != nil {
				continue
			}
			keys[m.Backend] = append(keys[m.Backend], keyOf(m.Token))
		}
		ids = append(ids, m.ID)
	}
	for name, ks := range keys {
		b, _ := s.backendFor(name)
		if err := b.Delete(ctx, ks...); err != nil {
			return 0, fmt.Errorf("media: prune bytes: %w", err)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return s.client.Media.Delete().Where(media.IDIn(ids...)).Exec(ctx)
}

// waitingTokens are the tokens of the media that messages waiting to be sent
// point at, read a page at a time.
func (s *Store) waitingTokens(ctx context.Context) (map[string]bool, error) {
	keep := map[string]bool{}
	after := ""
	for {
		page, err := s.client.Message.Query().
			Where(message.Queued(true), messaging.StatusIn(messaging.StatusPending, messaging.StatusSending),
				message.MediaURLContains("/media/"), message.IDGT(after)).
			Order(message.ByID()).Limit(prunePage).Select(message.FieldID, message.FieldMediaURL).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("media: pending references: %w", err)
		}
		for _, m := range page {
			_, rest, _ := strings.Cut(m.MediaURL, "/media/")
			token, _, _ := strings.Cut(rest, "/")
			keep[token] = true
		}
		if len(page) < prunePage {
			return keep, nil
		}
		after = page[len(page)-1].ID
	}
}
