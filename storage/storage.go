// Package storage opens the database behind the ent client: SQLite (modernc, no cgo)
// for the embedded default and PostgreSQL (pgx) in production, and migrates it.
package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	atlas "ariga.io/atlas/sql/schema"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	_ "github.com/switchboardhq/switchboard/ent/runtime" // schema hooks and interceptors
)

// Open connects to the database named by rawURL: "sqlite:///abs/path.db",
// "sqlite://relative.db", "sqlite://:memory:" or "postgres://...".
func Open(rawURL string) (*ent.Client, error) {
	return OpenPool(rawURL, DefaultPool)
}

// DefaultPool is how many connections a PostgreSQL client opens at most.
const DefaultPool = 20

// OpenPool is Open with at most size connections to PostgreSQL (SQLite always
// has one: it has one writer).
func OpenPool(rawURL string, size int) (*ent.Client, error) {
	drv, err := openDriver(rawURL, size)
	if err != nil {
		return nil, err
	}
	return ent.NewClient(ent.Driver(classifyingDriver{drv})), nil
}

// IsPostgres reports whether rawURL names a PostgreSQL database.
func IsPostgres(rawURL string) bool {
	return strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://")
}

// Separate reports whether two clients of rawURL are separate pools of one
// database; for SQLite they would be two writers competing for one file.
func Separate(rawURL string) bool { return !strings.HasPrefix(rawURL, "sqlite://") }

func openDriver(rawURL string, size int) (*entsql.Driver, error) {
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
		cfg, err := pgx.ParseConfig(rawURL) // its errors leave the password out
		if err != nil {
			return nil, fmt.Errorf("storage: bad postgres URL: %w", err)
		}
		// A plan per execution, from the table as it is: PostgreSQL otherwise caches
		// a generic plan after five executions and keeps it until the table is
		// analyzed, and a plan made while a queue table was nearly empty reads the
		// whole table once it has grown (an ack's update by id went through the
		// workspace's index: 35,000 buffers and 16 ms a call in a 10 s burst, with
		// autovacuum off). The URL may set another mode.
		if _, set := cfg.RuntimeParams["plan_cache_mode"]; !set {
			cfg.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
		}
		db := stdlib.OpenDB(*cfg)
		db.SetMaxOpenConns(size)
		db.SetMaxIdleConns(size)
		db.SetConnMaxIdleTime(5 * time.Minute)
		return entsql.OpenDB(dialect.Postgres, db), nil
	default:
		return nil, fmt.Errorf("storage: unsupported database URL %q (want sqlite://... or postgres://...)", switchboard.RedactURL(rawURL))
	}
}

// retiredIndexes are indexes earlier schemas created that the current one no
// longer declares: the standalone workspace_id indexes of tables whose own
// indexes lead with workspace_id. The migration drops them by name. (Letting
// it drop every undeclared index is no option: it sees the partial indexes'
// predicates, which PostgreSQL stores rewritten, as changed, and would drop
// and rebuild them at every start, on live tables.)
var retiredIndexes = []string{"message_workspace_id", "inboxevent_workspace_id", "chat_workspace_id",
	"contact_workspace_id", "chatmember_workspace_id",
	// status left the messages' indexes for queued (see the Message schema).
	"message_status_send_at", "message_campaign_id_status"}

// keepPartialIndexes leaves out of a migration the changes that only touch an
// index's attributes. PostgreSQL stores a partial index's predicate rewritten
// (casts, parentheses, IN as = ANY), so the migration would otherwise see every
// partial index as changed and drop and build it again at every start, on
// live tables (and deadlock with the work running on them). A predicate that
// really changes goes with a new index name.
func keepPartialIndexes(next schema.Differ) schema.Differ {
	return schema.DiffFunc(func(current, desired *atlas.Schema) ([]atlas.Change, error) {
		changes, err := next.Diff(current, desired)
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(changes, func(c atlas.Change) bool {
			mt, ok := c.(*atlas.ModifyTable)
			if !ok {
				return false
			}
			mt.Changes = slices.DeleteFunc(mt.Changes, func(c atlas.Change) bool {
				mi, ok := c.(*atlas.ModifyIndex)
				return ok && mi.Change == atlas.ChangeAttr
			})
			return len(mt.Changes) == 0
		}), nil
	})
}

