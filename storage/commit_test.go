package storage

import (
	"context"
	"os"
	"testing"
)

// A relaxed transaction on PostgreSQL commits without waiting for the disk; any
// other keeps the server's setting. On SQLite the mark changes nothing.
func TestRelaxedCommit(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + t.TempDir() + "/relaxed.db"}
	if pg := os.Getenv("TEST_DATABASE_URL"); pg != "" {
		urls["postgres"] = pg
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			client, err := Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			setting := func(ctx context.Context) string {
				tx, err := client.Tx(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback() }()
				if name != "postgres" {
					return "n/a"
				}
				rows, err := tx.QueryContext(ctx, "SHOW synchronous_commit")
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var v string
				for rows.Next() {
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
				}
				return v
			}
			ctx := context.Background()
			relaxed, plain := setting(RelaxedCommit(ctx)), setting(ctx)
			if name == "postgres" && (relaxed != "off" || plain == "off") {
				t.Errorf("synchronous_commit: relaxed %q, plain %q; want off and the server's", relaxed, plain)
			}
		})
	}
}
