package storage

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
)

type indexOrderKey struct{}

// InIndexOrder marks ctx so that the transactions begun with it on PostgreSQL
// may neither sort nor bitmap-scan (enable_sort and enable_bitmapscan off for the
// transaction): a query ordered as an index reads its rows from that index in
// order and stops at its limit. Use it for reads of a queue's head, page by page.
//
// Without statistics (autovacuum off, or a queue that filled up since its last
// ANALYZE), PostgreSQL takes the rows of a never-analyzed table that have a
// column NULL for a couple, so it reads them all through the smallest partial
// index and sorts them, which would cost nothing for a couple: with 50,000 inbox
// events pending, the claim's page read took 15 ms and 1,461 buffers, against
// 0.7 ms and 26 buffers from the index in order. Elsewhere (SQLite) it changes
// nothing.
func InIndexOrder(ctx context.Context) context.Context {
	return context.WithValue(ctx, indexOrderKey{}, true)
}

// indexOrder returns the settings ctx asks a PostgreSQL transaction for, if any.
func indexOrder(ctx context.Context) []string {
	if on, _ := ctx.Value(indexOrderKey{}).(bool); on {
		return []string{"enable_sort", "off", "enable_bitmapscan", "off"}
	}
	return nil
}

// setLocal sets what ctx asks of a PostgreSQL transaction (RelaxedCommit,
// InIndexOrder) for tx, in one statement.
func setLocal(ctx context.Context, tx dialect.Tx) error {
	settings := append(relaxed(ctx), indexOrder(ctx)...)
	if len(settings) == 0 {
		return nil
	}
	calls := make([]string, 0, len(settings)/2)
	for i := 0; i < len(settings); i += 2 {
		calls = append(calls, fmt.Sprintf("set_config('%s', '%s', true)", settings[i], settings[i+1]))
	}
	return tx.Exec(ctx, "SELECT "+strings.Join(calls, ", "), []any{}, nil)
}
