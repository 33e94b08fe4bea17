package jobs

import (
	"context"
	"errors"
	"log/slog"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/engine"
)

// LogFailure returns the asynq ErrorHandler: every failed run of a task is logged
// once, with its cause. Expected waits (a message waiting for an engine, a
// receiver that failed and has its retry scheduled) are logged at info; anything
// else at error, with the attempt number.
func LogFailure(logger *slog.Logger) func(ctx context.Context, t *asynq.Task, err error) {
	return func(ctx context.Context, t *asynq.Task, err error) {
		id, _ := asynq.GetTaskID(ctx)
		retried, _ := asynq.GetRetryCount(ctx)
		var ra *delivery.RetryAfter
		switch {
		case errors.Is(err, engine.ErrNoEngine):
			logger.Info("message waits for an engine", "task", id, "attempt", retried+1)
		case errors.As(err, &ra):
			logger.Info("task runs again later", "type", t.Type(), "task", id, "retry_in", ra.Delay, "cause", ra.Cause)
		default:
			logger.Error("task failed", "type", t.Type(), "task", id, "attempt", retried+1, "err", err)
		}
	}
}
