package inbox_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/poll"
)

// With a sweep of an hour, as when a listener wakes the applier, an event that
// failed is still retried when its backoff ends (a second), not at the sweep:
// the applier waits for the next attempt it knows of.
func TestRunRetriesWhenDueDespiteTheSweep(t *testing.T) {
	in := open(t)
	ev := reported{id: "bad", workspace: "ws", engine: "en", chat: chatX, name: "x"}.event()
	err := in.Client.InboxEvent.Create().SetWorkspaceID("ws").SetDedupeKey("en|bad").SetType(string(ev.Type)).
		SetSubject(ev.OrderKey()).SetPayload(json.RawMessage(`{"at":"not a time"}`)).SetAt(ev.At).Exec(sys)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		in.Run(ctx, poll.Pace{Min: 50 * time.Millisecond, Max: time.Hour, Sweep: time.Hour})
	}()
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		row, err := in.Client.InboxEvent.Query().Where(inboxevent.DedupeKey("en|bad")).Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		if row.Attempts >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempts = %d after 10 s, want the retry after 1 s", row.Attempts)
		}
		<-tick.C
	}
}
