package rest

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/switchboardhq/switchboard"
)

// Redis key prefixes of the limits kept per client address (redis_rate adds its
// own "rate:" in front).
const (
	failureKeyPrefix = "switchboard:authfail:"
	addressKeyPrefix = "switchboard:rate:addr:"
)

// Buckets of wrong credentials. Guessable credentials (the operator token, typed
// on the operators' pages and at the dashboard's sign-in) are counted apart from
// API keys, so that a client stuck on a revoked key behind the same address as an
// operator does not lock the operator out.
const (
	operatorFailures = "operator"
	keyFailures      = "key"
)

// failures counts the wrong credentials each client address presents, in Redis
// (GCRA, shared by every replica). Past the limit, a wrong credential is answered
// 429 rate_limited with Retry-After instead of 401; for guessable credentials
// (blocked), every attempt is, the right one included, until the address has a
// failure to spend again. A nil *failures, or a zero limit, counts nothing; when
// Redis cannot be asked, the request goes on and a warning is logged.
type failures struct {
	l      *redis_rate.Limiter
	limit  redis_rate.Limit
	client clientAddress
}

func (f *failures) on() bool { return f != nil && f.l != nil && f.limit.Rate > 0 && f.limit.Burst > 0 }

func (f *failures) key(r *http.Request, bucket string) string {
	return failureKeyPrefix + bucket + ":" + f.client.of(r)
}

// blocked answers ERATELIMIT (and sets Retry-After) when r's address has no
// failure left to spend in bucket: asked before a guessable credential is
// compared, so that an address past the limit learns nothing of its guesses.
func (f *failures) blocked(w http.ResponseWriter, r *http.Request, bucket string) error {
	if !f.on() {
		return nil
	}
	res, err := f.l.AllowN(r.Context(), f.key(r, bucket), f.limit, 0) // look, spend nothing
	if err != nil {
		limiterDown(r.Context(), err)
		return nil
	}
	if res.Remaining >= 1 {
		return nil
	}
	// One failure comes back when the backlog is down to burst-1 failures.
	interval := f.limit.Period / time.Duration(f.limit.Rate)
	return f.refuse(w, res.ResetAfter-time.Duration(f.limit.Burst-1)*interval)
}

// failed counts one wrong credential of r's address in bucket and returns err,
// or ERATELIMIT (with Retry-After set) when the address is past its limit. Only
// an authentication failure counts: any other err is returned as it is.
func (f *failures) failed(w http.ResponseWriter, r *http.Request, bucket string, err error) error {
	if !f.on() || switchboard.ErrorCode(err) != switchboard.EUNAUTHORIZED {
		return err
	}
	res, lerr := f.l.Allow(r.Context(), f.key(r, bucket), f.limit)
	if lerr != nil {
		limiterDown(r.Context(), lerr)
		return err
	}
	if res.Allowed == 0 {
		return f.refuse(w, res.RetryAfter)
	}
	return err
}

func (f *failures) refuse(w http.ResponseWriter, retry time.Duration) error {
	w.Header().Set("Retry-After", seconds(max(retry, time.Second)))
	return switchboard.Errorf(switchboard.ERATELIMIT,
		"Too many wrong credentials from this address (%d per %s); retry after %s seconds.",
		f.limit.Rate, f.limit.Period, seconds(max(retry, time.Second)))
}

// limitAddress counts each client address's requests to the routes it guards,
// under group, against limit in Redis, and answers 429 rate_limited with
// Retry-After past it. It guards the routes that take no key (which limitRate
// cannot count); with no limiter or a zero limit it lets everything through,
// and when Redis cannot be asked the request goes through.
func limitAddress(l *redis_rate.Limiter, limit redis_rate.Limit, client clientAddress, group string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil || limit.IsZero() {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			res, err := l.Allow(r.Context(), addressKeyPrefix+group+":"+client.of(r), limit)
			if err != nil {
				limiterDown(r.Context(), err)
				next.ServeHTTP(w, r)
				return
			}
			if res.Allowed == 0 {
				w.Header().Set("Retry-After", seconds(res.RetryAfter))
				writeError(w, r, switchboard.Errorf(switchboard.ERATELIMIT,
					"Too many requests from this address (%d per %s); retry after %s seconds.", limit.Rate, limit.Period, seconds(res.RetryAfter)))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// limiterDown logs that Redis could not be asked for a limit.
func limiterDown(ctx context.Context, err error) {
	slog.Warn("rate limiter unavailable; request let through", "request_id", RequestID(ctx), "err", err)
}