// dropRetired drops the retired indexes that still exist.
func dropRetired(ctx context.Context, client *ent.Client) error {
	for _, name := range retiredIndexes {
		if _, err := client.ExecContext(ctx, "DROP INDEX IF EXISTS "+name); err != nil {
			return fmt.Errorf("storage: drop retired index %s: %w", name, err)
		}
	}
	return nil
}

// scopeInboxSubjects rewrites the subjects of the inbox events still to apply
// that were stored bare ("message:<key>"), before events were ordered within
// their workspace and engine, into their order keys ("ws:<workspace>|<engine>|
// message:<key>", engine.OrderKey; the engine's id is the payload's), so that
// they keep their order with the events stored from now on and another
// workspace's stuck event holds them up no longer. Applied and dead events keep
// theirs: nothing orders them any more. A second run finds nothing to do.
func scopeInboxSubjects(ctx context.Context, client *ent.Client, postgres bool) error {
	engineID := "json_extract(CAST(payload AS TEXT), '$.engineId')"
	if postgres {
		engineID = "payload->>'engineId'"
	}
	_, err := client.ExecContext(ctx, "UPDATE inbox_events SET subject = '"+engine.OrderKeyPrefix+"' || workspace_id || '|' || "+
		"COALESCE("+engineID+", '') || '|' || subject "+
		"WHERE applied_at IS NULL AND dead_at IS NULL AND subject NOT LIKE '"+engine.OrderKeyPrefix+"%'")
	if err != nil {
		return fmt.Errorf("storage: scope inbox subjects: %w", err)
	}
	return nil
}

// markQueued sets queued on the pending and sending messages of a database
// whose queue index was still keyed by status (message_status_send_at): once,
// before that index is dropped, through it.
func markQueued(ctx context.Context, client *ent.Client, postgres bool) error {
	exists := "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'message_status_send_at'"
	if postgres {
		exists = "SELECT count(*) FROM pg_class WHERE relname = 'message_status_send_at' AND relkind = 'i'"
	}
	rows, err := client.QueryContext(ctx, exists)
	if err != nil {
		return fmt.Errorf("storage: mark queued messages: %w", err)
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("storage: mark queued messages: %w", err)
		}
	}
	rows.Close()
	if n == 0 {
		return nil
	}
	if _, err := client.ExecContext(ctx, "UPDATE messages SET queued = true WHERE status IN ('pending', 'sending')"); err != nil {
		return fmt.Errorf("storage: mark queued messages: %w", err)
	}
	return nil
}

// migrationLock is the PostgreSQL advisory lock key that serializes migrations.
const migrationLock = 0x5357_4244 // "SWBD"

// Migrate brings the schema of the database at rawURL up to date and drops the
// retired indexes, and rewrites data an earlier version stored in a form this one
// no longer reads (scopeInboxSubjects). On PostgreSQL it
// holds an advisory lock while it works, so that any number of replicas may start
// together: the first migrates, the others wait and then find nothing to do.
func Migrate(ctx context.Context, client *ent.Client, rawURL string) error {
	if !strings.HasPrefix(rawURL, "postgres") {
		if err := client.Schema.Create(ctx, schema.WithDiffHook(keepPartialIndexes)); err != nil {
			return fmt.Errorf("storage: migrate: %w", err)
		}
		if err := markQueued(ctx, client, false); err != nil {
			return err
		}
		if err := dropRetired(ctx, client); err != nil {
			return err
		}
		return scopeInboxSubjects(ctx, client, false)
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
	if err := client.Schema.Create(ctx, schema.WithDiffHook(keepPartialIndexes)); err != nil {
		return fmt.Errorf("storage: migrate: %w", err)
	}
	if err := markQueued(ctx, client, true); err != nil {
		return err
	}
	if err := dropRetired(ctx, client); err != nil {
		return err
	}
	if err := scopeInboxSubjects(ctx, client, true); err != nil {
		return err
	}
	if err := installWakeTriggers(ctx, func(ctx context.Context, query string, args ...any) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	}); err != nil {
		return err
	}
	return tx.Commit()
}
