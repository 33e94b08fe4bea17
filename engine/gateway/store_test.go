package gateway

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	waAdv "go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/storage"
)

// TestStoreInSwitchboardsDatabase opens whatsmeow's sqlstore on the database
// Switchboard migrated (its ent tables beside whatsmeow_ ones), creates a
// device, reads it back with a session, and deletes it: on the embedded SQLite
// (modernc) always, and on PostgreSQL when TEST_DATABASE_URL is set.
func TestStoreInSwitchboardsDatabase(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testStore(t, "sqlite://"+filepath.Join(t.TempDir(), "sb.db"))
	})
	t.Run("sqlite in memory", func(t *testing.T) {
		testStore(t, "sqlite://:memory:")
	})
	t.Run("sqlite without foreign keys is refused", func(t *testing.T) {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "nofk.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := OpenStore(context.Background(), db, "sqlite"); err == nil {
			t.Error("a SQLite database without foreign keys was accepted")
		}
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("TEST_DATABASE_URL")
		if url == "" {
			t.Skip("TEST_DATABASE_URL not set")
		}
		testStore(t, url)
	})
}

func testStore(t *testing.T, url string) {
	ctx := context.Background()
	client, db, dialect, err := storage.OpenWithDB(url, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := storage.Migrate(ctx, client, url); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, db, dialect)
	if err != nil {
		t.Fatal(err)
	}
	// Upgrading again (a restart, another replica) is harmless, and so is
	// Switchboard's own migration with whatsmeow's tables beside its own.
	if _, err := OpenStore(ctx, db, dialect); err != nil {
		t.Fatalf("second upgrade: %v", err)
	}
	if err := storage.Migrate(ctx, client, url); err != nil {
		t.Fatalf("ent migration beside whatsmeow tables: %v", err)
	}

	jid := types.NewADJID("15550001111", 0, 3)
	_ = st.DeleteDevice(ctx, jid.String()) // a leftover of an earlier run
	dev, err := st.device(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	dev.ID, dev.PushName, dev.Platform = &jid, "Switchboard", "chrome"
	dev.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte("details"), AccountSignature: make([]byte, 64),
		AccountSignatureKey: make([]byte, 32), DeviceSignature: make([]byte, 64)} // what pairing stores
	if err := dev.Save(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sessions.PutSession(ctx, "15552223333.0:0", []byte("session-bytes")); err != nil {
		t.Fatal(err)
	}
	got, err := st.device(ctx, jid.String())
	if err != nil {
		t.Fatal(err)
	}
	if got.RegistrationID != dev.RegistrationID || !bytes.Equal(got.IdentityKey.Priv[:], dev.IdentityKey.Priv[:]) || got.PushName != "Switchboard" {
		t.Errorf("read back %+v", got)
	}
	if s, err := got.Sessions.GetSession(ctx, "15552223333.0:0"); err != nil || string(s) != "session-bytes" {
		t.Errorf("session %q %v", s, err)
	}
	ids, err := st.Devices(ctx)
	if err != nil || len(ids) != 1 || ids[0] != jid.String() {
		t.Errorf("devices %v %v", ids, err)
	}

	// The production constructor on this store: an unpaired engine never
	// touches the network until asked to pair.
	e, err := Open(ctx, Config{Store: st, WorkspaceID: "ws1", Sink: &sink{}})
	if err != nil {
		t.Fatal(err)
	}
	if s := e.State(); s.Status != StatusUnpaired || s.Connected {
		t.Errorf("new engine state %+v", s)
	}
	if _, err := e.Send(ctx, engine.Outgoing{WireID: "3EB0", To: "15552223333@c.us", Type: "text"}); !errors.Is(err, ErrNotPaired) {
		t.Errorf("send unpaired: %v", err)
	}
	_ = e.Close()

	// Open on the bare DB opens (and upgrades) the store once per *sql.DB.
	e1, err := Open(ctx, Config{DB: db, Dialect: dialect, WorkspaceID: "ws1", Sink: &sink{}})
	if err != nil {
		t.Fatal(err)
	}
	storesMu.Lock()
	cached := stores[db]
	storesMu.Unlock()
	e2, err := Open(ctx, Config{DB: db, Dialect: dialect, WorkspaceID: "ws2", Sink: &sink{}})
	if err != nil {
		t.Fatal(err)
	}
	if cached == nil || e1.cfg.Store != cached || e2.cfg.Store != cached {
		t.Error("the store was not shared by the engines of one database")
	}
	_, _ = e1.Close(), e2.Close()

	if err := st.DeleteDevice(ctx, jid.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.device(ctx, jid.String()); !errors.Is(err, ErrNoDevice) {
		t.Errorf("deleted device: %v", err)
	}
	if _, err := Open(ctx, Config{Store: st, WorkspaceID: "ws1", Sink: &sink{}, DeviceJID: jid.String()}); !errors.Is(err, ErrNoDevice) {
		t.Errorf("opening a deleted device: %v", err)
	}
}
