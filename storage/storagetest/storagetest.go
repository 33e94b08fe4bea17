// Package storagetest gives tests a database of their own.
package storagetest

import (
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, for creating the database

	"github.com/switchboardhq/switchboard"
)

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

