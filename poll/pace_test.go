package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The wait after an idle call: a doubling poll without a sweep; with one, the
// sweep, or less when stored work comes due sooner; a failed look for the due
// time polls as before.
func TestPaceIdle(t *testing.T) {
	const min, max, sweep = 50 * time.Millisecond, time.Second, 30 * time.Second
	due := func(in time.Duration, err error) func(context.Context, time.Time) (time.Time, error) {
		return func(_ context.Context, now time.Time) (time.Time, error) {
			if in == 0 || err != nil {
				return time.Time{}, err
			}
			return now.Add(in), nil
		}
	}
	tests := []struct {
		name      string
		p         Pace
		after     time.Duration
		want      time.Duration
		tolerance time.Duration
	}{
		{"poll doubles", Pace{Min: min, Max: max}, 200 * time.Millisecond, 400 * time.Millisecond, 0},
		{"poll stops at max", Pace{Min: min, Max: max}, max, max, 0},
		{"sweep", Pace{Min: min, Max: max, Sweep: sweep}, min, sweep, 0},
		{"sweep, nothing due", Pace{Min: min, Max: max, Sweep: sweep, Due: due(0, nil)}, min, sweep, 0},
		{"due before the sweep", Pace{Min: min, Max: max, Sweep: sweep, Due: due(3*time.Second, nil)}, min, 3 * time.Second, 10 * time.Millisecond},
		{"due after the sweep", Pace{Min: min, Max: max, Sweep: sweep, Due: due(time.Hour, nil)}, min, sweep, 0},
		{"due already", Pace{Min: min, Max: max, Sweep: sweep, Due: due(-time.Second, nil)}, 400 * time.Millisecond, min, 0},
		{"due unknown", Pace{Min: min, Max: max, Sweep: sweep, Due: due(0, errors.New("down"))}, 400 * time.Millisecond, 800 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		got := tt.p.idle(context.Background(), tt.after, time.Now())
		if got > tt.want || got < tt.want-tt.tolerance {
			t.Errorf("%s: wait = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// With a sweep of an hour, a loop that knows of work due shortly calls again
// then, unwoken.
func TestRunWakesWhenDue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	calls := make(chan time.Time, 100)
	dueAt := time.Now().Add(100 * time.Millisecond)
	p := Pace{Min: time.Hour, Max: time.Hour, Sweep: time.Hour, Wake: wake,
		Due: func(_ context.Context, now time.Time) (time.Time, error) {
			if now.Before(dueAt) {
				return dueAt, nil
			}
			return time.Time{}, nil
		}}
	go Run(ctx, p, func(context.Context) Outcome { calls <- time.Now(); return Idle }) // the first call is at once
	for i := range 2 {
		select {
		case at := <-calls:
			if i == 1 && at.Before(dueAt) {
				t.Errorf("second call at %s, before the due time %s", at, dueAt)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d did not come", i)
		}
	}
}

// Work that came due while the idle call ran (after it began, before it
// ended) is looked for at once, not after the sweep: the call did not see it,
// and a due time asked from now would skip it (the sandbox's acks under load).
func TestPaceIdleSeesWhatCameDueDuringTheCall(t *testing.T) {
	const min, sweep = 50 * time.Millisecond, 30 * time.Second
	began := time.Now().Add(-time.Second) // a slow call
	p := Pace{Min: min, Max: time.Second, Sweep: sweep, Due: func(_ context.Context, since time.Time) (time.Time, error) {
		due := began.Add(500 * time.Millisecond) // due while the call ran
		if !due.After(since) {
			return time.Time{}, nil
		}
		return due, nil
	}}
	if got := p.idle(context.Background(), min, began); got != min {
		t.Errorf("wait after the call = %s, want %s", got, min)
	}
}

// A wake that comes sooner than p.Gather after a call began waits out the rest
// of it; one that comes later runs the work at once.
func TestWakesGather(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	calls := make(chan time.Time, 10)
	const gather = 150 * time.Millisecond
	go Run(ctx, Pace{Min: time.Hour, Max: time.Hour, Gather: gather, Wake: wake}, func(context.Context) Outcome {
		calls <- time.Now()
		return Idle
	})
	next := func() time.Time {
		select {
		case at := <-calls:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("a wake did not run the work")
		}
		return time.Time{}
	}
	first := next() // at once
	wake <- struct{}{}
	if second := next(); second.Sub(first) < gather {
		t.Errorf("a wake right after a call ran the work %v later, want at least %v", second.Sub(first), gather)
	}
}
