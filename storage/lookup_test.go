package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/go-cmp/cmp"
)

// LookupEach finds the row of each distinct tuple that has one, on both
// backends; on PostgreSQL through the unique index, although the table (a
// temporary one, never analyzed, like a table with autovacuum off) has no
// statistics and another index covers its first column.
func TestLookupEach(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + t.TempDir() + "/lookup.db"}
	if pg := os.Getenv("TEST_DATABASE_URL"); pg != "" {
		urls["postgres"] = pg
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			conn, dia := session(t, url)
			const n = 60000
			fill := fmt.Sprintf(`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %d)
				INSERT INTO lookups (ws, key, mine, at) SELECT 'w' || (i %% 2), 'k' || i, i %% 3 = 0, i FROM g`, n)
			if dia == dialect.Postgres {
				fill = fmt.Sprintf(`INSERT INTO lookups (ws, key, mine, at) SELECT 'w' || (i %% 2), 'k' || i, i %% 3 = 0, i
					FROM generate_series(1, %d) i`, n)
			}
			for _, stmt := range []string{
				`CREATE TEMP TABLE lookups (ws text NOT NULL, key text NOT NULL, mine boolean NOT NULL, at bigint NOT NULL` +
					spareColumns + `)`,
				`CREATE UNIQUE INDEX lookups_ws_key ON lookups (ws, key)`,
				`CREATE INDEX lookups_ws_at ON lookups (ws, at)`,
				fill,
			} {
				if _, err := conn.ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			// The even keys of 1..1200 in workspace w0 (one workspace, as a
			// batch's acks mostly are), some twice, one in the wrong workspace,
			// one missing; only the rows marked mine count.
			var tuples [][]string
			var want []string
			for i := 2; i <= 1200; i += 2 {
				tuples = append(tuples, []string{"w0", fmt.Sprintf("k%d", i)})
				if i%3 == 0 {
					want = append(want, fmt.Sprintf("w0/k%d", i))
				}
			}
			tuples = append(tuples, tuples[:50]...)
			tuples = append(tuples, []string{"w0", "k3"}, []string{"w0", "k999999"})
			query := func(prefix string) (*sql.Rows, error) {
				s := entsql.Dialect(dia).Select("ws", "key").From(entsql.Table("lookups"))
				s.Where(entsql.EQ(s.C("mine"), true))
				LookupEach([]string{"ws", "key"}, tuples)(s)
				q, args := s.Query()
				return conn.QueryContext(ctx, prefix+q, args...)
			}
			rows, err := query("")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var ws, key string
				if err := rows.Scan(&ws, &key); err != nil {
					t.Fatal(err)
				}
				got = append(got, ws+"/"+key)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			slices.Sort(got)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if dia != dialect.Postgres {
				return
			}
			rows, err = query("EXPLAIN ")
			if p := planOf(t, rows, err); !strings.Contains(p, "lookups_ws_key") || strings.Contains(p, "Seq Scan") ||
				strings.Contains(p, "lookups_ws_at") {
				t.Errorf("the lookups do not use the unique index:\n%s", p)
			}
		})
	}
}

func TestLookupEachNone(t *testing.T) {
	for _, d := range []string{dialect.Postgres, dialect.SQLite} {
		s := entsql.Dialect(d).Select("id").From(entsql.Table("t"))
		LookupEach([]string{"a", "b"}, nil)(s)
		if q, _ := s.Query(); !strings.Contains(q, "FALSE") {
			t.Errorf("%s: %s selects rows", d, q)
		}
	}
}

// session opens url and returns one session of it (temporary tables and prepared
// statements live in one) and its dialect, closed when the test ends.
func session(t *testing.T, url string) (*sql.Conn, string) {
	t.Helper()
	client, db, dia, err := OpenWithDB(url, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, dia
}

// spareColumns are 30 text columns, for a table's declaration. Rows much
// narrower than their declared columns make PostgreSQL, without statistics, take
// the table for a few thousand rows; so it took the messages table.
var spareColumns = func() string {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, ", c%d text", i)
	}
	return b.String()
}()

// planOf reads the lines of an EXPLAIN's answer into one text.
func planOf(t *testing.T, rows *sql.Rows, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
