// Package outbox records events in the same transaction as the change that caused
// them. A job later fans each recorded event out to the workspace's webhooks. Only
// events that an enabled webhook of the workspace subscribes to are recorded: the
// rest would be fanned out to no one.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/webhook"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
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
	return RecordAll(ctx, tx, []Pending{{WorkspaceID: workspaceID, Type: typ, Data: data}})
}

// Pending is an event for RecordAll to record.
type Pending struct {
	WorkspaceID, Type string
	Data              any // marshalled to JSON
}

// RecordAll records, through tx and in one insert, the events of evs that a
// webhook of their workspace wants.
func RecordAll(ctx context.Context, tx *ent.Tx, evs []Pending) error {
	var creates []*ent.EventCreate
	for _, ev := range evs {
		wanted, err := Wants(ctx, tx.Webhook, ev.WorkspaceID, ev.Type)
		if err != nil {
			return err
		} else if !wanted {
			continue
		}
		raw, err := json.Marshal(ev.Data)
		if err != nil {
			return fmt.Errorf("outbox: marshal %s: %w", ev.Type, err)
		}
		creates = append(creates, tx.Event.Create().SetWorkspaceID(ev.WorkspaceID).SetType(ev.Type).SetData(raw))
	}
	if len(creates) == 0 {
		return nil
	}
	for start := 0; start < len(creates); start += recordChunk {
		part := creates[start:min(start+recordChunk, len(creates))]
		if err := tx.Event.CreateBulk(part...).Exec(ctx); err != nil {
			return fmt.Errorf("outbox: record %d events: %w", len(part), err)
		}
	}
	signalOnCommit(tx)
	return nil
}

// recordChunk bounds the events one insert records: five parameters each, far
// below the databases' limits on a statement's parameters (SQLite 32,766).
const recordChunk = 1000

// SubscriptionsTTL is how long a workspace's enabled webhooks (and the event
// types they want) are remembered. A change of webhooks is seen at once by the
// process that made it (Forget) and, through ChangedChannel, by every replica
// (Announce, Listen); a replica that missed the announcement sees it within this
// time.
const SubscriptionsTTL = 2 * time.Second

// ChangedChannel is the Redis channel on which a change of a workspace's webhooks
// is announced, with the workspace id as the message.
const ChangedChannel = "switchboard:webhooks:changed"

// subscriptions remembers, by workspace id, its enabled webhooks and the event
// types they want. Workspace ids are unique across databases, so one memory serves
// every client of the process. generation counts the calls of Forget: a read of
// the webhooks that began before one is not remembered, since it may predate the
// change that Forget announced.
var subscriptions = struct {
	sync.Mutex
	byWorkspace map[string]subscribed
	generation  uint64
}{byWorkspace: map[string]subscribed{}}

type subscribed struct {
	hooks map[string]*ent.Webhook // by id
	types map[string]bool
	until time.Time
}

// enabled returns what is remembered of a workspace's enabled webhooks, reading
// them through webhooks when the memory is older than SubscriptionsTTL.
func enabled(ctx context.Context, webhooks *ent.WebhookClient, workspaceID string) (subscribed, error) {
	now := time.Now()
	subscriptions.Lock()
	s, ok := subscriptions.byWorkspace[workspaceID]
	generation := subscriptions.generation
	subscriptions.Unlock()
	if ok && now.Before(s.until) {
		return s, nil
	}
	hooks, err := webhooks.Query().Where(webhook.WorkspaceID(workspaceID), webhook.Status(string(wh.StatusEnabled))).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return s, fmt.Errorf("outbox: read subscriptions: %w", err)
	}
	s = subscribed{hooks: map[string]*ent.Webhook{}, types: map[string]bool{}, until: now.Add(SubscriptionsTTL)}
	for _, w := range hooks {
		s.hooks[w.ID] = w
		for _, t := range w.Events {
			s.types[t] = true
		}
	}
	subscriptions.Lock()
	if subscriptions.generation == generation {
		subscriptions.byWorkspace[workspaceID] = s
	}
	subscriptions.Unlock()
	return s, nil
}

// Wants reports whether an enabled webhook of the workspace subscribes to typ,
// reading the webhooks through webhooks (a transaction's or the client's) when the
// memory of them is older than SubscriptionsTTL.
func Wants(ctx context.Context, webhooks *ent.WebhookClient, workspaceID, typ string) (bool, error) {
	s, err := enabled(ctx, webhooks, workspaceID)
	return s.types[typ], err
}

// Enabled returns the webhook id of the workspace if it is enabled, as remembered
// for up to SubscriptionsTTL; ok is false for a webhook deleted or disabled.
func Enabled(ctx context.Context, webhooks *ent.WebhookClient, workspaceID, id string) (hook *ent.Webhook, ok bool, err error) {
	s, err := enabled(ctx, webhooks, workspaceID)
	hook, ok = s.hooks[id]
	return hook, ok, err
}

// Forget drops what is remembered of a workspace's webhooks in this process, and
// what reads of them still under way would remember.
func Forget(workspaceID string) {
	subscriptions.Lock()
	delete(subscriptions.byWorkspace, workspaceID)
	subscriptions.generation++
	subscriptions.Unlock()
}

// Announce forgets a workspace's webhooks here and tells every replica listening
// on rdb to forget them too; call it once a change of them is committed. With a
// nil rdb only this process forgets. A failed announcement is logged: the other
// replicas then see the change within SubscriptionsTTL.
func Announce(ctx context.Context, rdb redis.UniversalClient, workspaceID string) {
	Forget(workspaceID)
	if rdb == nil {
		return
	}
	if err := rdb.Publish(ctx, ChangedChannel, workspaceID).Err(); err != nil {
		slog.Warn("webhook change not announced; other replicas see it within the TTL",
			"workspace", workspaceID, "ttl", SubscriptionsTTL, "err", err)
	}
}

// Listen forgets the webhooks of every workspace announced on ChangedChannel
// until ctx is done.
func Listen(ctx context.Context, rdb redis.UniversalClient) {
	sub := rdb.Subscribe(ctx, ChangedChannel)
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			Forget(msg.Payload)
		}
	}
}
