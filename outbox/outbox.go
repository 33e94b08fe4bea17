// Package outbox records events in the same transaction as the change that caused
// them. A job later fans each recorded event out to the workspace's webhooks.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboardhq/switchboard/ent"
)

// Record writes one event of type typ with data (marshalled to JSON) through tx.
// The event belongs to the workspace of the viewer in ctx.
func Record(ctx context.Context, tx *ent.Tx, typ string, data any) error {
	return RecordFor(ctx, tx, "", typ, data)
}

// RecordFor is Record with the workspace named explicitly, for callers that may run
// with the System viewer. An empty workspaceID means the viewer's.
func RecordFor(ctx context.Context, tx *ent.Tx, workspaceID, typ string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("outbox: marshal %s: %w", typ, err)
	}
	c := tx.Event.Create().SetType(typ).SetData(raw)
	if workspaceID != "" {
		c.SetWorkspaceID(workspaceID)
	}
	if err := c.Exec(ctx); err != nil {
		return fmt.Errorf("outbox: record %s: %w", typ, err)
	}
	return nil
}
