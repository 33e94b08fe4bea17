// Package storage opens the database behind the ent client: SQLite (modernc, no cgo)
// for the embedded default and PostgreSQL (pgx) in production, and migrates it.
package storage

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/switchboardhq/switchboard/ent"
	_ "github.com/switchboardhq/switchboard/ent/runtime" // schema hooks and interceptors
)

// Open connects to the database named by rawURL: "sqlite:///abs/path.db",
// "sqlite://relative.db", "sqlite://:memory:" or "postgres://...".
func Open(rawURL string) (*ent.Client, error) {
	drv, err := openDriver(rawURL)
	if err != nil {
		return nil, err
	}
	return ent.NewClient(ent.Driver(classifyingDriver{drv})), nil
}

func openDriver(rawURL string) (*entsql.Driver, error) {
	switch {
	case strings.HasPrefix(rawURL, "sqlite://"):
		path := strings.TrimPrefix(rawURL, "sqlite://")
		if path == "" {
			return nil, fmt.Errorf("storage: sqlite URL %q names no file", rawURL)
		}
		var dsn string
		if path == ":memory:" {
			// One shared in-memory database per process, kept alive by the pool.
			dsn = "file:switchboard?mode=memory&cache=shared&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)"
		} else {
			if dir := filepath.Dir(path); dir != "." {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, fmt.Errorf("storage: %w", err)
				}
			}
			dsn = "file:" + path + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		}
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("storage: open sqlite: %w", err)
		}
		// SQLite has one writer. One connection serializes writers in Go instead of in
		// SQLite's busy-wait loop, whose sleeps turn contention into second-long stalls.
		db.SetMaxOpenConns(1)
		db.SetConnMaxLifetime(0)
		return entsql.OpenDB(dialect.SQLite, db), nil
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		if _, err := url.Parse(rawURL); err != nil {
			return nil, fmt.Errorf("storage: bad postgres URL: %w", err)
		}
		db, err := sql.Open("pgx", rawURL)
		if err != nil {
			return nil, fmt.Errorf("storage: open postgres: %w", err)
		}
		db.SetMaxOpenConns(20)
		db.SetMaxIdleConns(20)
		db.SetConnMaxIdleTime(5 * time.Minute)
		return entsql.OpenDB(dialect.Postgres, db), nil
	default:
		return nil, fmt.Errorf("storage: unsupported database URL %q (want sqlite://... or postgres://...)", redact(rawURL))
	}
}

// migrationLock is the PostgreSQL advisory lock key that serializes migrations.
const migrationLock = 0x5357_4244 // "SWBD"

// Migrate brings the schema of the database at rawURL up to date. On PostgreSQL it
// holds an advisory lock while it works, so that any number of replicas may start
// together: the first migrates, the others wait and then find nothing to do.
func Migrate(ctx context.Context, client *ent.Client, rawURL string) error {
	if !strings.HasPrefix(rawURL, "postgres") {
		if err := client.Schema.Create(ctx); err != nil {
			return fmt.Errorf("storage: migrate: %w", err)
		}
		return nil
	}
	// The lock belongs to this transaction's connection and ends with it.
	tx, err := client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("storage: migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
		return fmt.Errorf("storage: migration lock: %w", err)
	}
	if err := client.Schema.Create(ctx); err != nil {
		return fmt.Errorf("storage: migrate: %w", err)
	}
	return tx.Commit()
}

// redact hides a password in a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
