package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/musicclip"
	"github.com/switchboardhq/switchboard/ent/musicupload"
	"github.com/switchboardhq/switchboard/music"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// TypeMusic is the task that generates the clips of one song generation.
const TypeMusic = "music:generate"

// QueueMusic holds music generations, apart so that long renders never hold up
// messages or webhooks.
const QueueMusic = "music"

// Bounds of a music generation.
const (
	// MusicTimeout bounds one run of a generation task.
	MusicTimeout = 15 * time.Minute
	// MusicStaleAfter is how long a clip may go unchanged in a non-final status
	// before the reconciler takes its task for lost; a run touches its clips on
	// every poll.
	MusicStaleAfter = 2 * time.Minute
	// MusicGiveUp is how old a clip may grow without finishing before it ends in error.
	MusicGiveUp = 2 * time.Hour
	// DefaultMusicPollEvery is how often a run asks the provider about clips that
	// are not finished.
	DefaultMusicPollEvery = 3 * time.Second
)

// musicPayload is the payload of a TypeMusic task.
type musicPayload struct {
	JobID       string `json:"jobId"`
	WorkspaceID string `json:"workspaceId"`
}

// MusicTaskID is the asynq task id of a song generation: one per generation.
func MusicTaskID(jobID string) string { return "music:" + jobID }

// GenerateMusic queues the generation jobID unless it is queued already.
func (q *Queue) GenerateMusic(ctx context.Context, workspaceID, jobID string) (bool, error) {
	payload, _ := json.Marshal(musicPayload{JobID: jobID, WorkspaceID: workspaceID})
	return q.enqueueOnce(ctx, QueueMusic, MusicTaskID(jobID), asynq.NewTask(TypeMusic, payload), time.Time{},
		asynq.MaxRetry(20), asynq.Timeout(MusicTimeout))
}

// Music is what the handlers need to generate songs.
type Music struct {
	Provider music.Provider
	Files    *music.Files
	// PollEvery is DefaultMusicPollEvery when zero.
	PollEvery time.Duration
}

