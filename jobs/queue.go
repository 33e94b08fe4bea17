// Package jobs holds Switchboard's background work on asynq: the task types, the
// Queue that enqueues them and the handlers that run them (dispatch of messages,
// engine events, the reconciler that rebuilds lost tasks from the database).
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Task types.
const (
	TypeDispatch  = "message:dispatch"
	TypeDeliver   = "webhook:deliver"
	TypeReconcile = "switchboard:reconcile"
	TypePrune     = "switchboard:prune"
)

// Queue names and their priorities.
const (
	QueueMessages    = "messages"
	QueueWebhooks    = "webhooks"
	QueueMaintenance = "maintenance"
)

// Queues is the asynq server's queue configuration.
var Queues = map[string]int{QueueMessages: 6, QueueWebhooks: 4, QueueCampaigns: 3, QueueMusic: 2, QueueMedia: 2, QueueMaintenance: 1}

// dispatchPayload is the payload of a TypeDispatch task.
type dispatchPayload struct {
	MessageID   string `json:"messageId"`
	WorkspaceID string `json:"workspaceId"`
}

// deliverPayload is the payload of a TypeDeliver task.
type deliverPayload struct {
	DeliveryID  string `json:"deliveryId"`
	WorkspaceID string `json:"workspaceId"`
}

// Queue enqueues Switchboard's tasks.
type Queue struct {
	// DispatchTimeout bounds one run of a dispatch task (DefaultDispatchTimeout
	// when zero); a claim older than StaleAfter of it belongs to a run that died.
	DispatchTimeout time.Duration

	client    *asynq.Client
	inspector *asynq.Inspector
	redis     redis.UniversalClient
	slots     slots // the slot tasks this process queued
}

// NewQueue returns a Queue over an asynq client and inspector on the Redis of rdb.
func NewQueue(c *asynq.Client, i *asynq.Inspector, rdb redis.UniversalClient) *Queue {
	return &Queue{client: c, inspector: i, redis: rdb}
}

// Redis is the Redis client the queue enqueues through; nil for a nil Queue.
func (q *Queue) Redis() redis.UniversalClient {
	if q == nil {
		return nil
	}
	return q.redis
}

// allQueuesKey is the Redis set in which asynq lists the queues that exist. Its
// client adds a queue there only the first time it enqueues to it, and its
// inspector answers "queue not found" for a queue missing from it.
const allQueuesKey = "asynq:queues"

// Register makes sure Redis lists every queue of Switchboard, so that inspecting,
// deleting and replacing tasks work after Redis lost its data (a flush, a restart
// without persistence) without restarting Switchboard. It is cheap and idempotent.
func (q *Queue) Register(ctx context.Context) error {
	names := make([]any, 0, len(Queues))
	for name := range Queues {
		names = append(names, name)
	}
	if err := q.redis.SAdd(ctx, allQueuesKey, names...).Err(); err != nil {
		return fmt.Errorf("jobs: register queues: %w", err)
	}
	return nil
}

// DefaultDispatchTimeout bounds one run of a dispatch task unless the Queue says
// otherwise.
const DefaultDispatchTimeout = time.Minute

func (q *Queue) dispatchTimeout() time.Duration {
	if q.DispatchTimeout > 0 {
		return q.DispatchTimeout
	}
	return DefaultDispatchTimeout
}

// StaleAfter is how long a message may stay claimed (sending) before the
// reconciler assumes its run died and queues it again: five times the longest a
// dispatch may run, so that a slow run is never mistaken for a dead one.
func (q *Queue) StaleAfter() time.Duration { return 5 * q.dispatchTimeout() }

// DispatchTaskID is the asynq task id of a message's dispatch: one per message, so
// the same message is never queued twice.
func DispatchTaskID(messageID string) string { return "dispatch:" + messageID }

// DeliverTaskID is the asynq task id of a webhook delivery.
func DeliverTaskID(deliveryID string) string { return "deliver:" + deliveryID }

// Dispatch queues the sending of a message at at (now when zero). A message due
// more than DueLead from now joins the task of its slot of time (see Due); any
// other gets a task of its own. A dispatch that is already queued is left alone;
// queued reports whether a task was added.
func (q *Queue) Dispatch(ctx context.Context, workspaceID, messageID string, at time.Time) (queued bool, err error) {
	return q.dispatch(ctx, workspaceID, messageID, at, false)
}

// dispatchOne queues a message's own dispatch task at at (now when zero).
func (q *Queue) dispatchOne(ctx context.Context, workspaceID, messageID string, at time.Time) (bool, error) {
	payload, _ := json.Marshal(dispatchPayload{MessageID: messageID, WorkspaceID: workspaceID})
	return q.enqueueOnce(ctx, QueueMessages, DispatchTaskID(messageID), asynq.NewTask(TypeDispatch, payload), at,
		asynq.MaxRetry(1<<16), asynq.Timeout(q.dispatchTimeout()))
}

