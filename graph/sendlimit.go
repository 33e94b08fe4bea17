package graph

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/switchboardhq/switchboard"
)

// sendLimitKeyPrefix namespaces the direct-send limiter's Redis keys, one per
// engine.
const sendLimitKeyPrefix = "switchboard:rate:engine:"

// SendLimit bounds the direct sends through one engine (a number), on every
// replica together (redis_rate's GCRA in Redis): it protects a number from a
// runaway client. Scheduled sends and campaigns are paced instead, never
// refused. A nil SendLimit, or a zero Limit, lets everything through.
type SendLimit struct {
	Limiter *redis_rate.Limiter
	Limit   redis_rate.Limit
}

// allow counts a direct send through the engine engineID and refuses it with
// ERATELIMIT (and how long to wait) once the engine is over its limit. When
// Redis cannot be asked the send goes through and the failure is logged: the
// limiter never takes sending down with it.
func (l *SendLimit) allow(ctx context.Context, engineID string) error {
	if l == nil || l.Limiter == nil || l.Limit.IsZero() {
		return nil
	}
	res, err := l.Limiter.Allow(ctx, sendLimitKeyPrefix+engineID, l.Limit)
	if err != nil {
		slog.Warn("engine send limiter unavailable; sending", "engine", engineID, "err", err)
		return nil
	}
	if res.Allowed > 0 {
		return nil
	}
	retry := max(res.RetryAfter, time.Second)
	return &switchboard.Error{Code: switchboard.ERATELIMIT, RetryAfter: retry, Message: fmt.Sprintf(
		"Too many direct sends through engine %s (%d per %s); retry after %d seconds, or queue the message with POST /v1/scheduled-messages.",
		engineID, l.Limit.Rate, l.Limit.Period, int(math.Ceil(retry.Seconds())))}
}
