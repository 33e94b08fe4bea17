package delivery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// An event recorded in this process wakes the fan-out at once when its
// transaction commits (SQLite's wake-up, where no listener runs): a fan-out
// that would otherwise wait an hour fans each one out.
func TestRecordedEventWakesTheFanout(t *testing.T) {
	e := newEnv(t, 200, time.Minute)
	ws := workspace(t)
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	e.hook(t, ws, wh.StatusEnabled, 0)

	run, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.svc.RunFanout(run, poll.Pace{Min: time.Hour, Max: time.Hour, Sweep: time.Hour})
	}()
	defer func() { cancel(); wg.Wait() }()

	for i := range 3 {
		if err := storage.WithTx(ctx, e.svc.Client, func(tx *ent.Tx) error {
			return outbox.Record(ctx, tx, "message.read", map[string]int{"round": i})
		}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		tick := time.NewTicker(5 * time.Millisecond)
		for {
			left, err := e.svc.Client.Event.Query().Where(event.FannedOutAtIsNil()).Count(viewer.SystemContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the recorded event was not fanned out within 10 s", i)
			}
			<-tick.C
		}
		tick.Stop()
	}
	e.queue.mu.Lock()
	defer e.queue.mu.Unlock()
	if got := len(e.queue.queued); got != 3 {
		t.Errorf("%d deliveries queued, want 3", got)
	}
}
