package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// Store is whatsmeow's device store (identity keys, sessions, pre-keys, app state,
// contacts, LID map, message secrets) kept in Switchboard's own database, in
// tables prefixed whatsmeow_. One Store serves every gateway engine of a process.
type Store struct {
	container *sqlstore.Container
	dialect   string
	db        *sql.DB
	// pruned is when the sent messages were last pruned (see pruneSent).
	pruneMu sync.Mutex
	pruned  time.Time
}

// upgradeLock is the PostgreSQL advisory lock key that serializes the upgrade of
// whatsmeow's tables across replicas starting together.
const upgradeLock = 0x5357_574d // "SWWM"

// OpenStore wraps db (which Switchboard opened and keeps owning: the Store never
// closes it) in whatsmeow's sqlstore and creates or upgrades the whatsmeow_
// tables. dialect is "sqlite" (modernc; the DSN must enable foreign keys with
// _pragma=foreign_keys(1)) or "postgres"/"pgx".
func OpenStore(ctx context.Context, db *sql.DB, dialect string) (*Store, error) {
	d := strings.ToLower(dialect)
	switch {
	case strings.HasPrefix(d, "sqlite"):
		d = "sqlite3"
	case strings.HasPrefix(d, "postgres"), d == "pgx":
		d = "postgres"
	default:
		return nil, fmt.Errorf("gateway: unsupported store dialect %q (want sqlite or postgres)", dialect)
	}
	c := sqlstore.NewWithDB(db, d, waLog.Noop)
	if d == "postgres" {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("gateway: store: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", upgradeLock); err != nil {
			return nil, fmt.Errorf("gateway: store upgrade lock: %w", err)
		}
		defer func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", upgradeLock)
		}()
	}
	if err := c.Upgrade(ctx); err != nil {
		return nil, fmt.Errorf("gateway: upgrade whatsmeow tables: %w", err)
	}
	s := &Store{container: c, dialect: d, db: db}
	if err := s.upgradeOwn(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// device returns the stored device of jid (its AD-JID, as DeviceJID reports it),
// or a new, unpaired one when jid is empty. A jid the store does not hold is an
// error: the device was logged out or deleted.
func (s *Store) device(ctx context.Context, jid string) (*store.Device, error) {
	if jid == "" {
		return s.container.NewDevice(), nil
	}
	j, err := types.ParseJID(jid)
	if err != nil {
		return nil, fmt.Errorf("gateway: bad device jid %q: %w", jid, err)
	}
	dev, err := s.container.GetDevice(ctx, j)
	if err != nil {
		return nil, fmt.Errorf("gateway: load device %s: %w", jid, err)
	}
	if dev == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoDevice, jid)
	}
	return dev, nil
}

// Devices lists the JIDs of the devices the store holds.
func (s *Store) Devices(ctx context.Context) ([]string, error) {
	devs, err := s.container.GetAllDevices(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(devs))
	for _, d := range devs {
		if d.ID != nil {
			out = append(out, d.ID.String())
		}
	}
	return out, nil
}

// DeleteDevice forgets a device, all its keys, its kept sent messages and its
// chats' timers (after a logout the engine does this itself). Deleting a
// device the store does not hold does nothing.
func (s *Store) DeleteDevice(ctx context.Context, jid string) error {
	dev, err := s.device(ctx, jid)
	if err != nil {
		if errors.Is(err, ErrNoDevice) {
			return nil
		}
		return err
	}
	if err := dev.Delete(ctx); err != nil {
		return err
	}
	return s.forgetDevice(ctx, jid)
}
