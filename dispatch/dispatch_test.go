package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

const ws = "ws_dispatch"

// errFlaky is a send error the engine may not have tomorrow.
var errFlaky = errors.New("engine: socket closed")

// fakeEngine records what it is handed and answers every send alike: err, or
// the key it is given by key (the claimed wire key when key is nil).
type fakeEngine struct {
	err error
	key func(engine.Outgoing) engine.Key

	mu   sync.Mutex
	sent []engine.Outgoing
}

func (e *fakeEngine) ID() string   { return "eng_fake" }
func (e *fakeEngine) Kind() string { return engine.KindRegular }
func (e *fakeEngine) Close() error { return nil }

func (e *fakeEngine) Send(_ context.Context, m engine.Outgoing) (engine.Key, error) {
	e.mu.Lock()
	e.sent = append(e.sent, m)
	e.mu.Unlock()
	if e.err != nil {
		return engine.Key{}, e.err
	}
	if e.key != nil {
		return e.key(m), nil
	}
	return engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}, nil
}

func (e *fakeEngine) sends() []engine.Outgoing {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]engine.Outgoing(nil), e.sent...)
}

// engines is the workspace's engine, or none (engine.ErrNoEngine).
type engines struct{ eng engine.Engine }

func (e engines) Pick(context.Context, string) (engine.Engine, error) {
	if e.eng == nil {
		return nil, engine.ErrNoEngine
	}
	return e.eng, nil
}

func (e engines) Find(_ context.Context, _, id string) (engine.Engine, error) {
	if e.eng == nil || e.eng.ID() != id {
		return nil, engine.ErrDisconnected
	}
	return e.eng, nil
}

func (e engines) Provided(context.Context, string) (engine.Engine, error) {
	return nil, engine.ErrNoEngine
}

// queue records the dispatch tasks queued.
type queue struct {
	mu     sync.Mutex
	queued []string // workspace/message
}

func (q *queue) Dispatch(_ context.Context, workspaceID, messageID string, _ time.Time) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued = append(q.queued, workspaceID+"/"+messageID)
	return true, nil
}

func open(t *testing.T) *ent.Client {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	return client
}

