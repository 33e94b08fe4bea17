package storage

import (
	"database/sql"

	"github.com/switchboardhq/switchboard/ent"
)

// OpenWithDB is OpenPool that also returns the *sql.DB under the client and its
// dialect ("sqlite3" or "postgres", as ent names them), for code that keeps its own
// tables in Switchboard's database through database/sql: the gateway engine's
// whatsmeow_ device store (engine/gateway.OpenStore). Use that DB rather than a
// second sql.Open of the same URL: SQLite has one writer, and its pool here is
// one connection. The client owns the DB; closing the client closes it.
func OpenWithDB(rawURL string, size int) (*ent.Client, *sql.DB, string, error) {
	drv, err := openDriver(rawURL, size)
	if err != nil {
		return nil, nil, "", err
	}
	return ent.NewClient(ent.Driver(classifyingDriver{drv})), drv.DB(), drv.Dialect(), nil
}