// Deliver queues an attempt of a webhook delivery at at (now when zero). The
// delivery's attempts are counted in the database, so the task may retry freely.
func (q *Queue) Deliver(ctx context.Context, workspaceID, deliveryID string, at time.Time) (queued bool, err error) {
	payload, _ := json.Marshal(deliverPayload{DeliveryID: deliveryID, WorkspaceID: workspaceID})
	return q.enqueueOnce(ctx, QueueWebhooks, DeliverTaskID(deliveryID), asynq.NewTask(TypeDeliver, payload), at,
		asynq.MaxRetry(1<<10), asynq.Timeout(30*time.Second))
}

// enqueueOnce adds task under id unless a live task holds that id already.
func (q *Queue) enqueueOnce(ctx context.Context, queue, id string, task *asynq.Task, at time.Time, opts ...asynq.Option) (bool, error) {
	opts = append(opts, asynq.Queue(queue), asynq.TaskID(id))
	if !at.IsZero() {
		opts = append(opts, asynq.ProcessAt(at))
	}
	enqueue := func() error {
		_, err := q.client.EnqueueContext(ctx, task, opts...)
		return err
	}
	err := enqueue()
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return q.replaceFinished(queue, id, enqueue)
	}
	return err == nil, err
}

// replaceFinished handles a task id conflict: a live task (pending, scheduled,
// active, retry) stays; a finished one (archived, completed) is deleted and enqueue
// runs again.
func (q *Queue) replaceFinished(queue, id string, enqueue func() error) (bool, error) {
	info, err := q.inspector.GetTaskInfo(queue, id)
	if errors.Is(err, asynq.ErrQueueNotFound) {
		// Redis lost its list of queues: list them again and look once more.
		if err := q.Register(context.Background()); err != nil {
			return false, err
		}
		info, err = q.inspector.GetTaskInfo(queue, id)
	}
	if errors.Is(err, asynq.ErrTaskNotFound) {
		err = enqueue()
		return err == nil, err
	} else if err != nil {
		return false, fmt.Errorf("jobs: inspect %s: %w", id, err)
	}
	switch info.State {
	case asynq.TaskStateArchived, asynq.TaskStateCompleted:
		if err := q.inspector.DeleteTask(queue, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
			return false, fmt.Errorf("jobs: delete finished %s: %w", id, err)
		}
		if err := enqueue(); errors.Is(err, asynq.ErrTaskIDConflict) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// taskKey is the Redis key under which asynq keeps the task with id in queue
// (asynq's internal layout: base.TaskKey).
func taskKey(queue, id string) string { return "asynq:{" + queue + "}:t:" + id }

// lost returns the items none of whose tasks (named by taskIDs) Redis holds in
// queue, asking for all of them in one round trip: the reconciler's cheap way to
// find what to queue again among a page of due work, most of it usually still
// queued. When Redis cannot be asked it returns every item, and enqueueing sorts
// them out one by one.
func lost[T any](ctx context.Context, q *Queue, queue string, items []T, taskIDs func(T) []string) []T {
	pipe := q.redis.Pipeline()
	held := make([][]*redis.IntCmd, len(items))
	for i, it := range items {
		for _, id := range taskIDs(it) {
			held[i] = append(held[i], pipe.Exists(ctx, taskKey(queue, id)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return items
	}
	var out []T
	for i, it := range items {
		if !slices.ContainsFunc(held[i], func(c *redis.IntCmd) bool { return c.Val() > 0 }) {
			out = append(out, it)
		}
	}
	return out
}

// Reschedule moves a message's queued dispatch to a new time.
func (q *Queue) Reschedule(ctx context.Context, workspaceID, messageID string, at time.Time) error {
	if err := q.Unschedule(ctx, messageID); err != nil {
		return err
	}
	_, err := q.Dispatch(ctx, workspaceID, messageID, at)
	return err
}

// Unschedule removes a message's queued dispatch if it has not started. A dispatch
// that is already running finds the message changed and does nothing; one that is
// not queued at all is not an error.
func (q *Queue) Unschedule(ctx context.Context, messageID string) error {
	err := q.inspector.DeleteTask(QueueMessages, DispatchTaskID(messageID))
	if errors.Is(err, asynq.ErrQueueNotFound) {
		if err := q.Register(ctx); err != nil {
			return err
		}
		err = q.inspector.DeleteTask(QueueMessages, DispatchTaskID(messageID))
	}
	if err == nil || errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return nil
	}
	return fmt.Errorf("jobs: unschedule %s: %w", messageID, err)
}