// seed stores a scheduled message of ws in status st, due at sendAt (nil: now).
func seed(t *testing.T, client *ent.Client, st messaging.Status, sendAt *time.Time) *ent.Message {
	t.Helper()
	c := client.Message.Create().SetTo("15550001234@c.us").SetType("text").SetText("hi").
		SetOrigin("scheduled").SetStatus(string(st)).SetNillableSendAt(sendAt)
	if st == messaging.StatusSending {
		c.SetClaimToken("other")
	}
	m, err := c.Save(viewer.WorkspaceContext(context.Background(), ws))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// stored is what a test compares of a message after a dispatch.
type stored struct {
	Status      messaging.Status
	Reason, Key string
	Claimed     bool // holds a claim token
	Attempts    int
}

func read(t *testing.T, client *ent.Client, id string) stored {
	t.Helper()
	m, err := client.Message.Get(viewer.SystemContext(context.Background()), id)
	if err != nil {
		t.Fatal(err)
	}
	return stored{Status: messaging.StatusOf(m), Reason: m.FailureReason, Key: m.WaSerialized, Claimed: m.ClaimToken != "",
		Attempts: m.DispatchAttempts}
}

func wire(m *ent.Message) string {
	return engine.Key{FromMe: true, Remote: m.To, ID: engine.WireID(m.ID)}.Serialized()
}

// A dispatch task claims a due pending message, sends it once and records what the
// engine said; anything else is left as it is.
func TestDispatch(t *testing.T) {
	rejected := fmt.Errorf("%w: not on the network", engine.ErrRejected)
	ago := func(d time.Duration) *time.Time { at := time.Now().Add(-d); return &at }
	tests := []struct {
		name      string
		status    messaging.Status
		sendAt    *time.Time
		eng       *fakeEngine // nil: no engine connected
		workspace string      // of the task; ws when empty
		wantErr   error
		want      func(m *ent.Message) stored
		wantSends int
	}{
		{name: "sent and confirmed with its wire key", status: messaging.StatusPending, eng: &fakeEngine{},
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusConfirmed, Key: wire(m), Attempts: 1}
			}, wantSends: 1},
		{name: "rejected: failed with the reason", status: messaging.StatusPending, eng: &fakeEngine{err: rejected},
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusFailed, Reason: rejected.Error(), Key: wire(m), Attempts: 1}
			}, wantSends: 1},
		{name: "engine failed for now: back to pending, retried", status: messaging.StatusPending,
			eng: &fakeEngine{err: errFlaky}, wantErr: errFlaky,
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusPending, Key: wire(m), Attempts: 1}
			}, wantSends: 1},
		{name: "the engine's key is the one kept", status: messaging.StatusPending,
			eng: &fakeEngine{key: func(o engine.Outgoing) engine.Key {
				return engine.Key{FromMe: true, Remote: o.To, ID: o.WireID, Participant: "1555@lid"}
			}},
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusConfirmed, Key: wire(m) + "_1555@lid", Attempts: 1}
			}, wantSends: 1},
		{name: "no engine: left pending, retried", status: messaging.StatusPending, wantErr: engine.ErrNoEngine,
			want: func(*ent.Message) stored { return stored{Status: messaging.StatusPending} }},
		{name: "no engine for longer than ExpireAfter: expired", status: messaging.StatusPending,
			sendAt: ago(dispatch.ExpireAfter + time.Minute),
			want: func(*ent.Message) stored {
				return stored{Status: messaging.StatusExpired, Reason: "no engine connected within 24h"}
			}},
		{name: "cancelled: not sent", status: messaging.StatusCancelled, eng: &fakeEngine{},
			want: func(*ent.Message) stored { return stored{Status: messaging.StatusCancelled} }},
		{name: "claimed by another run: not sent", status: messaging.StatusSending, eng: &fakeEngine{},
			want: func(*ent.Message) stored { return stored{Status: messaging.StatusSending, Claimed: true} }},
		{name: "another workspace's task: not sent", status: messaging.StatusPending, eng: &fakeEngine{},
			workspace: "ws_other",
			want:      func(*ent.Message) stored { return stored{Status: messaging.StatusPending} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := open(t)
			d := &dispatch.Dispatcher{Client: client, Engines: engines{}}
			if tc.eng != nil {
				d.Engines = engines{tc.eng}
			}
			m := seed(t, client, tc.status, tc.sendAt)
			task := tc.workspace
			if task == "" {
				task = ws
			}
			err := d.Dispatch(context.Background(), task, m.ID)
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Dispatch error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want(m), read(t, client, m.ID)); diff != "" {
				t.Errorf("stored message (-want +got):\n%s", diff)
			}
			var sends []engine.Outgoing
			if tc.eng != nil {
				sends = tc.eng.sends()
			}
			if len(sends) != tc.wantSends {
				t.Fatalf("engine got %d sends, want %d", len(sends), tc.wantSends)
			}
			for _, o := range sends {
				if diff := cmp.Diff(dispatch.Outgoing(m), o); diff != "" {
					t.Errorf("sent (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A message due later than the task's run is not sent by it.
func TestDispatchEarly(t *testing.T) {
	client := open(t)
	eng := &fakeEngine{}
	d := &dispatch.Dispatcher{Client: client, Engines: engines{eng}}
	later := time.Now().Add(time.Hour)
	m := seed(t, client, messaging.StatusPending, &later)
	if err := d.Dispatch(context.Background(), ws, m.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored{Status: messaging.StatusPending}, read(t, client, m.ID)); diff != "" {
		t.Errorf("stored message (-want +got):\n%s", diff)
	}
	if n := len(eng.sends()); n != 0 {
		t.Errorf("engine got %d sends, want none", n)
	}
}

// A direct send claims its message in the transaction that stores it, then Send
// records the outcome as a dispatch does; a send the engine failed for now goes
// back to pending and its dispatch task is queued.
func TestSend(t *testing.T) {
	rejected := fmt.Errorf("%w: bad media", engine.ErrRejected)
	tests := []struct {
		name       string
		eng        *fakeEngine
		wantErr    error
		want       func(m *ent.Message) stored
		wantQueued bool
	}{
		{name: "confirmed with its wire key", eng: &fakeEngine{},
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusConfirmed, Key: wire(m), Attempts: 1}
			}},
		{name: "rejected: failed", eng: &fakeEngine{err: rejected},
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusFailed, Reason: rejected.Error(), Key: wire(m), Attempts: 1}
			}},
		{name: "failed for now: pending and queued", eng: &fakeEngine{err: errFlaky}, wantErr: errFlaky,
			want: func(m *ent.Message) stored {
				return stored{Status: messaging.StatusPending, Key: wire(m), Attempts: 1}
			}, wantQueued: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := open(t)
			q := &queue{}
			d := &dispatch.Dispatcher{Client: client, Engines: engines{tc.eng}, Queue: q}
			m := seed(t, client, messaging.StatusPending, nil)
			ctx := viewer.WorkspaceContext(context.Background(), ws)
			var claimed *ent.Message
			err := storage.WithTx(ctx, client, func(tx *ent.Tx) (err error) {
				claimed, err = dispatch.Claim(ctx, tx, m)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			err = d.Send(ctx, tc.eng, claimed)
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Send error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want(m), read(t, client, m.ID)); diff != "" {
				t.Errorf("stored message (-want +got):\n%s", diff)
			}
			var want []string
			if tc.wantQueued {
				want = []string{ws + "/" + m.ID}
			}
			if diff := cmp.Diff(want, q.queued); diff != "" {
				t.Errorf("queued (-want +got):\n%s", diff)
			}
		})
	}
}

