package music

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/musicclip"
	"github.com/switchboardhq/switchboard/ent/musicupload"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// Bounds of a song generation.
const (
	// Timeout bounds one run of a generation.
	Timeout = 15 * time.Minute
	// StaleAfter is how long a clip may go unchanged in a non-final status
	// before the reconciler takes its run for lost; a run touches its clips on
	// every poll.
	StaleAfter = 2 * time.Minute
	// GiveUp is how old a clip may grow without finishing before it ends in error.
	GiveUp = 2 * time.Hour
	// DefaultPollEvery is how often a run asks the provider about clips that are
	// not finished.
	DefaultPollEvery = 3 * time.Second
)

// reconcileBatch bounds the stuck clips one Reconcile reads.
const reconcileBatch = 500

// ErrPermanent marks a generation that running it again cannot mend (a bad
// stored request, a provider that answered too few handles, no provider).
var ErrPermanent = errors.New("music: the generation cannot go on")

// GenerationQueue queues a generation's run (jobs.Queue is one).
type GenerationQueue interface {
	GenerateMusic(ctx context.Context, workspaceID, jobID string) (bool, error)
}

// Generator runs song generations: the clips of a generation are rows of the
// database, the provider renders them, and Files publishes what it rendered.
type Generator struct {
	Client   *ent.Client
	Provider Provider
	Files    *Files
	// Queue queues a lost generation again (Reconcile).
	Queue GenerationQueue
	// PollEvery is DefaultPollEvery when zero.
	PollEvery time.Duration
}

