package poll

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Requests that come one after the other are one batch while a worker gathers
// (up to the limit), and a batch each when it does not.
func TestBatcherGathers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		gather time.Duration
		want   [][]int
	}{
		{"gathering", time.Minute, [][]int{{1, 2}, {3, 4}}}, // the limit ends each batch, not the minute
		{"not gathering", 0, [][]int{{1}, {2}, {3}, {4}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var slot atomic.Pointer[Batcher[int]]
			batches := make(chan []int, 10)
			go RunBatcher(ctx, &slot, 1, 2, tt.gather, func(_ context.Context, batch []int) {
				batches <- batch
			})
			for slot.Load() == nil {
				time.Sleep(time.Millisecond)
			}
			var got [][]int
			for r := 1; r <= 4; r++ {
				if err := slot.Load().Send(ctx, r); err != nil {
					t.Fatal(err)
				}
				if tt.gather == 0 { // handled before the next is sent
					got = append(got, <-batches)
				}
			}
			for len(got) < len(tt.want) {
				got = append(got, <-batches)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("batches (-want +got):\n%s", diff)
			}
		})
	}
}
