package messaging_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// The batch moves claim only what is still pending, give each message its own
// key under one token, and confirm only what is still held by that claim.
func TestClaimAndConfirm(t *testing.T) {
	ctx := viewer.WorkspaceContext(context.Background(), "ws_batch")
	url := "sqlite://" + t.TempDir() + "/batch.db"
	client, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := storage.Migrate(ctx, client, url); err != nil {
		t.Fatal(err)
	}
	statuses := []messaging.Status{messaging.StatusPending, messaging.StatusPending, messaging.StatusCancelled, messaging.StatusPending}
	var ms []*ent.Message
	for i, st := range statuses {
		m, err := client.Message.Create().SetTo("1555000000" + string(rune('1'+i)) + "@c.us").SetType("text").
			SetText("hi").SetOrigin("scheduled").SetStatus(string(st)).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	key := func(m *ent.Message) engine.Key {
		return engine.Key{FromMe: true, Remote: m.To, ID: engine.WireID(m.ID)}
	}
	// A message read as pending that another writer claimed since.
	if err := client.Message.UpdateOneID(ms[3].ID).SetStatus(string(messaging.StatusSending)).SetClaimToken("other").Exec(ctx); err != nil {
		t.Fatal(err)
	}

	var claimed []*ent.Message
	tx(t, ctx, client, func(tx *ent.Tx) (err error) { claimed, err = messaging.Claim(ctx, tx, ms, key); return err })
	if len(claimed) != 2 || claimed[0].ID != ms[0].ID || claimed[1].ID != ms[1].ID {
		t.Fatalf("claimed %v, want the two pending ones", ids(claimed))
	}
	for _, c := range claimed {
		stored := client.Message.GetX(ctx, c.ID)
		want := key(c)
		if diff := cmp.Diff(
			[]any{messaging.StatusSending, c.ClaimToken, 1, want.ID, want.Serialized()},
			[]any{messaging.StatusOf(stored), stored.ClaimToken, stored.DispatchAttempts, stored.WaID, stored.WaSerialized},
		); diff != "" {
			t.Errorf("claimed %s (-returned +stored):\n%s", c.ID, diff)
		}
	}
	if claimed[0].ClaimToken == "" || claimed[0].ClaimToken != claimed[1].ClaimToken {
		t.Errorf("claim tokens %q, %q: want one new token", claimed[0].ClaimToken, claimed[1].ClaimToken)
	}

	// An ack moves the second one on before the confirmation.
	if err := client.Message.UpdateOneID(claimed[1].ID).SetStatus(string(messaging.StatusReceived)).SetClaimToken("").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Truncate(time.Millisecond)
	claimed[0].EngineID = "eng_sent_through" // the engine the dispatch handed it to
	tx(t, ctx, client, func(tx *ent.Tx) error { return messaging.Confirm(ctx, tx, claimed, at) })
	got := map[string]messaging.Status{}
	for _, m := range ms {
		got[m.ID] = messaging.StatusOf(client.Message.GetX(ctx, m.ID))
	}
	want := map[string]messaging.Status{
		ms[0].ID: messaging.StatusConfirmed, ms[1].ID: messaging.StatusReceived,
		ms[2].ID: messaging.StatusCancelled, ms[3].ID: messaging.StatusSending,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses after confirm (-want +got):\n%s", diff)
	}
	if m := client.Message.GetX(ctx, ms[0].ID); m.ConfirmedAt == nil || !m.ConfirmedAt.Equal(at) || m.ClaimToken != "" ||
		m.Queued || m.EngineID != "eng_sent_through" {
		t.Errorf("confirmed message: confirmedAt %v (want %v), claim token %q, queued %t, engine %q (want eng_sent_through)",
			m.ConfirmedAt, at, m.ClaimToken, m.Queued, m.EngineID)
	}

	// A message with an engine of its own keeps it.
	own, err := client.Message.Create().SetTo("15550000009@c.us").SetType("text").SetText("hi").SetOrigin("scheduled").
		SetStatus(string(messaging.StatusPending)).SetQueued(true).SetEngineID("eng_named").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx(t, ctx, client, func(tx *ent.Tx) (err error) {
		claimed, err = messaging.Claim(ctx, tx, []*ent.Message{own}, key)
		return err
	})
	claimed[0].EngineID = "eng_other"
	tx(t, ctx, client, func(tx *ent.Tx) error { return messaging.Confirm(ctx, tx, claimed, at) })
	if m := client.Message.GetX(ctx, own.ID); m.EngineID != "eng_named" || messaging.StatusOf(m) != messaging.StatusConfirmed {
		t.Errorf("a message with its own engine: %s through %q, want confirmed through eng_named", m.Status, m.EngineID)
	}
}

func tx(t *testing.T, ctx context.Context, client *ent.Client, fn func(*ent.Tx) error) {
	t.Helper()
	if err := storage.WithTx(ctx, client, fn); err != nil {
		t.Fatal(err)
	}
}

func ids(ms []*ent.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// MoveEach moves each message from where it was read, at its own time, and
// leaves out what is no move forward; a message another writer moved since it
// was read undoes the whole of it (ErrMovedMeanwhile), and the dispatch's
// messages are not for it.
func TestMoveEach(t *testing.T) {
	ctx := viewer.WorkspaceContext(context.Background(), "ws_move_each")
	client := storagetest.Client(t, storagetest.DatabaseURL(t))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var ms []*ent.Message
	for i, st := range []messaging.Status{messaging.StatusConfirmed, messaging.StatusConfirmed, messaging.StatusRead} {
		m, err := client.Message.Create().SetTo("1555000010" + string(rune('1'+i)) + "@c.us").SetType("text").
			SetText("hi").SetOrigin("scheduled").SetStatus(string(st)).SetConfirmedAt(base).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	steps := func() []messaging.Step {
		return []messaging.Step{
			{M: ms[0], To: messaging.StatusRead, At: base.Add(time.Second)},
			{M: ms[1], To: messaging.StatusReceived, At: base.Add(2 * time.Second)},
			{M: ms[2], To: messaging.StatusReceived, At: base.Add(3 * time.Second)}, // read already: no move
		}
	}
	var moved []*ent.Message
	tx(t, ctx, client, func(tx *ent.Tx) (err error) { moved, err = messaging.MoveEach(ctx, tx, steps()); return err })
	if moved[2] != nil {
		t.Errorf("a read message moved back to received")
	}
	stamp := func(at *time.Time) time.Time {
		if at == nil {
			return time.Time{}
		}
		return at.UTC()
	}
	for i, want := range []struct {
		status             messaging.Status
		received, read     time.Time
		confirmedUnchanged bool
	}{
		{messaging.StatusRead, base.Add(time.Second).UTC(), base.Add(time.Second).UTC(), true},
		{messaging.StatusReceived, base.Add(2 * time.Second).UTC(), time.Time{}, true},
	} {
		m := client.Message.GetX(ctx, ms[i].ID)
		got := []any{messaging.StatusOf(m), stamp(m.ReceivedAt), stamp(m.ReadAt), stamp(m.ConfirmedAt).Equal(base.UTC()), m.Queued}
		if diff := cmp.Diff([]any{want.status, want.received, want.read, want.confirmedUnchanged, false}, got); diff != "" {
			t.Errorf("message %d (-want +stored):\n%s", i, diff)
		}
		if r := moved[i]; messaging.StatusOf(r) != want.status || !stamp(r.ReceivedAt).Equal(want.received) {
			t.Errorf("message %d returned as %s received %v, want %s at %v", i, r.Status, r.ReceivedAt, want.status, want.received)
		}
	}

	// Read again, and one of them moved by another writer since.
	for i := range ms {
		ms[i] = client.Message.GetX(ctx, ms[i].ID)
	}
	client.Message.UpdateOneID(ms[1].ID).SetStatus(string(messaging.StatusRead)).ExecX(ctx)
	err := storage.WithTx(ctx, client, func(tx *ent.Tx) error {
		_, err := messaging.MoveEach(ctx, tx, []messaging.Step{
			{M: ms[0], To: messaging.StatusPlayed, At: base.Add(4 * time.Second)},
			{M: ms[1], To: messaging.StatusPlayed, At: base.Add(5 * time.Second)},
		})
		return err
	})
	if !errors.Is(err, messaging.ErrMovedMeanwhile) {
		t.Fatalf("MoveEach over a message moved meanwhile: %v, want ErrMovedMeanwhile", err)
	}
	if m := client.Message.GetX(ctx, ms[0].ID); messaging.StatusOf(m) != messaging.StatusRead || m.PlayedAt != nil {
		t.Errorf("after the rollback message 0 is %s (played %v), want read as before", m.Status, m.PlayedAt)
	}

	pending, err := client.Message.Create().SetTo("15550000109@c.us").SetType("text").SetText("hi").
		SetOrigin("scheduled").SetStatus(string(messaging.StatusPending)).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = storage.WithTx(ctx, client, func(tx *ent.Tx) error {
		_, err := messaging.MoveEach(ctx, tx, []messaging.Step{{M: pending, To: messaging.StatusReceived, At: base}})
		return err
	})
	if err == nil {
		t.Error("MoveEach moved a pending message, the dispatch's")
	}
}
