// Package outbox records events in the same transaction as the change that caused
// them. A job later fans each recorded event out to the workspace's webhooks. Only
// events that an enabled webhook of the workspace subscribes to are recorded: the
// rest would be fanned out to no one.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/viewer"
)

// Record writes one event of type typ with data (marshalled to JSON) through tx,
// if a webhook of the workspace wants it. The event belongs to the workspace of the
// viewer in ctx.
func Record(ctx context.Context, tx *ent.Tx, typ string, data any) error {
	return RecordFor(ctx, tx, "", typ, data)
}

// RecordFor is Record with the workspace named explicitly, for callers that may run
// with the System viewer. An empty workspaceID means the viewer's.
func RecordFor(ctx context.Context, tx *ent.Tx, workspaceID, typ string, data any) error {
	if workspaceID == "" {
		v, _ := viewer.FromContext(ctx)
		workspaceID = v.WorkspaceID
	}
	wanted, err := Wants(ctx, tx, workspaceID, typ)
	if err != nil || !wanted {
		return err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("outbox: marshal %s: %w", typ, err)
	}
	if err := tx.Event.Create().SetWorkspaceID(workspaceID).SetType(typ).SetData(raw).Exec(ctx); err != nil {
		return fmt.Errorf("outbox: record %s: %w", typ, err)
	}
	return nil
}

// SubscriptionsTTL is how long the event types a workspace's webhooks want are
// remembered. A change of webhooks made in this process is seen at once (Forget);
// one made by another replica within this time.
const SubscriptionsTTL = 2 * time.Second

// subscriptions remembers, by workspace id, the event types its enabled webhooks
// want. Workspace ids are unique across databases, so one memory serves every
// client of the process.
var subscriptions = struct {
	sync.Mutex
	byWorkspace map[string]subscribed
}{byWorkspace: map[string]subscribed{}}

type subscribed struct {
	types map[string]bool
	until time.Time
}

// Wants reports whether an enabled webhook of the workspace subscribes to typ,
// reading the webhooks through tx when the memory of them is older than
// SubscriptionsTTL.
func Wants(ctx context.Context, tx *ent.Tx, workspaceID, typ string) (bool, error) {
	now := time.Now()
	subscriptions.Lock()
	s, ok := subscriptions.byWorkspace[workspaceID]
	subscriptions.Unlock()
	if ok && now.Before(s.until) {
		return s.types[typ], nil
	}
	lists, err := tx.Webhook.Query().
		Where(webhook.WorkspaceID(workspaceID), webhook.Status("enabled")).
		Select(webhook.FieldEvents).All(viewer.SystemContext(ctx))
	if err != nil {
		return false, fmt.Errorf("outbox: read subscriptions: %w", err)
	}
	s = subscribed{types: map[string]bool{}, until: now.Add(SubscriptionsTTL)}
	for _, w := range lists {
		for _, t := range w.Events {
			s.types[t] = true
		}
	}
	subscriptions.Lock()
	subscriptions.byWorkspace[workspaceID] = s
	subscriptions.Unlock()
	return s.types[typ], nil
}

// Forget drops what is remembered of a workspace's subscriptions; call it when
// its webhooks change.
func Forget(workspaceID string) {
	subscriptions.Lock()
	delete(subscriptions.byWorkspace, workspaceID)
	subscriptions.Unlock()
}
