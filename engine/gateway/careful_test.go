package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow"
	waCompanionReg "go.mau.fi/whatsmeow/proto/waCompanionReg"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/storage"
)

// testStores opens a gateway Store on the embedded SQLite always, and on
// PostgreSQL when TEST_DATABASE_URL is set, and runs f on each; the rows of
// the fake's device are cleared first.
func testStores(t *testing.T, f func(t *testing.T, st *Store)) {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "gw.db"), "postgres": os.Getenv("TEST_DATABASE_URL")}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			if urls[name] == "" {
				t.Skip("TEST_DATABASE_URL not set")
			}
			client, db, dialect, err := storage.OpenWithDB(urls[name], 4)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = client.Close() })
			st, err := OpenStore(context.Background(), db, dialect)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.forgetDevice(context.Background(), newFake(true).own.String()); err != nil {
				t.Fatal(err)
			}
			f(t, st)
		})
	}
}

func withStore(st *Store) func(*Config) { return func(c *Config) { c.Store = st } }

func TestIdentityIsWhatThePhoneShows(t *testing.T) {
	t.Cleanup(func() { _ = SetIdentity(Identity{FullSync: true}) })
	// The defaults, set when the package loads.
	if got := store.DeviceProps.GetOs(); got != DefaultDeviceName {
		t.Errorf("default device name %q", got)
	}
	if got := store.DeviceProps.GetPlatformType(); got != waCompanionReg.DeviceProps_DESKTOP {
		t.Errorf("default platform %v", got)
	}
	if !store.DeviceProps.GetRequireFullSync() {
		t.Error("full history sync not asked by default")
	}
	if err := SetIdentity(Identity{Name: "Acme", Platform: "chrome", FullSync: true, FullSyncDays: 365}); err != nil {
		t.Fatal(err)
	}
	if !store.DeviceProps.GetRequireFullSync() || store.DeviceProps.GetHistorySyncConfig().GetFullSyncDaysLimit() != 365 {
		t.Errorf("full sync of a year: %v", store.DeviceProps)
	}
	if err := SetIdentity(Identity{Name: "Acme Support", Platform: "Firefox"}); err != nil {
		t.Fatal(err)
	}
	if store.DeviceProps.GetOs() != "Acme Support" || store.DeviceProps.GetPlatformType() != waCompanionReg.DeviceProps_FIREFOX ||
		store.DeviceProps.GetRequireFullSync() || store.DeviceProps.GetHistorySyncConfig().FullSyncDaysLimit != nil {
		t.Errorf("device props %v", store.DeviceProps)
	}
	// A phone-code pairing says the same.
	h := newHarness(t, false)
	h.f.qrCodes = []string{"2@first"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := h.e.PairPhone(ctx, "+15550001111"); err != nil {
		t.Fatal(err)
	}
	if h.f.pairClient != whatsmeow.PairClientFirefox || h.f.pairDisplay != "Firefox (Acme Support)" {
		t.Errorf("pairing as %q %q", h.f.pairClient, h.f.pairDisplay)
	}
	if err := SetIdentity(Identity{Platform: "commodore64"}); err == nil {
		t.Error("an unknown platform was taken")
	}
}

func TestAvailablePresenceOnConnect(t *testing.T) {
	available := []types.Presence{types.PresenceAvailable}
	t.Run("sent once connected", func(t *testing.T) {
		h := newHarness(t, true)
		h.f.emit(&events.Connected{})
		if diff := cmp.Diff(available, h.f.ownPresence()); diff != "" {
			t.Errorf("presence (-want +got):\n%s", diff)
		}
	})
	t.Run("not when off", func(t *testing.T) {
		h := newHarness(t, true, func(c *Config) { c.HidePresence = true })
		h.f.emit(&events.Connected{})
		if !h.e.State().Connected {
			t.Fatal("not connected")
		}
		if got := h.f.ownPresence(); len(got) != 0 {
			t.Errorf("presence %v sent while off", got)
		}
	})
	t.Run("waits for the push name", func(t *testing.T) {
		// A device just paired: whatsmeow refuses presence until the phone's
		// settings name the account.
		h := newHarness(t, true)
		h.f.pushName = ""
		h.f.emit(&events.Connected{})
		if got := h.f.ownPresence(); len(got) != 0 {
			t.Fatalf("presence %v without a push name", got)
		}
		h.f.setPushName("Ann's Shop")
		if diff := cmp.Diff(available, h.f.ownPresence()); diff != "" {
			t.Errorf("presence (-want +got):\n%s", diff)
		}
		h.f.setPushName("Ann's Shop 2") // a rename sends nothing more
		if diff := cmp.Diff(available, h.f.ownPresence()); diff != "" {
			t.Errorf("presence after rename (-want +got):\n%s", diff)
		}
	})
}
