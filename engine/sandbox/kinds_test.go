package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// A message to a number of sandbox.Kinds is answered with a valid message of
// that number's kind, quoting it.
func TestKindNumbersAnswerWithEveryKind(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	s := &sink{}
	net := sandbox.NewNetwork(client, time.Millisecond, s)
	eng := net.Engine("ws_kinds")
	want, got := map[string]string{}, map[string]string{}
	keys := map[string]string{}
	for digits, in := range sandbox.Kinds {
		to := "1555000" + digits + "@c.us"
		key, err := eng.Send(context.Background(), engine.Outgoing{To: to, WireID: "3EB0KIND" + digits, Type: "text", Text: "send me one"})
		if err != nil {
			t.Fatal(err)
		}
		want[to], keys[to] = in.WireType(), key.Serialized()
	}
	if _, err := net.ReportDue(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range s.evs {
		if ev.Type != engine.EventMessage {
			continue
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("%s: invalid event: %v", ev.Message.From, err)
		}
		if ev.Message.QuotedKey != keys[ev.Message.From] {
			t.Errorf("%s quotes %q, want %q", ev.Message.From, ev.Message.QuotedKey, keys[ev.Message.From])
		}
		got[ev.Message.From] = ev.Message.WireType()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wire types of the answers (-want +got):\n%s", diff)
	}
}
