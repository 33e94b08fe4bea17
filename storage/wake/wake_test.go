package wake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/storage/wake"
	"github.com/switchboardhq/switchboard/viewer"
)

var sys = viewer.SystemContext(context.Background())

// within bounds every wait of these tests: far below a sweep (an hour here,
// 30 s in the app), far above a notification's way.
const within = 10 * time.Second

// database is a fresh, migrated PostgreSQL database; the tests skip without
// TEST_DATABASE_URL (LISTEN/NOTIFY is PostgreSQL's).
func database(t *testing.T) (url string, client *ent.Client) {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("TEST_DATABASE_URL is not set: the wake-up listener is PostgreSQL's")
	}
	url = storagetest.DatabaseURL(t)
	return url, storagetest.Client(t, url)
}

// other is a second client of the database, as another replica's.
func other(t *testing.T, url string) *ent.Client {
	t.Helper()
	c, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// run runs f until the test ends, and waits for it then.
func run(t *testing.T, f func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitFor waits until cond holds, checking the recorded state every few
// milliseconds, and fails the test after within.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		<-tick.C
	}
}

// received waits for a signal on ch.
func received(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("no signal within %s: %s", within, what)
	}
}

// Migrating twice leaves one trigger per table, the very ones (a start locks
// no live table to make them again), and a write of many rows in one
// transaction is one notification, sent at commit.
func TestMigrateTwiceKeepsOneTriggerEach(t *testing.T) {
	url, client := database(t)
	triggers := func() (names, oids []string) {
		t.Helper()
		rows, err := client.QueryContext(context.Background(),
			`SELECT c.relname, t.tgname, t.oid::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			 WHERE NOT t.tgisinternal AND t.tgname LIKE '%\_wake' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var table, name, oid string
			if err := rows.Scan(&table, &name, &oid); err != nil {
				t.Fatal(err)
			}
			names, oids = append(names, table+" "+name), append(oids, oid)
		}
		return names, oids
	}
	_, before := triggers()
	if err := storage.Migrate(context.Background(), client, url); err != nil {
		t.Fatalf("second migration: %v", err)
	}
	got, after := triggers()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the second migration made the triggers again (-before +after oids):\n%s", diff)
	}
	want := []string{"events events_wake", "inbox_events inbox_events_wake", "sandbox_events sandbox_events_wake",
		"sandbox_groups sandbox_groups_wake"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}

	l, err := wake.New(url)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	l.Notify("events", ch)
	run(t, l.Run)
	received(t, ch, "the first connection's sweep")
	tx, err := other(t, url).Tx(sys)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := tx.Event.Create().SetWorkspaceID("ws").SetType(fmt.Sprint("t", i)).SetData(json.RawMessage(`{}`)).Exec(sys); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ch:
		t.Fatal("notified before the commit")
	default:
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	received(t, ch, "the commit's notification")
}

// An inbox event and a webhook event inserted through another connection, as
// another replica would, wake loops that otherwise wait an hour: each of three
// rounds is applied and fanned out long before any sweep. Only the first
// connection's sweep and the notifications start a pass here (Min is an hour
// too), so at least two rounds are the notifications' doing.
func TestInsertsElsewhereWakeTheLoops(t *testing.T) {
	url, client := database(t)
	l, err := wake.New(url)
	if err != nil {
		t.Fatal(err)
	}
	in := &inbox.Inbox{Client: client}
	svc := &delivery.Service{Client: client, Dialect: dialect.Postgres}
	l.Notify("inbox_events", in.WakeChannel())
	l.Notify("events", svc.WakeChannel())
	idle := poll.Pace{Min: time.Hour, Max: time.Hour, Sweep: time.Hour}
	run(t, func(ctx context.Context) { in.Run(ctx, idle) })
	run(t, func(ctx context.Context) { svc.RunFanout(ctx, idle) })
	run(t, l.Run)
	waitFor(t, "the listener connects", func() bool { return l.Sweeps() == 1 })

	replica := other(t, url)
	for i := range 3 {
		ev := engine.Event{ID: fmt.Sprint("e", i), Type: engine.EventChat, WorkspaceID: "ws", EngineID: "en",
			At: time.Now(), Chat: &engine.ChatState{ID: "15550001111@c.us", Name: fmt.Sprint("name ", i)}}
		payload, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		row, err := replica.InboxEvent.Create().SetWorkspaceID("ws").SetDedupeKey("en|" + ev.ID).SetType(string(ev.Type)).
			SetSubject(ev.OrderKey()).SetPayload(payload).SetAt(ev.At).Save(sys)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("inbox event %d applied", i), func() bool {
			got, err := client.InboxEvent.Query().Where(inboxevent.ID(row.ID), inboxevent.AppliedAtNotNil()).Exist(sys)
			return err == nil && got
		})
		rec, err := replica.Event.Create().SetWorkspaceID("ws").SetType("message.delivered").SetData(json.RawMessage(`{}`)).Save(sys)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("webhook event %d fanned out", i), func() bool {
			got, err := client.Event.Query().Where(event.ID(rec.ID), event.FannedOutAtNotNil()).Exist(sys)
			return err == nil && got
		})
	}
}

// The listener's connection, ended by the server, comes back and sweeps: every
// loop is signalled again, since what was notified meanwhile is lost.
func TestListenerReconnectsAndSweeps(t *testing.T) {
	url, client := database(t)
	l, err := wake.New(url)
	if err != nil {
		t.Fatal(err)
	}
	inboxCh, eventsCh := make(chan struct{}, 1), make(chan struct{}, 1)
	l.Notify("inbox_events", inboxCh)
	l.Notify("events", eventsCh)
	run(t, l.Run)
	received(t, inboxCh, "the inbox's first sweep")
	received(t, eventsCh, "the fan-out's first sweep")
	pid := l.PID()
	if pid == 0 {
		t.Fatal("no listening connection after the first sweep")
	}
	if _, err := client.ExecContext(context.Background(), "SELECT pg_terminate_backend($1)", int64(pid)); err != nil {
		t.Fatal(err)
	}
	received(t, inboxCh, "the inbox's sweep after the reconnection")
	received(t, eventsCh, "the fan-out's sweep after the reconnection")
	if got := l.Sweeps(); got != 2 {
		t.Errorf("sweeps = %d, want 2", got)
	}
	if got := l.PID(); got == pid || got == 0 {
		t.Errorf("listening backend = %d after %d was terminated", got, pid)
	}
	// And it listens again: a commit elsewhere is notified.
	if err := other(t, url).Event.Create().SetWorkspaceID("ws").SetType("t").SetData(json.RawMessage(`{}`)).Exec(sys); err != nil {
		t.Fatal(err)
	}
	received(t, eventsCh, "a notification after the reconnection")
}
