package jobs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// batcher gathers the requests of tasks that run at the same moment into
// batches: a worker takes the first request waiting and every other one waiting
// at that moment, up to a bound, and handles them together. Each request carries
// its own reply channel, which the handler answers.
type batcher[R any] struct {
	in      chan R
	stopped chan struct{}
}

// errBatcherStopped says the batcher a request was for stopped before taking it.
var errBatcherStopped = errors.New("jobs: the batcher stopped")

// runBatcher publishes a batcher in slot and runs workers that hand batches of up
// to limit requests to handle, until ctx is done. A batch taken is handled to its
// end with ctx's values but without its cancellation.
func runBatcher[R any](ctx context.Context, slot *atomic.Pointer[batcher[R]], workers, limit int,
	handle func(context.Context, []R)) {
	b := &batcher[R]{in: make(chan R), stopped: make(chan struct{})}
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
					batch := []R{first}
				gather:
					for len(batch) < limit {
						select {
						case r := <-b.in:
							batch = append(batch, r)
						default:
							break gather
						}
					}
					handle(context.WithoutCancel(ctx), batch)
				}
			}
		}()
	}
	wg.Wait()
	slot.CompareAndSwap(b, nil)
	close(b.stopped)
}

// send hands r to a worker of b.
func (b *batcher[R]) send(ctx context.Context, r R) error {
	select {
	case b.in <- r:
		return nil
	case <-b.stopped:
		return errBatcherStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}