// A message is claimed once, with a token and its wire key; one already claimed
// by another token, or cancelled, is not claimed; releasing a stale claim hands
// the message back only while that claim still holds it.
func TestClaims(t *testing.T) {
	client := open(t)
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	claim := func(m *ent.Message) (*ent.Message, error) {
		var got *ent.Message
		err := storage.WithTx(ctx, client, func(tx *ent.Tx) (err error) {
			got, err = dispatch.Claim(ctx, tx, m)
			return err
		})
		return got, err
	}

	m := seed(t, client, messaging.StatusPending, nil)
	first, err := claim(m)
	if err != nil {
		t.Fatal(err)
	}
	if first.ClaimToken == "" {
		t.Fatal("claimed without a token")
	}
	if diff := cmp.Diff(stored{Status: messaging.StatusSending, Key: wire(m), Claimed: true, Attempts: 1},
		read(t, client, m.ID)); diff != "" {
		t.Errorf("claimed message (-want +got):\n%s", diff)
	}

	cases := []struct {
		name string
		m    *ent.Message
	}{
		{"claimed twice from the same read", m},
		{"claimed by another token", seed(t, client, messaging.StatusSending, nil)},
		{"cancelled", seed(t, client, messaging.StatusCancelled, nil)},
	}
	for _, tc := range cases {
		before := read(t, client, tc.m.ID)
		if _, err := claim(tc.m); !errors.Is(err, dispatch.ErrNotClaimed) {
			t.Errorf("%s: claim error %v, want ErrNotClaimed", tc.name, err)
		}
		if diff := cmp.Diff(before, read(t, client, tc.m.ID)); diff != "" {
			t.Errorf("%s: changed by a claim that failed (-before +after):\n%s", tc.name, diff)
		}
	}

	// The run that claimed first died: its claim is released and a new run claims
	// the message. Releasing the first claim again (a stale read) leaves the new one.
	if err := (&dispatch.Dispatcher{Client: client}).Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	if got := read(t, client, m.ID); got.Status != messaging.StatusPending || got.Claimed {
		t.Fatalf("released: %+v, want pending without a claim", got)
	}
	second, err := claim(client.Message.GetX(ctx, m.ID))
	if err != nil {
		t.Fatal(err)
	}
	if second.ClaimToken == first.ClaimToken {
		t.Errorf("second claim reused token %q", first.ClaimToken)
	}
	if err := (&dispatch.Dispatcher{Client: client}).Release(ctx, first); err != nil {
		t.Fatal(err)
	}
	stale := client.Message.GetX(ctx, m.ID)
	if diff := cmp.Diff([]any{messaging.StatusSending, second.ClaimToken, 2},
		[]any{messaging.StatusOf(stale), stale.ClaimToken, stale.DispatchAttempts}); diff != "" {
		t.Errorf("after releasing a stale claim (-want +got):\n%s", diff)
	}
}

// Many dispatch tasks of one message running at once, batched by Run or not,
// send it once.
func TestDispatchOnce(t *testing.T) {
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprintf("batched=%t", batched), func(t *testing.T) {
			client := open(t)
			eng := &fakeEngine{}
			d := &dispatch.Dispatcher{Client: client, Engines: engines{eng}}
			if batched {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { d.Run(ctx, 2); close(done) }()
				t.Cleanup(func() { cancel(); <-done })
			}
			m := seed(t, client, messaging.StatusPending, nil)
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = d.Dispatch(context.Background(), ws, m.ID) }()
			}
			wg.Wait()
			if diff := cmp.Diff(make([]error, len(errs)), errs, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Dispatch errors (-want +got):\n%s", diff)
			}
			if n := len(eng.sends()); n != 1 {
				t.Errorf("engine got %d sends, want 1", n)
			}
			if got := read(t, client, m.ID); got.Status != messaging.StatusConfirmed {
				t.Errorf("status %s, want confirmed", got.Status)
			}
		})
	}
}
