package storage

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

func TestFilterOnlySQL(t *testing.T) {
	tests := []struct {
		name  string
		preds []func(*entsql.Selector)
		want  string
	}{
		{"none", nil, `SELECT "id" FROM "jobs" WHERE "jobs"."id" IN ($1, $2)`},
		{"one", []func(*entsql.Selector){entsql.FieldEQ("status", "pending")},
			`SELECT "id" FROM "jobs" WHERE "jobs"."id" IN ($1, $2) AND ("jobs"."status" = $3) IS TRUE`},
		{"two", []func(*entsql.Selector){entsql.FieldEQ("status", "sending"), entsql.FieldEQ("token", "t")},
			`SELECT "id" FROM "jobs" WHERE "jobs"."id" IN ($1, $2) AND ("jobs"."status" = $3 AND "jobs"."token" = $4) IS TRUE`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := entsql.Dialect(dialect.Postgres).Select("id").From(entsql.Table("jobs"))
			entsql.FieldIn("id", "a", "b")(s)
			FilterOnly(tt.preds...)(s)
			if got, _ := s.Query(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestFilterOnlyPlansByPrimaryKey is the reason for FilterOnly, on a real
// PostgreSQL: a temporary table is never analyzed, like a queue table with
// autovacuum off. Claiming ids among 20,000 pending rows goes through the partial
// index of pending rows when the status is a plain condition, and through the
// primary key when it is a filter; both select the same rows. (Rows of 500 bytes,
// like a message's: on a table of a few pages a sequential scan is as good.)
func TestFilterOnlyPlansByPrimaryKey(t *testing.T) {
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(t.Context()) // temporary tables live in one session
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{
		`CREATE TEMP TABLE claims (id text PRIMARY KEY, status text NOT NULL, at bigint NOT NULL, body text NOT NULL)`,
		`CREATE INDEX ON claims (status, at) WHERE status = 'pending'`,
		`INSERT INTO claims SELECT 'c' || i, 'pending', i, repeat('x', 500) FROM generate_series(1, 20000) i`,
	} {
		if _, err := conn.ExecContext(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	ids := make([]any, 300)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%d", 1+i*61)
	}
	claim := func(preds ...func(*entsql.Selector)) (plan string, n int) {
		s := entsql.Dialect(dialect.Postgres).Select("id").From(entsql.Table("claims"))
		entsql.FieldIn("id", ids...)(s)
		for _, p := range preds {
			p(s)
		}
		query, args := s.Query()
		rows, err := conn.QueryContext(t.Context(), "EXPLAIN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, line)
		}
		rows.Close()
		if err := conn.QueryRowContext(t.Context(), "SELECT count(*) FROM ("+query+") c", args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n"), n
	}
	pending := entsql.FieldEQ("status", "pending")
	plain, plainN := claim(pending)
	filtered, filteredN := claim(FilterOnly(pending))
	if !strings.Contains(plain, "claims_status_at_idx") {
		t.Logf("the plain claim no longer uses the partial index (PostgreSQL plans it better now):\n%s", plain)
	}
	if !strings.Contains(filtered, "claims_pkey") {
		t.Errorf("the filtered claim does not use the primary key:\n%s", filtered)
	}
	if plainN != len(ids) || filteredN != len(ids) {
		t.Errorf("rows: plain %d, filtered %d, want %d", plainN, filteredN, len(ids))
	}
}
