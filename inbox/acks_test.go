package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// The acks of a batch are applied together (one statement a status move) and
// leave the store exactly as the same acks applied one at a time: each message
// with its own times, the events of every move, the contacts and chat summaries
// of the first deliveries. Among them are acks that go alone (a message still
// sending, one without its engine, a failure) and a second ack of one message.
func TestAcksApplyTogetherAsOneByOne(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	together := ackScenario(t, base, false)
	alone := ackScenario(t, base, true)
	if diff := cmp.Diff(alone.store, together.store); diff != "" {
		t.Errorf("acks applied together (-one by one +together):\n%s", diff)
	}
	if together.store.Messages[1].Status != "read" || together.store.Messages[2].Status != "received" ||
		together.store.Messages[7].Status != "failed" {
		t.Errorf("statuses %v: want read, received, ..., failed", together.store.Messages)
	}
	if !together.sharedMove {
		t.Error("no two messages were moved by one statement: the acks were applied one by one")
	}
}

// ackStore is what the acks leave in the store, without ids that differ by run.
type ackStore struct {
	Messages []ackedMessage
	Chats    map[string]string // jid -> last message, engine, unread
	Contacts []string
	Events   []string // type and message, sorted
}

type ackedMessage struct {
	Status, Engine, Reason          string
	Confirmed, Received, Read, Fail string
}

type ackOutcome struct {
	store      ackStore
	sharedMove bool // two messages moved at the same instant, by one statement
}

