package rest

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/viewer"
)

// rateKeyPrefix namespaces the limiter's Redis keys: one per API key, and one
// per workspace under rateKeyPrefix+"ws:".
const rateKeyPrefix = "switchboard:rate:"

// limitRate counts each API key's requests against limit, and the requests of
// all the keys of its workspace together against workspace, in Redis (GCRA, so
// every replica shares the counts), and answers 429 rate_limited with
// Retry-After once the key or its workspace is over. Minting more keys thus buys
// no more than the workspace's allowance. Every answer carries the
// X-RateLimit-Limit (requests per period), X-RateLimit-Remaining (requests
// that may be made now) and X-RateLimit-Reset (seconds until back to the full
// burst) headers of whichever of the two allows fewer requests now. It runs
// after authenticate; with no limiter or zero limits it lets everything
// through. When Redis cannot be asked, the request goes through and the
// failure is logged: the limiter never takes the API down with it.
func limitRate(l *redis_rate.Limiter, limit, workspace redis_rate.Limit) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil || limit.IsZero() && workspace.IsZero() {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, ok := viewer.FromContext(r.Context())
			if !ok || v.KeyID == "" {
				next.ServeHTTP(w, r)
				return
			}
			var shown *redis_rate.Result
			for _, c := range []struct {
				on      bool
				key, of string
				limit   redis_rate.Limit
			}{
				{!limit.IsZero(), rateKeyPrefix + v.KeyID, "this API key", limit},
				{!workspace.IsZero() && v.WorkspaceID != "", rateKeyPrefix + "ws:" + v.WorkspaceID, "this workspace's keys together", workspace},
			} {
				if !c.on {
					continue
				}
				res, err := l.Allow(r.Context(), c.key, c.limit)
				if err != nil {
					limiterDown(r.Context(), err)
					break
				}
				if res.Allowed == 0 {
					rateHeaders(w, res)
					w.Header().Set("Retry-After", seconds(res.RetryAfter))
					writeError(w, r, switchboard.Errorf(switchboard.ERATELIMIT,
						"Too many requests for %s (%d per %s); retry after %s seconds.", c.of, c.limit.Rate, c.limit.Period, seconds(res.RetryAfter)))
					return
				}
				if shown == nil || res.Remaining < shown.Remaining {
					shown = res
				}
			}
			if shown != nil {
				rateHeaders(w, shown)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// rateHeaders sets the X-RateLimit headers of res.
func rateHeaders(w http.ResponseWriter, res *redis_rate.Result) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(res.Limit.Rate))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("X-RateLimit-Reset", seconds(res.ResetAfter))
}

// seconds renders d in whole seconds, rounded up.
func seconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(max(d, 0).Seconds())))
}
