package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/migrate"
	"github.com/switchboardhq/switchboard/viewer"
)

func TestIsUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"reset", fmt.Errorf("query: %w", syscall.ECONNRESET), true},
		{"bad conn", driver.ErrBadConn, true},
		{"closed pool", errors.New("sql: database is closed"), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"too many clients", &pgconn.PgError{Code: "53300"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"deadlock", &pgconn.PgError{Code: "40P01"}, true},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"bad utf-8", &pgconn.PgError{Code: "22021"}, false},
		{"sqlite busy", errors.New("database is locked (5) (SQLITE_BUSY)"), true},
		{"no rows", sql.ErrNoRows, false},
		{"canceled", context.Canceled, false},
	}
	for _, tt := range tests {
		if got := IsUnavailable(tt.err); got != tt.want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
		if got := errors.Is(classify(tt.err), switchboard.ErrUnavailable); got != tt.want {
			t.Errorf("%s: classified as unavailable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Replicas that start together on an empty PostgreSQL database all come up: the
// advisory lock serializes their migrations.
func TestConcurrentMigrations(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	u, _ := url.Parse(scratchDatabase(t))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client, err := Open(u.String())
			if err != nil {
				errs[i] = err
				return
			}
			defer client.Close()
			errs[i] = Migrate(context.Background(), client, u.String())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}

// A retired index (the standalone workspace_id index of a table whose own
// indexes lead with workspace_id) is dropped by the next migration, on both
// databases; declared ones stay, and on PostgreSQL a second migration rebuilds
// none of them (a start must not drop and build indexes on live tables).
func TestMigrateDropsRetiredIndexes(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + t.TempDir() + "/indexes.db"}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		urls["postgres"] = scratchDatabase(t)
	}
	for name, raw := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client, err := Open(raw)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			one := func(query string) string {
				t.Helper()
				rows, err := client.QueryContext(ctx, query)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var out string
				for rows.Next() {
					if err := rows.Scan(&out); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			if err := Migrate(ctx, client, raw); err != nil {
				t.Fatal(err)
			}
			if _, err := client.ExecContext(ctx, `CREATE INDEX message_workspace_id ON messages (workspace_id)`); err != nil {
				t.Fatal(err)
			}
			if err := Migrate(ctx, client, raw); err != nil {
				t.Fatal(err)
			}
			names := `SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master
				WHERE type = 'index' AND name LIKE 'message_workspace_id%' ORDER BY name)`
			oids := ""
			if name == "postgres" {
				names = `SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE indexname LIKE 'message_workspace_id%'`
				oids = `SELECT string_agg(indexrelid::text, ',' ORDER BY indexrelid) FROM pg_index
					JOIN pg_class c ON c.oid = indrelid WHERE c.relnamespace = 'public'::regnamespace`
			}
			want := "message_workspace_id_created_at,message_workspace_id_engine_id_created_at,message_workspace_id_origin_created_at," +
				"message_workspace_id_to_created_at,message_workspace_id_to_pinned_until,message_workspace_id_wa_serialized"
			if got := one(names); got != want {
				t.Errorf("indexes after migrating:\n got %s\nwant %s", got, want)
			}
			if oids == "" {
				return
			}
			before := one(oids)
			if err := Migrate(ctx, client, raw); err != nil {
				t.Fatal(err)
			}
			if after := one(oids); after != before {
				t.Errorf("a second migration rebuilt indexes:\nbefore %s\n after %s", before, after)
			}
		})
	}
}

// scratchDatabase creates an empty database on TEST_DATABASE_URL's server for
// the test, dropped when it ends, and returns its URL.
func scratchDatabase(t *testing.T) string {
	base := os.Getenv("TEST_DATABASE_URL")
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	name := "sb_storage_" + strings.ToLower(switchboard.RandomToken(6))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); admin.Close() })
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

// A database whose queue index was keyed by status (message_status_send_at)
// gets queued set on its pending and sending messages, once, and loses that
// index and the campaign's (campaign_id, status), on both databases.
func TestMigrateMarksQueuedMessages(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + t.TempDir() + "/queued.db"}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		urls["postgres"] = scratchDatabase(t)
	}
	for name, raw := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client, err := Open(raw)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			if err := Migrate(ctx, client, raw); err != nil {
				t.Fatal(err)
			}
			// The schema before: the status index, and rows written without queued.
			for _, q := range []string{
				`CREATE INDEX message_status_send_at ON messages (status, send_at) WHERE status IN ('pending', 'sending')`,
				`CREATE INDEX message_campaign_id_status ON messages (campaign_id, status) WHERE campaign_id IS NOT NULL`,
			} {
				if _, err := client.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			sys := viewer.SystemContext(ctx)
			for i, status := range []string{"pending", "sending", "confirmed", "read"} {
				if err := client.Message.Create().SetID(fmt.Sprintf("msg_%d", i)).SetWorkspaceID("ws").SetTo("1@c.us").
					SetType("text").SetOrigin("scheduled").SetStatus(status).SetQueued(false).Exec(sys); err != nil {
					t.Fatal(err)
				}
			}
			if err := Migrate(ctx, client, raw); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, m := range client.Message.Query().AllX(sys) {
				got[m.Status] = m.Queued
			}
			want := map[string]bool{"pending": true, "sending": true, "confirmed": false, "read": false}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("queued by status (-want +got):\n%s", diff)
			}
			exists := `SELECT count(*) FROM sqlite_master WHERE name IN ('message_status_send_at', 'message_campaign_id_status')`
			if name == "postgres" {
				exists = `SELECT count(*) FROM pg_class WHERE relname IN ('message_status_send_at', 'message_campaign_id_status')`
			}
			rows, err := client.QueryContext(ctx, exists)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := -1
			for rows.Next() {
				_ = rows.Scan(&n)
			}
			if n != 0 {
				t.Errorf("%d of the status indexes are left", n)
			}
		})
	}
}

// No index of the messages holds status, in its columns or its predicate: a
// status move would then write every index instead of being a HOT update.
func TestNoMessageIndexHoldsStatus(t *testing.T) {
	for _, idx := range migrate.MessagesTable.Indexes {
		for _, c := range idx.Columns {
			if c.Name == message.FieldStatus {
				t.Errorf("index %s is on status", idx.Name)
			}
		}
		if a := idx.Annotation; a != nil && strings.Contains(a.Where, "status") {
			t.Errorf("index %s's predicate %q names status", idx.Name, a.Where)
		}
	}
}