// ackScenario stores sent messages made at base, and applies acks of them:
// together or one by one.
func ackScenario(t *testing.T, base time.Time, oneByOne bool) ackOutcome {
	t.Helper()
	client := storagetest.Client(t, storagetest.DatabaseURL(t))
	in := &inbox.Inbox{Client: client}
	const ws = "ws_acks"
	wctx := viewer.WorkspaceContext(context.Background(), ws)
	outbox.Forget(ws)
	t.Cleanup(func() { outbox.Forget(ws) })
	if err := client.Webhook.Create().SetURL("https://hooks.example.com/acks").SetSecret("whsec_acks").
		SetEvents([]string{wh.EventMessageDelivered, wh.EventMessageRead, wh.EventMessageFailed, wh.EventAckChanged}).
		Exec(wctx); err != nil {
		t.Fatal(err)
	}
	type sent struct {
		to     string
		status messaging.Status
		engine string
	}
	msgs := []sent{
		{"15550000001@c.us", messaging.StatusConfirmed, "eng_1"},
		{"15550000001@c.us", messaging.StatusConfirmed, "eng_1"}, // delivered, then read, in one batch
		{"15550000002@c.us", messaging.StatusConfirmed, "eng_1"},
		{"15550000002@c.us", messaging.StatusReceived, "eng_1"}, // read
		{"15550000002@c.us", messaging.StatusConfirmed, "eng_1"},
		{"15550000003@c.us", messaging.StatusSending, "eng_1"},   // still the dispatch's: alone
		{"15550000003@c.us", messaging.StatusConfirmed, ""},      // its engine comes with the ack: alone
		{"15550000003@c.us", messaging.StatusConfirmed, "eng_1"}, // fails: alone
		{"120363000000000001@g.us", messaging.StatusConfirmed, "eng_1"},
		{"120363000000000001@g.us", messaging.StatusConfirmed, "eng_1"},
	}
	keys := make([]engine.Key, len(msgs))
	ids := make([]string, len(msgs))
	for i, s := range msgs {
		keys[i] = engine.Key{FromMe: true, Remote: s.to, ID: fmt.Sprintf("3EB0ACK%02d", i)}
		c := client.Message.Create().SetTo(s.to).SetType("text").SetText(fmt.Sprintf("hello %d", i)).
			SetOrigin(message.OriginScheduled).SetFromMe(true).SetStatus(string(s.status)).SetEngineID(s.engine).
			SetWaID(keys[i].ID).SetWaSerialized(keys[i].Serialized()).SetCreatedAt(base.Add(time.Duration(i) * time.Second))
		switch s.status {
		case messaging.StatusSending:
			c.SetClaimToken("claim_acks")
		default:
			c.SetConfirmedAt(base.Add(time.Duration(i)*time.Second + 500*time.Millisecond))
		}
		switch s.status {
		case messaging.StatusReceived:
			c.SetReceivedAt(base.Add(time.Duration(i)*time.Second + 700*time.Millisecond))
		}
		m, err := c.Save(wctx)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	ack := func(n, i int, a engine.Ack, after time.Duration) engine.Event {
		ev := engine.Event{ID: fmt.Sprintf("ack%02d", n), Type: engine.EventAck, WorkspaceID: ws, EngineID: "eng_1",
			At: base.Add(time.Minute + after), Key: keys[i], Ack: a}
		if a == engine.AckError {
			ev.Reason = "blocked by the recipient"
		}
		return ev
	}
	evs := []engine.Event{
		ack(0, 0, engine.AckDevice, 1*time.Second), ack(1, 1, engine.AckDevice, 2*time.Second),
		ack(2, 2, engine.AckDevice, 3*time.Second), ack(3, 1, engine.AckRead, 4*time.Second),
		ack(4, 3, engine.AckRead, 5*time.Second), ack(5, 4, engine.AckDevice, 6*time.Second),
		ack(6, 5, engine.AckDevice, 7*time.Second), ack(7, 6, engine.AckDevice, 8*time.Second),
		ack(8, 7, engine.AckError, 9*time.Second), ack(9, 8, engine.AckDevice, 10*time.Second),
		ack(10, 9, engine.AckRead, 11*time.Second), ack(11, 0, engine.AckDevice, 12*time.Second), // the same again
	}
	apply := func() {
		if _, err := in.ApplyOnce(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if oneByOne {
		for _, ev := range evs {
			if err := in.HandleEvent(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			apply()
		}
	} else {
		if err := in.HandleEvents(context.Background(), evs); err != nil {
			t.Fatal(err)
		}
		apply()
	}
	for _, e := range client.InboxEvent.Query().AllX(sys) {
		if e.AppliedAt == nil || e.Attempts != 1 {
			t.Fatalf("event %s: applied at %v after %d attempts (%s); want applied at the first", e.DedupeKey, e.AppliedAt, e.Attempts, e.LastError)
		}
	}
	return ackOutcome{store: readAckStore(t, client, wctx, ids), sharedMove: sharedMove(t, client, wctx, ids)}
}

func readAckStore(t *testing.T, client *ent.Client, ctx context.Context, ids []string) ackStore {
	t.Helper()
	stamp := func(at *time.Time) string {
		if at == nil {
			return ""
		}
		return at.UTC().Format(time.RFC3339Nano)
	}
	var out ackStore
	index := map[string]int{}
	for i, id := range ids {
		index[id] = i
		m, err := client.Message.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out.Messages = append(out.Messages, ackedMessage{Status: m.Status, Engine: m.EngineID, Reason: m.FailureReason,
			Confirmed: stamp(m.ConfirmedAt), Received: stamp(m.ReceivedAt), Read: stamp(m.ReadAt), Fail: stamp(m.FailedAt)})
	}
	out.Chats = map[string]string{}
	for _, c := range client.Chat.Query().AllX(ctx) {
		out.Chats[c.Jid] = fmt.Sprintf("%s %q %s unread=%d", stamp(c.LastMessageAt), c.LastMessageText, c.EngineID, c.UnreadCount)
	}
	for _, c := range client.Contact.Query().AllX(ctx) {
		out.Contacts = append(out.Contacts, c.Jid+" "+c.EngineID)
	}
	sort.Strings(out.Contacts)
	for _, e := range client.Event.Query().AllX(ctx) {
		var data struct {
			ID, Status string
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		out.Events = append(out.Events, fmt.Sprintf("%s message %d %s", e.Type, index[data.ID], data.Status))
	}
	sort.Strings(out.Events)
	return out
}

// sharedMove reports whether two messages have the same updated_at: a move of
// several messages in one statement stamps them all with one instant.
func sharedMove(t *testing.T, client *ent.Client, ctx context.Context, ids []string) bool {
	t.Helper()
	seen := map[time.Time]bool{}
	for _, id := range ids {
		m := client.Message.GetX(ctx, id)
		if seen[m.UpdatedAt] {
			return true
		}
		seen[m.UpdatedAt] = true
	}
	return false
}
