package storage

import "context"

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

// relaxed returns the setting ctx asks a PostgreSQL transaction for, if any.
func relaxed(ctx context.Context) []string {
	if on, _ := ctx.Value(relaxedKey{}).(bool); on {
		return []string{"synchronous_commit", "off"}
	}
	return nil
}
