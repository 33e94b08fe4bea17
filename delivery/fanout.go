package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/event"
	entwebhook "github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// RunFanout turns recorded events into webhook deliveries until ctx is done,
// waiting between passes as p says: with p.Sweep set (a wake.Listener passes
// every replica's inserts to WakeChannel), p.Sweep after a pass that drained
// the events; without it, p.Min while there are events and a doubling poll up
// to p.Max when there are none. Events recorded in this process wake it at
// once. Run fills in p.Wake.
func (svc *Service) RunFanout(ctx context.Context, p poll.Pace) {
	wake := svc.wakeup()
	defer outbox.OnRecorded(wake)()
	p.Wake = wake
	poll.Run(ctx, p, func(ctx context.Context) poll.Outcome {
		found := false
		for ctx.Err() == nil {
			n, err := svc.FanOutOnce(context.WithoutCancel(ctx)) // a batch in hand is finished
			if err != nil && ctx.Err() == nil {
				slog.Error("webhook fan-out failed", "err", err)
				if !found {
					return poll.Failed
				}
			}
			found = found || n > 0
			if n < fanoutBatch || err != nil {
				break
			}
		}
		// A pass that took less than a batch left nothing behind it: with
		// p.Sweep set, the next event recorded wakes the loop (events another
		// replica held and gave back are found by the sweep).
		if found && p.Sweep <= 0 {
			return poll.Found
		}
		return poll.Idle
	})
}

// WakeChannel is the channel that wakes RunFanout, for a wake.Listener to
// signal.
func (svc *Service) WakeChannel() chan<- struct{} { return svc.wakeup() }

// wakeup is the channel that wakes the fan-out, made on first use.
func (svc *Service) wakeup() chan struct{} {
	svc.wakeOnce.Do(func() { svc.wake = make(chan struct{}, 1) })
	return svc.wake
}

const fanoutBatch = 500

// FanOutOnce creates the deliveries of up to one batch of recorded events and
// queues them, in one transaction: it claims the events (on PostgreSQL with FOR
// UPDATE SKIP LOCKED, so that any number of fan-out loops, replicas included, share
// the work without doing any of it twice), reads the enabled webhooks of their
// workspaces once, and inserts every delivery in one statement.
func (svc *Service) FanOutOnce(ctx context.Context) (int, error) {
	// A fan-out a crash loses is done again: its events are still in the outbox.
	sys := viewer.SystemContext(storage.RelaxedCommit(ctx))
	var created []*ent.Delivery
	var claimed int
	err := storage.WithTx(sys, svc.Client, func(tx *ent.Tx) error {
		q := tx.Event.Query().Where(event.FannedOutAtIsNil()).Order(ent.Asc(event.FieldCreatedAt)).Limit(fanoutBatch)
		if svc.rowLocks() {
			q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		events, err := q.All(sys)
		if err != nil || len(events) == 0 {
			return err
		}
		claimed = len(events)
		ids := make([]string, len(events))
		workspaces := map[string]bool{}
		for i, ev := range events {
			ids[i] = ev.ID
			workspaces[ev.WorkspaceID] = true
		}
		if err := tx.Event.Update().Where(event.IDIn(ids...)).SetFannedOutAt(time.Now()).Exec(sys); err != nil {
			return err
		}
		hooks, err := tx.Webhook.Query().
			Where(entwebhook.WorkspaceIDIn(slices.Collect(maps.Keys(workspaces))...), entwebhook.Status(string(wh.StatusEnabled))).All(sys)
		if err != nil {
			return err
		}
		var creates []*ent.DeliveryCreate
		for _, ev := range events {
			for _, hook := range hooks {
				if hook.WorkspaceID != ev.WorkspaceID || !slices.Contains(hook.Events, ev.Type) {
					continue
				}
				c, err := newDelivery(tx, hook.WorkspaceID, hook.ID, ev.ID, ev.Type, ev.CreatedAt, ev.Data)
				if err != nil {
					return err
				}
				creates = append(creates, c)
			}
		}
		if len(creates) == 0 {
			return nil
		}
		created, err = tx.Delivery.CreateBulk(creates...).Save(sys)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fan out: %w", err)
	}
	for _, d := range created {
		if _, err := svc.Queue.Deliver(sys, d.WorkspaceID, d.ID, time.Time{}); err != nil {
			slog.Warn("enqueue delivery failed; the reconciler will retry", "delivery", d.ID, "err", err)
		}
	}
	return claimed, nil
}

// newDelivery prepares a delivery of an event to a webhook; its id is also the id
// of its envelope.
func newDelivery(tx *ent.Tx, workspaceID, webhookID, eventID, typ string, at time.Time, data json.RawMessage) (*ent.DeliveryCreate, error) {
	id := newID()
	payload, err := json.Marshal(wh.Envelope{ID: id, Type: typ, CreatedAt: at.UTC(), Data: data})
	if err != nil {
		return nil, err
	}
	return tx.Delivery.Create().SetID(id).SetWorkspaceID(workspaceID).SetWebhookID(webhookID).SetEventID(eventID).
		SetEventType(typ).SetPayload(payload).SetNextAttemptAt(time.Now()), nil
}

// Redeliver makes a new delivery of the event behind d to the same webhook and
// queues it. The new delivery carries d's envelope unchanged, its id included, so a
// receiver that stores envelope ids (as the spec tells it to) recognises the event.
func (svc *Service) Redeliver(ctx context.Context, d *ent.Delivery) (*ent.Delivery, error) {
	var nd *ent.Delivery
	err := storage.WithTx(ctx, svc.Client, func(tx *ent.Tx) (err error) {
		nd, err = tx.Delivery.Create().SetWebhookID(d.WebhookID).SetEventID(d.EventID).
			SetEventType(d.EventType).SetPayload(d.Payload).SetNextAttemptAt(time.Now()).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := svc.Queue.Deliver(ctx, nd.WorkspaceID, nd.ID, time.Time{}); err != nil {
		slog.Warn("enqueue delivery failed; the reconciler will retry", "delivery", nd.ID, "err", err)
	}
	return nd, nil
}