// Generate runs the generation jobID of workspaceID: it starts the request at
// the provider once (the handles are stored on the clips), then asks about every
// clip that is not final until all are, publishing finished audio and covers.
// After a crash the next run goes on from the stored handles. An error that
// running again cannot mend wraps ErrPermanent.
func (g *Generator) Generate(ctx context.Context, workspaceID, jobID string) error {
	if g == nil || g.Provider == nil || g.Files == nil {
		return fmt.Errorf("%w: no music provider configured", ErrPermanent)
	}
	ctx = viewer.WorkspaceContext(ctx, workspaceID)
	clips, err := g.Client.MusicClip.Query().Where(musicclip.JobID(jobID)).Order(ent.Asc(musicclip.FieldVariant)).All(ctx)
	if err != nil || len(clips) == 0 {
		return err
	}
	req, err := g.request(ctx, clips[0])
	if err != nil {
		return err
	}
	if clips[0].Handle == "" {
		if err := g.start(ctx, req, clips); err != nil {
			return err
		}
	}
	every := g.PollEvery
	if every <= 0 {
		every = DefaultPollEvery
	}
	for {
		open := 0
		for _, c := range clips {
			if Final(StatusOf(c)) {
				continue
			}
			if err := g.poll(ctx, req, c); err != nil {
				return err
			}
			if !Final(StatusOf(c)) {
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

// request is the stored request of a clip, with the path of its reference
// recording.
func (g *Generator) request(ctx context.Context, c *ent.MusicClip) (Request, error) {
	var req Request
	if err := json.Unmarshal(c.Request, &req); err != nil {
		return req, fmt.Errorf("%w: bad stored request: %v", ErrPermanent, err)
	}
	if c.UploadID != "" {
		u, err := g.Client.MusicUpload.Query().Where(musicupload.ID(c.UploadID)).Only(ctx)
		if err != nil {
			return req, err
		}
		req.Reference = g.Files.UploadPath(u.Token)
	}
	return req, nil
}

// start submits req and stores a handle on each clip (queued).
func (g *Generator) start(ctx context.Context, req Request, clips []*ent.MusicClip) error {
	handles, err := g.Provider.Start(ctx, req)
	if errors.Is(err, ErrRejected) {
		for _, c := range clips {
			if err := g.fail(ctx, c, "rejected", err); err != nil {
				return err
			}
		}
		return nil
	} else if err != nil {
		return err
	}
	if len(handles) < len(clips) {
		return fmt.Errorf("%w: provider answered %d handles for %d clips", ErrPermanent, len(handles), len(clips))
	}
	// All handles or none: a run never finds one clip started and the other not.
	err = storage.WithTx(ctx, g.Client, func(tx *ent.Tx) error {
		for i, c := range clips {
			if err := tx.MusicClip.UpdateOneID(c.ID).SetHandle(handles[i]).SetStatus(string(StatusQueued)).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range clips {
		c.Handle, c.Status = handles[i], string(StatusQueued)
	}
	return nil
}

// poll asks the provider about c and records what it says.
func (g *Generator) poll(ctx context.Context, req Request, c *ent.MusicClip) error {
	if st := StatusOf(c); st == StatusSubmitted || st == StatusQueued {
		if err := c.Update().SetStatus(string(StatusRunning)).Exec(ctx); err != nil {
			return err
		}
		c.Status = string(StatusRunning)
	}
	song, err := g.Provider.Fetch(ctx, req, c.Handle)
	if errors.Is(err, ErrRejected) {
		return g.fail(ctx, c, "rejected", err)
	} else if err != nil {
		return err
	}
	up := c.Update().SetStatus(string(song.Status))
	if song.Title != "" {
		up.SetTitle(song.Title)
	}
	if song.Model != "" {
		up.SetModel(song.Model)
	}
	switch song.Status {
	case StatusComplete:
		audio, err := g.Files.Publish(song.Audio, ".mp3")
		if err != nil {
			return err
		}
		up.SetAudioURL(audio).SetDurationSec(song.DurationSec)
		if len(song.Image) > 0 {
			ext := ".png"
			if !bytes.HasPrefix(song.Image, []byte("\x89PNG")) {
				ext = ".jpg"
			}
			image, err := g.Files.Publish(song.Image, ext)
			if err != nil {
				return err
			}
			up.SetImageURL(image)
		}
	case StatusError:
		up.SetErrorType(song.ErrorType).SetErrorMessage(song.ErrorMessage)
	}
	saved, err := up.Save(ctx) // also touches updated_at: the run is alive
	if err != nil {
		return err
	}
	*c = *saved
	return nil
}

// fail ends c in error.
func (g *Generator) fail(ctx context.Context, c *ent.MusicClip, kind string, cause error) error {
	slog.Warn("music clip failed", "clip", c.ID, "err", cause)
	saved, err := c.Update().SetStatus(string(StatusError)).SetErrorType(kind).
		SetErrorMessage("The music provider refused the request.").Save(ctx)
	if err == nil {
		*c = *saved
	}
	return err
}

// Reconcile queues again, as of now, the generation of every clip left in a
// non-final status unchanged for StaleAfter (its task was lost with Redis or its
// worker died), and ends in error the clips older than GiveUp. It returns how
// many generations it queued.
func (g *Generator) Reconcile(ctx context.Context, now time.Time) (int, error) {
	ctx = viewer.SystemContext(ctx)
	nonFinal := musicclip.StatusNotIn(string(StatusComplete), string(StatusError))
	_, err := g.Client.MusicClip.Update().Where(nonFinal, musicclip.CreatedAtLT(now.Add(-GiveUp))).
		SetStatus(string(StatusError)).SetErrorType("timeout").
		SetErrorMessage("The clip did not finish in time.").Save(ctx)
	if err != nil {
		return 0, err
	}
	stuck, err := g.Client.MusicClip.Query().Where(nonFinal, musicclip.UpdatedAtLT(now.Add(-StaleAfter))).
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
		added, err := g.Queue.GenerateMusic(ctx, c.WorkspaceID, c.JobID)
		if err != nil {
			slog.Error("reconciler: enqueue music", "job", c.JobID, "err", err)
		} else if added {
			queued++
		}
	}
	return queued, nil
}
