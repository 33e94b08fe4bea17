// Package jobstest fills a database for tests and benchmarks of the jobs.
package jobstest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/webhook"
)

// SeedRetained writes n records of every kind the prune removes, in workspace
// ws: idempotency keys, fanned-out events, engine events (even ones applied,
// odd ones given up, all of subject "seeded"), and finished deliveries of the
// webhook hook with two attempts each. stamp gives record i's time (its
// creation, fan-out, application, giving up or last attempt) for a kind whose
// retention is keep. ctx must allow writing any workspace's rows.
func SeedRetained(ctx context.Context, c *ent.Client, ws, hook string, n int, stamp func(i int, keep time.Duration) time.Time) error {
	const chunk = 500
	data := json.RawMessage(`{}`)
	for base := 0; base < n; base += chunk {
		var (
			keys     []*ent.IdempotencyKeyCreate
			events   []*ent.EventCreate
			inbox    []*ent.InboxEventCreate
			dlvs     []*ent.DeliveryCreate
			attempts []*ent.DeliveryAttemptCreate
		)
		for i := base; i < min(base+chunk, n); i++ {
			keys = append(keys, c.IdempotencyKey.Create().SetWorkspaceID(ws).SetKey(fmt.Sprintf("seeded-%d", i)).
				SetRequestHash("h").SetMessageID("m").SetResponse([]byte("{}")).SetCreatedAt(stamp(i, jobs.KeepIdempotencyKeys)))
			events = append(events, c.Event.Create().SetWorkspaceID(ws).SetType(webhook.EventMessageDelivered).SetData(data).
				SetFannedOutAt(stamp(i, jobs.KeepEvents)))
			ev := c.InboxEvent.Create().SetWorkspaceID(ws).SetDedupeKey(fmt.Sprintf("seeded-%d", i)).SetType("ack").
				SetSubject("seeded").SetPayload(data).SetAt(stamp(i, jobs.KeepEvents))
			if i%2 == 0 {
				ev.SetAppliedAt(stamp(i, jobs.KeepEvents))
			} else {
				ev.SetDeadAt(stamp(i, jobs.KeepDeliveries)).SetLastError("given up")
			}
			inbox = append(inbox, ev)
			id, ended := fmt.Sprintf("dlv_seeded%08d", i), stamp(i, jobs.KeepDeliveries)
			dlvs = append(dlvs, c.Delivery.Create().SetID(id).SetWorkspaceID(ws).SetWebhookID(hook).SetEventID("e").
				SetEventType(webhook.EventMessageDelivered).SetPayload(data).SetStatus(string(delivery.Failed)).SetAttempts(2).
				SetCreatedAt(ended).SetUpdatedAt(ended))
			for k := 1; k <= 2; k++ {
				attempts = append(attempts, c.DeliveryAttempt.Create().SetWorkspaceID(ws).SetDeliveryID(id).
					SetWebhookID(hook).SetNumber(k).SetAt(ended).SetLatencyMs(1).SetSuccess(false))
			}
		}
		for _, create := range []func(context.Context) error{
			c.IdempotencyKey.CreateBulk(keys...).Exec,
			c.Event.CreateBulk(events...).Exec,
			c.InboxEvent.CreateBulk(inbox...).Exec,
			c.Delivery.CreateBulk(dlvs...).Exec,
			c.DeliveryAttempt.CreateBulk(attempts...).Exec,
		} {
			if err := create(ctx); err != nil {
				return fmt.Errorf("jobstest: seed: %w", err)
			}
		}
	}
	return nil
}
