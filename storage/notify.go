package storage

import (
	"context"
	"fmt"
)

// WakeChannel is the PostgreSQL channel on which inserts into the work tables
// are announced, with the table's name as the payload (storage/wake listens).
const WakeChannel = "switchboard_wake"

// WakeTables are the tables whose writes wake a worker loop: the inbox's
// events, the webhook events to fan out, and the sandbox network's scheduled
// events and groups. The value is the trigger's events: inserts, and for the
// sandbox's groups the updates too (a group's next due time moves by update).
var WakeTables = map[string]string{
	"inbox_events":   "INSERT",
	"events":         "INSERT",
	"sandbox_events": "INSERT",
	"sandbox_groups": "INSERT OR UPDATE",
}

// installWakeTriggers makes every write of WakeTables notify WakeChannel, once
// per statement: PostgreSQL delivers a notification when its transaction
// commits, folds duplicates of one transaction into one, and drops those of a
// transaction rolled back. With triggers, no writer in any replica can forget
// to announce its rows. It is idempotent and touches no table that has its
// trigger; it runs in Migrate's locked transaction, through exec.
//
// The price: PostgreSQL serializes the commits of notifying transactions (it
// holds a lock on the notification queue until each ends). Measured with
// pgbench, 8 clients of single-row INSERTs on this 2-core machine: 9.4k–10.9k
// tps without the trigger, 4.0k–4.7k with it; bench/compare's schedule and
// lateness rows showed no loss (2,156 vs 1,852 req/s, p99 6.7 vs 7.1 s for
// 10,000 due at once), the server being far below that rate.
func installWakeTriggers(ctx context.Context, exec func(ctx context.Context, query string, args ...any) error) error {
	fn := `CREATE OR REPLACE FUNCTION switchboard_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('` + WakeChannel + `', TG_TABLE_NAME);
	RETURN NULL;
END $$`
	if err := exec(ctx, fn); err != nil {
		return fmt.Errorf("storage: wake function: %w", err)
	}
	for table, events := range WakeTables {
		// Made only when missing: creating a trigger locks the table against
		// writes, which a start must not do to live tables at every start. A
		// trigger whose events change takes a new name, as an index does.
		trigger := table + "_wake"
		create := fmt.Sprintf(`DO $$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '%[1]s' AND tgrelid = '%[2]s'::regclass) THEN
		CREATE TRIGGER %[1]s AFTER %[3]s ON %[2]s FOR EACH STATEMENT EXECUTE FUNCTION switchboard_wake();
	END IF;
END $$`, trigger, table, events)
		if err := exec(ctx, create); err != nil {
			return fmt.Errorf("storage: wake trigger on %s: %w", table, err)
		}
	}
	return nil
}
