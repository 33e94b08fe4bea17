// Package delivery turns recorded events into webhook deliveries and makes their
// attempts: the fan-out of events to the webhooks that want them, one attempt of a
// delivery and its record (success, retry on the schedule, failure for good, the
// endpoint's auto-disable), and redelivery. Its Service is called by the asynq
// adapter in jobs (a TypeDeliver task is one Attempt) and by graph (Redeliver).
package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/poll"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// Status is a delivery's state, as stored in its status column.
type Status string

// Delivery states.
const (
	Pending   Status = "pending"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
)

// Statuses lists every delivery state.
var Statuses = []Status{Pending, Succeeded, Failed}

// DisableAfter is how many consecutive failed attempts disable an endpoint.
const DisableAfter = 8

// RotationOverlap is how long a rotated-out secret keeps signing beside the new one.
const RotationOverlap = 24 * time.Hour

// Queue enqueues attempts of deliveries; *jobs.Queue is one.
type Queue interface {
	// Deliver queues an attempt of a delivery at at (now when zero).
	Deliver(ctx context.Context, workspaceID, deliveryID string, at time.Time) (queued bool, err error)
	// Redis is where a change of a workspace's webhooks is announced; nil
	// announces it to this process only.
	Redis() redis.UniversalClient
}

// Sender makes one HTTP attempt of a delivery; *webhook.Sender is one.
type Sender interface {
	Send(ctx context.Context, r wh.Request) wh.Result
}

// Service fans events out to webhooks and makes and records delivery attempts.
type Service struct {
	Client *ent.Client
	Queue  Queue
	// Sender makes webhook attempts.
	Sender Sender
	// RetrySchedule is the delay before each retry of a webhook delivery; a
	// delivery gets len(RetrySchedule)+1 attempts.
	RetrySchedule []time.Duration
	// Dialect is the database's, as ent names it ("postgres" or "sqlite3").
	Dialect string

	recorder atomic.Pointer[poll.Batcher[*success]]     // set while RunRecorder runs
	loader   atomic.Pointer[poll.Batcher[*loadRequest]] // set while RunLoader runs
	wakeOnce sync.Once
	wake     chan struct{} // wakes RunFanout
}

// rowLocks says the database takes FOR UPDATE SKIP LOCKED (PostgreSQL), which
// lets fan-out loops in several processes share work.
func (svc *Service) rowLocks() bool { return svc.Dialect == dialect.Postgres }

// newID is the id of a new delivery, and of its envelope.
func newID() string { return switchboard.NewID("dlv") }
