package storage

import (
	"context"

	"entgo.io/ent/dialect"
)

type relaxedKey struct{}

// RelaxedCommit marks ctx so that the transactions begun with it on PostgreSQL
// commit without waiting for their changes to reach the disk (synchronous_commit
// off). A crash may lose the last fraction of a second of such transactions,
// whole and in order, never one that a later ordinary commit followed. Use it for
// work that is redone when it is lost: applying a stored engine event, claiming
// and confirming a dispatch (the wire id keeps a resend from delivering twice),
// fanning out the outbox and recording webhook attempts (delivered at least once).
// Never for what a client was told is accepted.
func RelaxedCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, relaxedKey{}, true)
}

// relax turns synchronous commit off for tx when ctx asks for it.
func relax(ctx context.Context, d dialect.Driver, tx dialect.Tx) error {
	if relaxed, _ := ctx.Value(relaxedKey{}).(bool); !relaxed || d.Dialect() != dialect.Postgres {
		return nil
	}
	return tx.Exec(ctx, "SET LOCAL synchronous_commit = off", []any{}, nil)
}
