package storage

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A transaction begun with InIndexOrder reads the head of a queue from the index
// in the queue's order and stops at its limit, on a table never analyzed (a
// temporary one, like a queue table with autovacuum off) with 40,000 rows
// pending. The control, the same read in a plain transaction, reads every
// pending row through the other partial index and sorts them. Both read the same
// rows.
func TestInIndexOrderReadsTheHeadFromTheIndex(t *testing.T) {
	pg := os.Getenv("TEST_DATABASE_URL")
	if pg == "" {
		t.Skip("TEST_DATABASE_URL not set")
	}
	ctx := context.Background()
	client, err := OpenPool(pg, 1) // one session: the temporary table lives in it
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, stmt := range []string{
		`CREATE TEMP TABLE queue (id text PRIMARY KEY, at bigint NOT NULL, created bigint NOT NULL, next bigint NOT NULL,
			done bigint, dead bigint` + spareColumns + `)`,
		`CREATE INDEX queue_at ON queue (at, created) WHERE done IS NULL AND dead IS NULL`,
		`CREATE INDEX queue_next ON queue (next) WHERE done IS NULL AND dead IS NULL`,
		`INSERT INTO queue (id, at, created, next, done) SELECT 'q' || i, i / 4, i, i, CASE WHEN i <= 20000 THEN i END
			FROM generate_series(1, 60000) i`,
	} {
		if _, err := client.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	const head = `SELECT id FROM queue WHERE done IS NULL AND dead IS NULL AND next <= 50000 ORDER BY at, created, id LIMIT 500`
	read := func(ctx context.Context) (plan string, ids []string) {
		tx, err := client.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		rows, err := tx.QueryContext(ctx, "EXPLAIN "+head)
		plan = planOf(t, rows, err)
		rows, err = tx.QueryContext(ctx, head)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return plan, ids
	}
	plain, plainIDs := read(ctx)
	ordered, orderedIDs := read(InIndexOrder(ctx))
	// A Sort node sorts all it reads; an Incremental Sort only ties of the index's order.
	sorts := regexp.MustCompile(`(?m)(^|->  )Sort  \(`)
	if !sorts.MatchString(plain) {
		t.Logf("the plain read no longer sorts (PostgreSQL plans it better now):\n%s", plain)
	}
	if !strings.Contains(ordered, "Index Scan using queue_at ") || sorts.MatchString(ordered) {
		t.Errorf("the read in index order does not come from queue_at in order:\n%s", ordered)
	}
	if len(orderedIDs) != 500 || orderedIDs[0] != "q20001" {
		t.Errorf("read %d rows from %v, want 500 from q20001", len(orderedIDs), orderedIDs[:min(1, len(orderedIDs))])
	}
	if diff := cmp.Diff(plainIDs, orderedIDs); diff != "" {
		t.Errorf("the two reads differ (-plain +ordered):\n%s", diff)
	}
}
