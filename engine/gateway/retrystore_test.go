package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/storage"
)

// TestRetryReceiptAfterARestartIsAnsweredFromTheStore sends messages of
// several kinds through one engine, closes it, and opens another on the same
// store (a restart, or the session failing over to another replica): the
// recipients' retry receipts get the messages that were sent.
func TestRetryReceiptAfterARestartIsAnsweredFromTheStore(t *testing.T) {
	testStores(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		first := newHarness(t, true, withStore(st))
		text := engine.Outgoing{WireID: engine.WireID("msg_r1"), To: chatID(contact), Type: "text", Text: "hello"}
		poll := engine.Outgoing{WireID: engine.WireID("msg_r2"), To: chatID(group), Type: "poll", PollQuestion: "Lunch?", PollOptions: []string{"Sushi", "Pizza"}}
		for _, m := range []engine.Outgoing{text, poll} {
			if _, err := first.e.Send(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		textKey := engine.Key{FromMe: true, Remote: chatID(contact), ID: text.WireID}
		if err := first.e.React(ctx, engine.Key{Remote: chatID(contact), ID: "IN1"}, "👍"); err != nil {
			t.Fatal(err)
		}
		if err := first.e.Edit(ctx, textKey, "hello again", ""); err != nil {
			t.Fatal(err)
		}
		sent := first.f.sent
		if len(sent) != 4 {
			t.Fatalf("sent %d messages", len(sent))
		}
		_ = first.e.Close()

		second := newHarness(t, true, withStore(st))
		// The network now addresses the contact by LID (a retry receipt may name either).
		second.f.alt[contactLID] = contact
		tests := []struct {
			name      string
			requester types.JID
			chat      types.JID
			id        types.MessageID
			want      *waE2E.Message
		}{
			{"text", contact, contact, types.MessageID(text.WireID), sent[0].msg},
			{"text, receipt by LID", contactLID, contactLID, types.MessageID(text.WireID), sent[0].msg},
			{"poll in a group", member, group, types.MessageID(poll.WireID), sent[1].msg},
			{"reaction", contact, contact, types.MessageID(fmt.Sprintf("3EB0%018X", 3)), sent[2].msg},
			{"edit", contact, contact, types.MessageID(fmt.Sprintf("3EB0%018X", 4)), sent[3].msg},
			{"unknown message", contact, contact, "3EB0NOTSENT", nil},
			{"other chat", member, member, types.MessageID(text.WireID), nil},
		}
		for _, tc := range tests {
			got := second.f.retryReceipt(tc.requester, tc.chat, tc.id)
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
		if got := second.f.retryReceipt(contact, contact, types.MessageID(text.WireID)); got.GetConversation() != "hello" {
			t.Errorf("the retried text is %v", got)
		}

		// A logout forgets the device's messages (and timers) with its keys.
		our := second.f.own.String()
		if err := st.putTimer(ctx, our, contact.String(), chatTimer{seconds: week, setAt: 1}, false); err != nil {
			t.Fatal(err)
		}
		if err := second.e.Logout(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err := st.sent(ctx, our, text.WireID, contact.String()); got != nil || err != nil {
			t.Errorf("after logout: %v %v", got, err)
		}
		if _, ok, err := st.timer(ctx, our, contact.String()); ok || err != nil {
			t.Errorf("timer after logout: %v %v", ok, err)
		}
	})
}

// TestSentMessagesArePrunedInPages prunes more than a page of old messages and
// keeps the recent ones.
func TestSentMessagesArePrunedInPages(t *testing.T) {
	testStores(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		our := newFake(true).own.String()
		old, recent := time.Now().Add(-SentRetention-time.Hour), time.Now()
		msg := &waE2E.Message{Conversation: proto.String("hi")}
		for i := range pruneBatch + 20 {
			if err := st.putSent(ctx, our, contact.String(), fmt.Sprintf("OLD%d", i), msg, old); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.putSent(ctx, our, contact.String(), "NEW", msg, recent); err != nil {
			t.Fatal(err)
		}
		n, err := st.pruneSent(ctx, time.Now().Add(-SentRetention))
		if err != nil || n != pruneBatch+20 {
			t.Fatalf("pruned %d, %v", n, err)
		}
		if got, err := st.sent(ctx, our, "NEW", contact.String()); err != nil || got == nil {
			t.Errorf("recent message: %v %v", got, err)
		}
		if got, err := st.sent(ctx, our, "OLD1", contact.String()); err != nil || got != nil {
			t.Errorf("old message: %v %v", got, err)
		}
	})
}

// BenchmarkSendWithTheStore is the cost of a text send through the engine and
// the fake network with the careful client's store work (the chat's timer read,
// the message kept) and without a store.
func BenchmarkSendWithTheStore(b *testing.B) {
	for _, withSt := range []bool{false, true} {
		b.Run(fmt.Sprintf("store=%v", withSt), func(b *testing.B) {
			var st *Store
			if withSt {
				_, db, dialect, err := storage.OpenWithDB("sqlite://"+filepath.Join(b.TempDir(), "gw.db"), 4)
				if err != nil {
					b.Fatal(err)
				}
				if st, err = OpenStore(context.Background(), db, dialect); err != nil {
					b.Fatal(err)
				}
			}
			h := newHarness(b, true, withStore(st))
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				m := engine.Outgoing{WireID: engine.WireID(fmt.Sprint("msg_b", i)), To: chatID(contact), Type: "text", Text: "hello"}
				if _, err := h.e.Send(ctx, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
