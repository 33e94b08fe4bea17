package poll

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Batcher gathers the requests of tasks that run at the same moment into
// batches: a worker takes the first request waiting and every other one waiting
// at that moment, up to a bound, and handles them together. Each request carries
// its own reply channel, which the handler answers.
type Batcher[R any] struct {
	in      chan R
	stopped chan struct{}
}

// ErrBatcherStopped says the batcher a request was for stopped before taking it.
var ErrBatcherStopped = errors.New("poll: the batcher stopped")

// RunBatcher publishes a Batcher in slot and runs workers that hand batches of up
// to limit requests to handle, until ctx is done. A batch taken is handled to its
// end with ctx's values but without its cancellation. With gather positive, a
// worker that took a request waits up to gather for more before it hands the
// batch over (unless limit is reached first): requests that come one after the
// other, not at one moment, are then handled together too.
func RunBatcher[R any](ctx context.Context, slot *atomic.Pointer[Batcher[R]], workers, limit int, gather time.Duration,
	handle func(context.Context, []R)) {
	b := &Batcher[R]{in: make(chan R), stopped: make(chan struct{})}
	slot.Store(b)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case first := <-b.in:
					handle(context.WithoutCancel(ctx), b.gather(ctx, first, limit, gather))
				}
			}
		}()
	}
	wg.Wait()
	slot.CompareAndSwap(b, nil)
	close(b.stopped)
}

// gather returns a batch of first and the requests waiting now, up to limit,
// and, with wait positive, those that come within wait.
func (b *Batcher[R]) gather(ctx context.Context, first R, limit int, wait time.Duration) []R {
	batch := []R{first}
	var until <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		until = t.C
	}
	for len(batch) < limit {
		if until == nil {
			select {
			case r := <-b.in:
				batch = append(batch, r)
				continue
			default:
				return batch
			}
		}
		select {
		case r := <-b.in:
			batch = append(batch, r)
		case <-until:
			return batch
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// Send hands r to a worker of b; it fails with ErrBatcherStopped once b stopped,
// or with ctx's error.
func (b *Batcher[R]) Send(ctx context.Context, r R) error {
	select {
	case b.in <- r:
		return nil
	case <-b.stopped:
		return ErrBatcherStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}
