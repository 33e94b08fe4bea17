// Package storagetest gives package tests a migrated embedded database.
package storagetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage"
)

// SQLite opens a new, migrated SQLite database in t's temporary directory and
// closes it when t ends. path is the database file, for a test that opens a
// connection of its own beside the client.
func SQLite(t testing.TB) (client *ent.Client, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "test.db")
	url := "sqlite://" + path
	client, err := storage.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if err := storage.Migrate(context.Background(), client, url); err != nil {
		t.Fatal(err)
	}
	return client, path
}
