// Package poll paces the loops that look for work in the database: often while
// there is work, rarely when there is none, at once when told that work arrived.
package poll

import (
	"context"
	"time"
)

// Loop calls work at once and then until ctx is done. After a call that found work it waits min;
// after each call that found none the wait doubles, up to max. A signal on wake
// (which may be nil) ends the wait at once and starts again from min.
func Loop(ctx context.Context, min, max time.Duration, wake <-chan struct{}, work func(context.Context) (found bool)) {
	Run(ctx, Pace{Min: min, Max: max, Wake: wake}, Of(work))
}

// Next is the wait after an idle call that followed a wait of w: twice w, within
// [min, max].
func Next(w, min, max time.Duration) time.Duration {
	return minDur(maxDur(2*w, min), max)
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// WaitOutRemainder handles a task that runs before its time at. asynq schedules in
// whole seconds, so a task may start up to a second early: a remainder of at most a
// second is slept away and 0 returned; a longer one is returned for the caller to
// reschedule. A nil at is due.
func WaitOutRemainder(ctx context.Context, at *time.Time) (time.Duration, error) {
	if at == nil {
		return 0, nil
	}
	wait := time.Until(*at)
	if wait <= 0 {
		return 0, nil
	} else if wait > time.Second {
		return wait, nil
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(wait):
		return 0, nil
	}
}
