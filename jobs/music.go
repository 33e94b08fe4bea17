package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/music"
)

// TypeMusic is the task that generates the clips of one song generation.
const TypeMusic = "music:generate"

// QueueMusic holds music generations, apart so that long renders never hold up
// messages or webhooks.
const QueueMusic = "music"

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
		asynq.MaxRetry(20), asynq.Timeout(music.Timeout))
}

// GenerateMusic runs a generation's task through the music generator; an error
// that running again cannot mend is not retried.
func (h *Handlers) GenerateMusic(ctx context.Context, t *asynq.Task) error {
	var p musicPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	err := h.Music.Generate(ctx, p.WorkspaceID, p.JobID)
	if errors.Is(err, music.ErrPermanent) {
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	return err
}
