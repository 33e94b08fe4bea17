package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/delivery"
)

// RetryDelayFunc is the asynq server's RetryDelayFunc: a delivery attempt names
// its own delay (a *delivery.RetryAfter: the retry schedule at the attempt number
// the database holds); other tasks back off with RetryDelay.
func RetryDelayFunc(n int, err error, t *asynq.Task) time.Duration {
	var ra *delivery.RetryAfter
	if errors.As(err, &ra) {
		return ra.Delay
	}
	return RetryDelay(n, err, t)
}

// Deliver runs a TypeDeliver task: one attempt of a webhook delivery.
func (h *Handlers) Deliver(ctx context.Context, t *asynq.Task) error {
	var p deliverPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	return h.Delivery.Attempt(ctx, p.WorkspaceID, p.DeliveryID)
}
