// Package jobs holds Switchboard's background work on asynq: the task types, the
// Queue that enqueues them and the handlers that run them (dispatch of messages,
// engine events, the reconciler that rebuilds lost tasks from the database).
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard"
)

// Task types.
const (
	TypeDispatch  = "message:dispatch"
	TypeDeliver   = "webhook:deliver"
	TypeReconcile = "switchboard:reconcile"
)

// Queue names and their priorities.
const (
	QueueMessages    = "messages"
	QueueWebhooks    = "webhooks"
	QueueMaintenance = "maintenance"
)

// Queues is the asynq server's queue configuration.
var Queues = map[string]int{QueueMessages: 6, QueueWebhooks: 4, QueueMaintenance: 1}

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
	client    *asynq.Client
	inspector *asynq.Inspector
}

// NewQueue returns a Queue over an asynq client and inspector.
func NewQueue(c *asynq.Client, i *asynq.Inspector) *Queue {
	return &Queue{client: c, inspector: i}
}

// DispatchTaskID is the asynq task id of a message's dispatch: one per message, so
// the same message is never queued twice.
func DispatchTaskID(messageID string) string { return "dispatch:" + messageID }

// DeliverTaskID is the asynq task id of a webhook delivery.
func DeliverTaskID(deliveryID string) string { return "deliver:" + deliveryID }

// Dispatch queues the sending of a message at at (now when zero). A dispatch that
// is already queued is left alone; queued reports whether a task was added.
func (q *Queue) Dispatch(ctx context.Context, workspaceID, messageID string, at time.Time) (queued bool, err error) {
	payload, _ := json.Marshal(dispatchPayload{MessageID: messageID, WorkspaceID: workspaceID})
	return q.enqueueOnce(ctx, QueueMessages, DispatchTaskID(messageID), asynq.NewTask(TypeDispatch, payload), at,
		asynq.MaxRetry(1<<16), asynq.Timeout(2*time.Minute))
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
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
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

// Reschedule moves a message's queued dispatch to a new time.
func (q *Queue) Reschedule(ctx context.Context, workspaceID, messageID string, at time.Time) error {
	q.Unschedule(messageID)
	_, err := q.Dispatch(ctx, workspaceID, messageID, at)
	return err
}

// Unschedule removes a message's queued dispatch if it has not started. A dispatch
// that is already running finds the message cancelled and does nothing.
func (q *Queue) Unschedule(messageID string) {
	_ = q.inspector.DeleteTask(QueueMessages, DispatchTaskID(messageID))
}

func newDeliveryID() string { return switchboard.NewID("dlv") }
