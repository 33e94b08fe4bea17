package inbox

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/viewer"
)

// Incoming media kept on arrival. Before a batch of events is applied, a media
// URL is reserved (media.Store.Reserve) for every attachment it brings that
// the store does not hold yet, and recorded on the event's row, so that a retry
// reuses it. Applying the event stores the URL on the message with
// media_fetch "due", in the transaction that records the webhook event which
// carries it; once the batch commits, a download task is queued for each
// (Downloads.Queue), and the reconciler queues again any that Redis lost.

// FetchDue is the media_fetch of a message whose attachment is still to be
// downloaded into its media_url.
const FetchDue = "due"

// MediaQueue queues the download of a stored message's attachment.
type MediaQueue interface {
	FetchMedia(ctx context.Context, workspaceID, messageID string) (bool, error)
}

// Downloads is how the inbox keeps the attachments of the messages it stores.
type Downloads struct {
	// Store reserves the URLs the attachments are served from.
	Store *media.Store
	// Queue queues their downloads.
	Queue MediaQueue
	// Off leaves every attachment to be downloaded when it is first read
	// (SWITCHBOARD_MEDIA_DOWNLOAD=none).
	Off bool
	// MaxBytes bounds the attachments downloaded on arrival by the size the
	// network tells (SWITCHBOARD_MEDIA_DOWNLOAD_MAX); zero: the store's bound.
	MaxBytes int64
}

// wants reports whether an attachment of md is downloaded on arrival.
func (d *Downloads) wants(md *engine.MediaInfo) bool {
	return d != nil && !d.Off && md != nil && (d.MaxBytes <= 0 || md.Size <= d.MaxBytes)
}

// fetch is a download to queue once the batch that stored its message commits.
type fetch struct{ workspaceID, messageID string }

// arrivals carries, through the application of one event, the URLs reserved
// for its attachments (by message key) and collects the downloads to queue.
type arrivals struct {
	urls map[string]string
	due  *[]fetch
}

// reserved sets on the message c, of key, the URL reserved for its attachment
// and media_fetch "due", and collects its download; it leaves c alone when no
// URL was reserved.
func (a arrivals) reserved(workspaceID string, c *ent.MessageCreate, key string) {
	u := a.urls[key]
	if u == "" {
		return
	}
	id, ok := c.Mutation().ID()
	if !ok {
		c.SetID(switchboard.NewID("msg"))
		id, _ = c.Mutation().ID()
	}
	c.SetMediaURL(u).SetMediaFetch(FetchDue)
	if a.due != nil {
		*a.due = append(*a.due, fetch{workspaceID: workspaceID, messageID: id})
	}
}

// attachments are the attachments an event brings, by message key.
func attachments(ev engine.Event) map[string]*engine.MediaInfo {
	out := map[string]*engine.MediaInfo{}
	if in := ev.Message; ev.Type == engine.EventMessage && in != nil && in.Media != nil {
		out[in.Key.Serialized()] = in.Media
	}
	if h := ev.History; ev.Type == engine.EventHistory && h != nil {
		for _, m := range h.Messages {
			if m.Media != nil {
				out[m.Key.Serialized()] = m.Media
			}
		}
	}
	return out
}

// reserveMedia reserves, before a batch applies, the URLs of the attachments
// its events bring that are downloaded on arrival and not reserved before, for
// messages the store does not hold, and records them on each event's row.
func (h *Inbox) reserveMedia(ctx context.Context, rows []*ent.InboxEvent, evs []engine.Event, token string) error {
	if h.Media == nil || h.Media.Off {
		return nil
	}
	for i, row := range rows {
		var keys []string
		wanted := attachments(evs[i])
		for k, md := range wanted {
			if _, ok := row.MediaUrls[k]; !ok && h.Media.wants(md) {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		wctx := viewer.WorkspaceContext(ctx, row.WorkspaceID)
		held, err := h.Client.Message.Query().Where(message.WaSerializedIn(keys...)).
			Select(message.FieldWaSerialized).Strings(wctx)
		if err != nil {
			return err
		}
		urls := make(map[string]string, len(row.MediaUrls)+len(keys))
		for k, u := range row.MediaUrls {
			urls[k] = u
		}
		for _, k := range keys {
			if slices.Contains(held, k) {
				urls[k] = "" // stored already: nothing to reserve
				continue
			}
			md := wanted[k]
			o, err := h.Media.Store.Reserve(wctx, md.MimeType, md.Filename)
			if err != nil {
				return fmt.Errorf("inbox: reserve media of %s: %w", k, err)
			}
			urls[k] = o.URL
		}
		err = h.Client.InboxEvent.Update().Where(inboxevent.ID(row.ID), inboxevent.LeaseToken(token)).
			SetMediaUrls(urls).Exec(viewer.SystemContext(ctx))
		if err != nil {
			return fmt.Errorf("inbox: record reserved media: %w", err)
		}
		row.MediaUrls = urls
	}
	return nil
}

// queueFetches queues the downloads of a committed batch. A download that
// cannot be queued now is queued by the reconciler (the message says it is
// due), so the failure is logged, not returned.
func (h *Inbox) queueFetches(ctx context.Context, due []fetch) {
	if h.Media == nil || h.Media.Queue == nil {
		return
	}
	for _, f := range due {
		if _, err := h.Media.Queue.FetchMedia(ctx, f.workspaceID, f.messageID); err != nil {
			slog.Warn("inbox: media download not queued; the reconciler queues it", "message", f.messageID, "err", err)
		}
	}
}
