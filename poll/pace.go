package poll

import (
	"context"
	"time"
)

// Outcome is what one call of a loop's work found.
type Outcome int

const (
	// Idle: the call found no work.
	Idle Outcome = iota
	// Found: the call did work; more may be waiting.
	Found
	// Failed: the call could not look (the database refused); it is tried again
	// soon, with the backoff of an idle poll.
	Failed
)

// Pace is how a loop waits between the calls of its work.
type Pace struct {
	// Min is the wait after a call that found work.
	Min time.Duration
	// Max is the longest wait an idle poll doubles to; a failed call doubles its
	// wait up to Max whatever Sweep says.
	Max time.Duration
	// Sweep, when positive, says that Wake fires whenever work arrives (a
	// database notification, an in-process signal): an idle call is then
	// followed by a wait of Sweep, a safety sweep, instead of a doubling poll,
	// or by a shorter one when Due knows of work that comes due sooner.
	Sweep time.Duration
	// Wake (may be nil) ends a wait at once.
	Wake <-chan struct{}
	// Gather, when positive, is the least time from the start of one call to
	// the start of the next that a wake may bring: a wake that comes sooner
	// waits out the rest, so that what arrives meanwhile (one wake an insert,
	// under load) is found by one call rather than one call each.
	Gather time.Duration
	// Due (may be nil) returns the earliest time after since at which work
	// already stored comes due by the clock rather than by an insert (a retry, a
	// lease's end, a scheduled event); the zero time when there is none. It is
	// asked after an idle call when Sweep is positive, with since the moment the
	// call began: what came due while it ran is then looked for at once.
	Due func(ctx context.Context, since time.Time) (time.Time, error)
}

// Run calls work at once and then until ctx is done, waiting between calls as
// p says. A signal
// on p.Wake ends the wait at once (or once p.Gather has passed since the last
// call began) and starts again from p.Min.
func Run(ctx context.Context, p Pace, work func(context.Context) Outcome) {
	// The first call is at once: it finds what was stored while no loop ran,
	// and what was stored before Wake was listened to.
	wait := p.Min
	t := time.NewTimer(0)
	defer t.Stop()
	var began time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.Wake:
			wait = p.Min
			if rest := p.Gather - time.Since(began); rest > 0 {
				t.Reset(rest)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}
		began = time.Now()
		switch work(ctx) {
		case Found:
			wait = p.Min
		case Failed:
			wait = Next(wait, p.Min, p.Max)
		default:
			wait = p.idle(ctx, wait, began)
		}
		t.Reset(wait)
	}
}

// idle is the wait after an idle call that followed a wait of w.
func (p Pace) idle(ctx context.Context, w time.Duration, began time.Time) time.Duration {
	if p.Sweep <= 0 {
		return Next(w, p.Min, p.Max)
	}
	if p.Due == nil {
		return p.Sweep
	}
	// Due is asked from when the idle call began, not from now: work that came
	// due while the call ran was not found by it and must not be skipped.
	due, err := p.Due(ctx, began)
	now := time.Now()
	if err != nil {
		// Not knowing when work comes due, look again as a failed call would.
		return Next(w, p.Min, p.Max)
	}
	if due.IsZero() {
		return p.Sweep
	}
	if d := due.Sub(now); d > 0 {
		return min(d, p.Sweep)
	}
	return p.Min // due already: look again soon, not in a tight loop
}

// Of turns a bool work function (found work or not) into an Outcome one.
func Of(work func(context.Context) bool) func(context.Context) Outcome {
	return func(ctx context.Context) Outcome {
		if work(ctx) {
			return Found
		}
		return Idle
	}
}
