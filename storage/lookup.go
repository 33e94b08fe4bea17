package storage

import (
	"fmt"
	"slices"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// LookupEach narrows a query to the rows whose columns cols hold one of tuples
// (a value per column each), a given tuple once. cols must be the columns of a
// unique index, which finds each tuple's row. Use it as a query's modifier.
//
// On PostgreSQL each tuple is looked up on its own: the query becomes a LATERAL
// join of the tuples (one text array per column) with the original query limited
// to one row, which stands in for the table under its own name, so the columns
// ent selects and scans stay as they are. An equality on every column of a
// unique index is the one estimate PostgreSQL makes without statistics, so each
// lookup is an index probe whatever the table's statistics say. Written as
// cols IN (...), with the table's statistics missing (autovacuum off, or a table
// that filled up since its last ANALYZE), PostgreSQL read every row of the
// workspace through another index: 20-100 ms for 500 acks among 60,000 messages
// against 7 ms. Elsewhere (SQLite) it is (cols) IN (VALUES ...).
func LookupEach(cols []string, tuples [][]string) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		tuples := distinctTuples(tuples)
		switch {
		case len(tuples) == 0:
			s.Where(entsql.False())
		case s.Dialect() == dialect.Postgres:
			one, table := s.Clone(), s.TableName()
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = fmt.Sprintf("k%d", i)
				one.Where(entsql.ExprP(s.C(c) + " = k." + names[i]))
			}
			// The limit also keeps PostgreSQL from flattening the lookup into a
			// join it would plan from the statistics.
			one.Limit(1)
			from := entsql.ExprFunc(func(b *entsql.Builder) {
				b.WriteString("unnest(")
				for i := range cols {
					column := make([]string, len(tuples))
					for j, t := range tuples {
						column[j] = t[i]
					}
					if i > 0 {
						b.Comma()
					}
					b.Arg(column).WriteString("::text[]")
				}
				b.WriteString(") AS k(" + strings.Join(names, ", ") + ") CROSS JOIN LATERAL ")
				b.Wrap(func(b *entsql.Builder) { b.Join(one) })
				b.WriteString(" AS ").Ident(table)
			})
			*s = *entsql.Dialect(s.Dialect()).Select(s.SelectedColumns()...).FromExpr(from)
		default:
			s.Where(entsql.P(func(b *entsql.Builder) {
				b.Wrap(func(b *entsql.Builder) {
					for i, c := range cols {
						if i > 0 {
							b.Comma()
						}
						b.WriteString(s.C(c))
					}
				})
				b.WriteString(" IN (VALUES ")
				for j, t := range tuples {
					if j > 0 {
						b.Comma()
					}
					b.Wrap(func(b *entsql.Builder) {
						for i, v := range t {
							if i > 0 {
								b.Comma()
							}
							b.Arg(v)
						}
					})
				}
				b.WriteString(")")
			}))
		}
	}
}

// distinctTuples returns tuples without repeats, in their first order.
func distinctTuples(tuples [][]string) [][]string {
	seen := make(map[string]bool, len(tuples))
	out := make([][]string, 0, len(tuples))
	for _, t := range tuples {
		k := strings.Join(t, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, slices.Clone(t))
		}
	}
	return out
}