// GenerateMusic runs the generation of a task: it starts the request at the
// provider once (the handles are stored on the clips), then asks about every
// clip that is not final until all are, publishing finished audio and covers.
// After a crash the next run goes on from the stored handles.
func (h *Handlers) GenerateMusic(ctx context.Context, t *asynq.Task) error {
	var p musicPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	if h.Music == nil || h.Music.Provider == nil || h.Music.Files == nil {
		return fmt.Errorf("%w: no music provider configured", asynq.SkipRetry)
	}
	ctx = viewer.WorkspaceContext(ctx, p.WorkspaceID)
	clips, err := h.Client.MusicClip.Query().Where(musicclip.JobID(p.JobID)).Order(ent.Asc(musicclip.FieldVariant)).All(ctx)
	if err != nil || len(clips) == 0 {
		return err
	}
	req, err := h.musicRequest(ctx, clips[0])
	if err != nil {
		return err
	}
	if clips[0].Handle == "" {
		if err := h.startMusic(ctx, req, clips); err != nil {
			return err
		}
	}
	every := h.Music.PollEvery
	if every <= 0 {
		every = DefaultMusicPollEvery
	}
	for {
		open := 0
		for _, c := range clips {
			if music.Final(c.Status) {
				continue
			}
			if err := h.pollClip(ctx, req, c); err != nil {
				return err
			}
			if !music.Final(c.Status) {
				open++
			}
		}
		if open == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

// musicRequest is the stored request of a clip, with the path of its reference
// recording.
func (h *Handlers) musicRequest(ctx context.Context, c *ent.MusicClip) (music.Request, error) {
	var req music.Request
	if err := json.Unmarshal(c.Request, &req); err != nil {
		return req, fmt.Errorf("%w: bad stored request: %v", asynq.SkipRetry, err)
	}
	if c.UploadID != "" {
		u, err := h.Client.MusicUpload.Query().Where(musicupload.ID(c.UploadID)).Only(ctx)
		if err != nil {
			return req, err
		}
		req.Reference = h.Music.Files.UploadPath(u.Token)
	}
	return req, nil
}

// startMusic submits req and stores a handle on each clip (queued).
func (h *Handlers) startMusic(ctx context.Context, req music.Request, clips []*ent.MusicClip) error {
	handles, err := h.Music.Provider.Start(ctx, req)
	if errors.Is(err, music.ErrRejected) {
		for _, c := range clips {
			if err := h.failClip(ctx, c, "rejected", err); err != nil {
				return err
			}
		}
		return nil
	} else if err != nil {
		return err
	}
	if len(handles) < len(clips) {
		return fmt.Errorf("%w: provider answered %d handles for %d clips", asynq.SkipRetry, len(handles), len(clips))
	}
	// All handles or none: a run never finds one clip started and the other not.
	err = storage.WithTx(ctx, h.Client, func(tx *ent.Tx) error {
		for i, c := range clips {
			if err := tx.MusicClip.UpdateOneID(c.ID).SetHandle(handles[i]).SetStatus(music.StatusQueued).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range clips {
		c.Handle, c.Status = handles[i], music.StatusQueued
	}
	return nil
}

// pollClip asks the provider about c and records what it says.
func (h *Handlers) pollClip(ctx context.Context, req music.Request, c *ent.MusicClip) error {
	if c.Status == music.StatusSubmitted || c.Status == music.StatusQueued {
		if err := c.Update().SetStatus(music.StatusRunning).Exec(ctx); err != nil {
			return err
		}
		c.Status = music.StatusRunning
	}
	song, err := h.Music.Provider.Fetch(ctx, req, c.Handle)
	if errors.Is(err, music.ErrRejected) {
		return h.failClip(ctx, c, "rejected", err)
	} else if err != nil {
		return err
	}
	up := c.Update().SetStatus(song.Status)
	if song.Title != "" {
		up.SetTitle(song.Title)
	}
	if song.Model != "" {
		up.SetModel(song.Model)
	}
	switch song.Status {
	case music.StatusComplete:
		audio, err := h.Music.Files.Publish(song.Audio, ".mp3")
		if err != nil {
			return err
		}
		up.SetAudioURL(audio).SetDurationSec(song.DurationSec)
		if len(song.Image) > 0 {
			ext := ".png"
			if !bytes.HasPrefix(song.Image, []byte("\x89PNG")) {
				ext = ".jpg"
			}
			image, err := h.Music.Files.Publish(song.Image, ext)
			if err != nil {
				return err
			}
			up.SetImageURL(image)
		}
	case music.StatusError:
		up.SetErrorType(song.ErrorType).SetErrorMessage(song.ErrorMessage)
	}
	saved, err := up.Save(ctx) // also touches updated_at: the run is alive
	if err != nil {
		return err
	}
	*c = *saved
	return nil
}

// failClip ends c in error.
func (h *Handlers) failClip(ctx context.Context, c *ent.MusicClip, kind string, cause error) error {
	slog.Warn("music clip failed", "clip", c.ID, "err", cause)
	saved, err := c.Update().SetStatus(music.StatusError).SetErrorType(kind).
		SetErrorMessage("The music provider refused the request.").Save(ctx)
	if err == nil {
		*c = *saved
	}
	return err
}

// ReconcileMusic queues again, as of now, the generation of every clip left in a
// non-final status unchanged for MusicStaleAfter (its task was lost with Redis or
// its worker died), and ends in error the clips older than MusicGiveUp. It returns
// how many generations it queued.
func (h *Handlers) ReconcileMusic(ctx context.Context, now time.Time) (int, error) {
	ctx = viewer.SystemContext(ctx)
	nonFinal := musicclip.StatusNotIn(music.StatusComplete, music.StatusError)
	_, err := h.Client.MusicClip.Update().Where(nonFinal, musicclip.CreatedAtLT(now.Add(-MusicGiveUp))).
		SetStatus(music.StatusError).SetErrorType("timeout").
		SetErrorMessage("The clip did not finish in time.").Save(ctx)
	if err != nil {
		return 0, err
	}
	stuck, err := h.Client.MusicClip.Query().Where(nonFinal, musicclip.UpdatedAtLT(now.Add(-MusicStaleAfter))).
		Limit(reconcileBatch).All(ctx)
	if err != nil {
		return 0, err
	}
	queued, seen := 0, map[string]bool{}
	for _, c := range stuck {
		if seen[c.JobID] {
			continue
		}
		seen[c.JobID] = true
		added, err := h.Queue.GenerateMusic(ctx, c.WorkspaceID, c.JobID)
		if err != nil {
			slog.Error("reconciler: enqueue music", "job", c.JobID, "err", err)
		} else if added {
			queued++
		}
	}
	return queued, nil
}
