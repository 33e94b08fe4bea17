package rest

import (
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/viewer"
)

// rateKeyPrefix namespaces the limiter's Redis keys, one per API key.
const rateKeyPrefix = "switchboard:rate:"

// limitRate counts each API key's requests against limit in Redis (GCRA, so
// every replica shares the count) and answers 429 rate_limited with
// Retry-After once the key is over it. Every answer carries the
// X-RateLimit-Limit (requests per period), X-RateLimit-Remaining (requests
// that may be made now) and X-RateLimit-Reset (seconds until the key is back
// to its full burst) headers. It runs after authenticate; with no limiter or a
// zero limit it lets everything through. When Redis cannot be asked, the
// request goes through and the failure is logged: the limiter never takes the
// API down with it.
func limitRate(l *redis_rate.Limiter, limit redis_rate.Limit) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil || limit.IsZero() {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, ok := viewer.FromContext(r.Context())
			if !ok || v.KeyID == "" {
				next.ServeHTTP(w, r)
				return
			}
			res, err := l.Allow(r.Context(), rateKeyPrefix+v.KeyID, limit)
			if err != nil {
				slog.Warn("rate limiter unavailable; request let through", "request_id", RequestID(r.Context()), "err", err)
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h.Set("X-RateLimit-Limit", strconv.Itoa(limit.Rate))
			h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
			h.Set("X-RateLimit-Reset", seconds(res.ResetAfter))
			if res.Allowed == 0 {
				h.Set("Retry-After", seconds(res.RetryAfter))
				writeError(w, r, switchboard.Errorf(switchboard.ERATELIMIT,
					"Too many requests for this API key (%d per %s); retry after %s seconds.", limit.Rate, limit.Period, seconds(res.RetryAfter)))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// seconds renders d in whole seconds, rounded up.
func seconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(max(d, 0).Seconds())))
}
