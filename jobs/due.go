package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hibiken/asynq"
)

// TypeDue is the task of a slot of time: it dispatches the messages due in the
// slot as they come due (dispatch.Dispatcher.DispatchDue).
const TypeDue = "message:due"

// DueSlot is the width of a slot of time: a second, asynq's unit of scheduling.
const DueSlot = time.Second

// DueLead is how far ahead a message must be due to join its slot's task. One
// due sooner gets a task of its own: its slot's task may be running already.
const DueLead = 2 * time.Second

// duePayload is the payload of a TypeDue task: its slot, [From, To) in Unix
// milliseconds.
type duePayload struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// slotOf is the start of the slot of time at lies in.
func slotOf(at time.Time) time.Time { return at.Truncate(DueSlot) }

// DueTaskID is the asynq task id of the slot of time that at lies in: one per
// slot, whatever the number of its messages.
func DueTaskID(at time.Time) string {
	return "due:" + strconv.FormatInt(slotOf(at).UnixMilli(), 10)
}

// due queues the task of the slot that at lies in, to run when the slot begins,
// unless this process queued it before (force asks Redis all the same: the
// reconciler found it lost). queued reports whether a task was added.
func (q *Queue) due(ctx context.Context, at time.Time, force bool) (queued bool, err error) {
	slot := slotOf(at)
	if !force && q.slots.has(slot) {
		return false, nil
	}
	payload, _ := json.Marshal(duePayload{From: slot.UnixMilli(), To: slot.Add(DueSlot).UnixMilli()})
	queued, err = q.enqueueOnce(ctx, QueueMessages, DueTaskID(at), asynq.NewTask(TypeDue, payload), slot,
		asynq.MaxRetry(1<<16), asynq.Timeout(q.dispatchTimeout()))
	if err == nil {
		q.slots.add(slot)
	}
	return queued, err
}

// Restore queues again the dispatch of a message whose task Redis lost, as
// Dispatch does, but asks Redis even for a slot this process queued before.
func (q *Queue) Restore(ctx context.Context, workspaceID, messageID string, at time.Time) (queued bool, err error) {
	return q.dispatch(ctx, workspaceID, messageID, at, true)
}

// dispatch queues a message due at at in its slot's task, or in a task of its own
// when it is due within DueLead; force is due's.
func (q *Queue) dispatch(ctx context.Context, workspaceID, messageID string, at time.Time, force bool) (bool, error) {
	if time.Until(at) > DueLead {
		return q.due(ctx, at, force)
	}
	return q.dispatchOne(ctx, workspaceID, messageID, at)
}

// dispatchTaskIDs are the tasks that may hold the dispatch of a message due at
// at (nil: now): its own, and its slot's.
func dispatchTaskIDs(messageID string, at *time.Time) []string {
	if at == nil {
		return []string{DispatchTaskID(messageID)}
	}
	return []string{DispatchTaskID(messageID), DueTaskID(*at)}
}

// Due dispatches the messages due in the task's slot; each one the sweep left
// (see dispatch.Later) gets a task of its own. An error, the database's or
// Redis's, has the task sweep the slot again: what it sent is not pending any
// more.
func (h *Handlers) Due(ctx context.Context, t *asynq.Task) error {
	var p duePayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.To <= p.From {
		return fmt.Errorf("%w: bad payload: %s", asynq.SkipRetry, t.Payload())
	}
	later, err := h.Dispatcher.DispatchDue(ctx, time.UnixMilli(p.From).UTC(), time.UnixMilli(p.To).UTC())
	for _, l := range later {
		if _, qerr := h.Queue.dispatchOne(ctx, l.WorkspaceID, l.MessageID, l.At); qerr != nil && err == nil {
			err = fmt.Errorf("jobs: queue %s on its own: %w", l.MessageID, qerr)
		}
	}
	return err
}

// slots remembers the slot tasks a process queued, so that the messages of a
// popular sendAt cost one round trip to Redis, not one each. It is a cache: once
// it holds maxSlots it forgets the slots that ended (all of them if none did), and
// a slot task that Redis lost meanwhile is the reconciler's to restore. No
// message joins a slot that ended (DueLead), so an ended slot is never asked for.
type slots struct {
	mu   sync.Mutex
	have map[int64]struct{} // slot starts, Unix milliseconds
}

// maxSlots bounds how many slots a process remembers.
const maxSlots = 4096

// has reports whether the process queued the task of slot.
func (s *slots) has(slot time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.have[slot.UnixMilli()]
	return ok
}

// add remembers slot.
func (s *slots) add(slot time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.have) >= maxSlots {
		ended := time.Now().Add(-DueSlot).UnixMilli()
		for k := range s.have {
			if k < ended {
				delete(s.have, k)
			}
		}
	}
	if s.have == nil || len(s.have) >= maxSlots {
		s.have = make(map[int64]struct{})
	}
	s.have[slot.UnixMilli()] = struct{}{}
}
