package poll

import (
	"context"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	tests := []struct{ w, want time.Duration }{
		{10 * time.Millisecond, 100 * time.Millisecond}, // never below min
		{100 * time.Millisecond, 200 * time.Millisecond},
		{600 * time.Millisecond, time.Second}, // never above max
		{time.Second, time.Second},
	}
	for _, tt := range tests {
		if got := Next(tt.w, 100*time.Millisecond, time.Second); got != tt.want {
			t.Errorf("Next(%s) = %s, want %s", tt.w, got, tt.want)
		}
	}
}

// A wake runs the work at once, even while the loop waits its longest.
func TestWakeRunsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	calls := make(chan struct{}, 100)
	// Without a wake the loop would first call in an hour.
	go Loop(ctx, time.Hour, time.Hour, wake, func(context.Context) bool { calls <- struct{}{}; return false })
	<-calls // the first call is at once
	for range 3 {
		wake <- struct{}{}
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatal("a wake did not run the work")
		}
	}
}
