// Package storagetest gives package tests a database of their own: a migrated
// embedded one, or a fresh one on TEST_DATABASE_URL's PostgreSQL server.
package storagetest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, for creating the database

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage"
)

// SQLite opens a new, migrated SQLite database in t's temporary directory and
// closes it when t ends. path is the database file, for a test that opens a
// connection of its own beside the client.
func SQLite(t testing.TB) (client *ent.Client, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "test.db")
	return Client(t, "sqlite://"+path), path
}

// Client opens the database of url, migrated, and closes it when t ends.
func Client(t testing.TB, url string) *ent.Client {
	t.Helper()
	client, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if err := storage.Migrate(context.Background(), client, url); err != nil {
		t.Fatal(err)
	}
	return client
}

// DatabaseURL is a database of t's own: SQLite in a temporary directory, or,
// when TEST_DATABASE_URL is set, a fresh database on its PostgreSQL server,
// dropped when t ends.
func DatabaseURL(t testing.TB) string {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return "sqlite://" + t.TempDir() + "/switchboard.db"
	}
	// A fresh database per Env, dropped afterwards.
	name := "sb_test_" + strings.ReplaceAll(switchboard.RandomToken(8), "-", "")
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("storagetest: create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err == nil {
			_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			admin.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storagetest: TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
