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

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard"
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
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := "sb_migrate_" + strings.ToLower(switchboard.RandomToken(6))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	u, _ := url.Parse(base)
	u.Path = "/" + name
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
