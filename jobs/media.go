package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/viewer"
)

// TypeMediaFetch downloads the attachment of a received message into the media
// URL reserved for it on arrival (inbox.Downloads).
const TypeMediaFetch = "media:fetch"

// QueueMedia holds the downloads of received attachments.
const QueueMedia = "media"

// MediaFetchRetries bounds the runs of a download whose engine is away or still
// fetching: RetryDelay apart (up to a minute), about two hours in all. The last
// failed run records the media as unavailable ("error"); a read of the message's
// media then asks the engine once more.
const MediaFetchRetries = 120

// mediaFetchTimeout bounds one run: a media retry waits for the sender's phone
// (gateway.Config.MediaRetryWait) before the download is made again.
const mediaFetchTimeout = 5 * time.Minute

// mediaFetchPayload is the payload of a TypeMediaFetch task.
type mediaFetchPayload struct {
	MessageID   string `json:"messageId"`
	WorkspaceID string `json:"workspaceId"`
}

// MediaFetchTaskID is the asynq task id of the download of a message's
// attachment: one per message.
func MediaFetchTaskID(messageID string) string { return "media:" + messageID }

// FetchMedia queues the download of a stored message's attachment; it
// implements inbox.MediaQueue.
func (q *Queue) FetchMedia(ctx context.Context, workspaceID, messageID string) (bool, error) {
	payload, _ := json.Marshal(mediaFetchPayload{MessageID: messageID, WorkspaceID: workspaceID})
	return q.enqueueOnce(ctx, QueueMedia, MediaFetchTaskID(messageID), asynq.NewTask(TypeMediaFetch, payload), time.Time{},
		asynq.MaxRetry(MediaFetchRetries), asynq.Timeout(mediaFetchTimeout))
}

// errStillFetching is a run's error while the engine says it is still
// downloading: the task runs again.
var errStillFetching = errors.New("jobs: the engine is still fetching the media")

// FetchMedia runs a TypeMediaFetch task: it asks the engine that received the
// message (its engine_id) for the attachment's bytes, from the reference kept
// with the message, and streams them into the reserved URL. An engine that is
// away or still fetching makes the task run again; media the network no longer
// has (expired, or a media retry the sender's phone did not answer) is
// recorded as unavailable with that reason.
func (h *Handlers) FetchMedia(ctx context.Context, t *asynq.Task) error {
	var p mediaFetchPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	ctx = viewer.WorkspaceContext(ctx, p.WorkspaceID)
	m, err := h.Client.Message.Get(ctx, p.MessageID)
	if ent.IsNotFound(err) {
		return nil // deleted since: nothing to keep
	} else if err != nil {
		return err
	}
	if m.MediaFetch != inbox.FetchDue || m.MediaURL == "" {
		return nil // done by an earlier run
	}
	got, err := h.download(ctx, m)
	if err == nil {
		return h.fill(ctx, m, got)
	}
	reason := unavailableReason(err)
	if reason == "" {
		retried, _ := asynq.GetRetryCount(ctx)
		if most, _ := asynq.GetMaxRetry(ctx); retried < most {
			return err
		}
		reason = "error" // the last run: the media stays unavailable until read again
	}
	if ferr := h.failMedia(ctx, m, reason); ferr != nil {
		return errors.Join(err, ferr)
	}
	if reason == "error" {
		return fmt.Errorf("jobs: media of %s given up: %w", m.ID, err)
	}
	slog.InfoContext(ctx, "received media unavailable", "message", m.ID, "reason", reason, "cause", err)
	return nil
}

// download asks the engine that received m for its attachment.
func (h *Handlers) download(ctx context.Context, m *ent.Message) (engine.Media, error) {
	key, ok := engine.ParseKey(m.WaSerialized)
	if !ok {
		return engine.Media{}, fmt.Errorf("%w: message %s has no network key", asynq.SkipRetry, m.ID)
	}
	eng, err := h.Engines.Find(ctx, m.WorkspaceID, m.EngineID)
	if err != nil {
		return engine.Media{}, err
	}
	f, ok := eng.(engine.MediaFetcher)
	if !ok {
		return engine.Media{}, &engine.MediaUnavailableError{Reason: "error", Message: "the engine cannot download media"}
	}
	got, err := engine.FetchMedia(ctx, f, key, m.MediaRef)
	var why *engine.MediaUnavailableError
	if errors.As(err, &why) && why.Reason == engine.MediaFetching {
		return engine.Media{}, fmt.Errorf("%w: %s", errStillFetching, why.Message)
	}
	return got, err
}

// unavailableReason is the reason media is unavailable for good that a
// download's err says, or "" for an error worth another run.
func unavailableReason(err error) string {
	var why *engine.MediaUnavailableError
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return engine.MediaExpired
	case errors.As(err, &why):
		return why.Reason
	}
	return ""
}

// fill streams the downloaded bytes into m's reserved URL, keeps the engine's
// new reference (a media retry moved the file) and marks the download done.
func (h *Handlers) fill(ctx context.Context, m *ent.Message, got engine.Media) error {
	r, done := got.Reader()
	defer done()
	if _, err := h.Media.Fill(ctx, m.MediaURL, r, got.MimeType); err != nil {
		return fmt.Errorf("jobs: keep media of %s: %w", m.ID, err)
	}
	u := h.Client.Message.Update().Where(message.ID(m.ID), message.MediaURL(m.MediaURL)).ClearMediaFetch()
	if len(got.Ref) > 0 {
		u.SetMediaRef(got.Ref)
	}
	return u.Exec(ctx)
}

// failMedia records that m's attachment cannot be had, for reason: in the
// store (reads of the URL answer it) and as the message's media_fetch (reads
// of the message's media answer it; "error" asks the engine again).
func (h *Handlers) failMedia(ctx context.Context, m *ent.Message, reason string) error {
	if err := h.Media.Fail(ctx, m.MediaURL, reason); err != nil {
		return fmt.Errorf("jobs: record media of %s unavailable: %w", m.ID, err)
	}
	return h.Client.Message.Update().Where(message.ID(m.ID), message.MediaURL(m.MediaURL)).SetMediaFetch(reason).Exec(ctx)
}
