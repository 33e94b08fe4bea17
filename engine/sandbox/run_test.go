package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// Events another process scheduled come due while the network's loop waits a
// sweep of an hour (as when a listener wakes it): the loop waits for the
// earliest scheduled event it knows of, not for the sweep.
func TestRunReportsWhenDueDespiteTheSweep(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	// The sender's network, as another replica's: it schedules, it runs nothing.
	sender := sandbox.NewNetwork(client, 500*time.Millisecond, &sink{})
	if _, err := sender.Engine("ws_due").Send(context.Background(),
		engine.Outgoing{To: "15550001111@c.us", WireID: "3EB0DUE0001", Type: "text", Text: "later"}); err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	runner := sandbox.NewNetwork(client, 500*time.Millisecond, s)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runner.Run(ctx, poll.Pace{Min: 10 * time.Millisecond, Max: time.Hour, Sweep: time.Hour})
	}()
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		n := len(s.evs)
		s.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the scheduled ack was not reported within 10 s")
		}
		<-tick.C
	}
}
