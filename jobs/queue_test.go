package jobs_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/jobs"
)

// newQueue is a Queue on its own in-process Redis, and its inspector.
func newQueue(t *testing.T) (*jobs.Queue, *asynq.Inspector) {
	t.Helper()
	m := miniredis.RunT(t)
	opt := asynq.RedisClientOpt{Addr: m.Addr()}
	c, i := asynq.NewClient(opt), asynq.NewInspector(opt)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close(); _ = i.Close(); _ = rdb.Close() })
	q := jobs.NewQueue(c, i, rdb)
	if err := q.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q, i
}

// A message due soon gets a task of its own, queued once whatever the number of
// calls; a finished one is replaced; it goes away on request, and going away
// twice is no error. Rescheduled an hour ahead, it leaves its own task for its
// slot's.
func TestDispatchQueuedOncePerMessage(t *testing.T) {
	ctx := context.Background()
	q, insp := newQueue(t)
	at := time.Now().Add(time.Second)
	later := at.Add(time.Hour)
	state := func(id string) string {
		info, err := insp.GetTaskInfo(jobs.QueueMessages, id)
		if err != nil {
			return "none"
		}
		return info.State.String() + " " + info.NextProcessAt.UTC().Format(time.RFC3339Nano)
	}
	var got []string
	step := func(what string, queued bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got = append(got, what+": "+map[bool]string{true: "queued", false: "kept"}[queued]+", "+
			state(jobs.DispatchTaskID("msg_1"))+"; slot "+state(jobs.DueTaskID(later)))
	}
	queued, err := q.Dispatch(ctx, "ws_a", "msg_1", at)
	step("first", queued, err)
	queued, err = q.Dispatch(ctx, "ws_a", "msg_1", at.Add(time.Millisecond))
	step("again", queued, err)
	step("unscheduled", false, q.Unschedule(ctx, "msg_1"))
	step("unscheduled twice", false, q.Unschedule(ctx, "msg_1"))
	queued, err = q.Dispatch(ctx, "ws_a", "msg_1", at)
	step("after", queued, err)
	if err := insp.ArchiveTask(jobs.QueueMessages, jobs.DispatchTaskID("msg_1")); err != nil {
		t.Fatal(err)
	}
	queued, err = q.Dispatch(ctx, "ws_a", "msg_1", at)
	step("finished, then again", queued, err)
	step("rescheduled an hour ahead", false, q.Reschedule(ctx, "ws_a", "msg_1", later))

	own := "scheduled " + at.Truncate(time.Second).UTC().Format(time.RFC3339Nano) // asynq schedules in seconds
	slot := "scheduled " + later.Truncate(jobs.DueSlot).UTC().Format(time.RFC3339Nano)
	want := []string{
		"first: queued, " + own + "; slot none",
		"again: kept, " + own + "; slot none",
		"unscheduled: kept, none; slot none",
		"unscheduled twice: kept, none; slot none",
		"after: queued, " + own + "; slot none",
		"finished, then again: queued, " + own + "; slot none",
		"rescheduled an hour ahead: kept, none; slot " + slot,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the dispatch of msg_1 (-want +got):\n%s", diff)
	}
}

// Messages due ahead in the same slot of time share its one task, which runs
// when the slot begins; another slot has its own. The process asks Redis once a
// slot, so a slot task Redis lost is queued again by Restore only.
func TestDispatchAheadSharesItsSlot(t *testing.T) {
	ctx := context.Background()
	q, insp := newQueue(t)
	at := time.Now().Add(time.Hour).Truncate(jobs.DueSlot)
	var got []string
	dispatch := func(id string, d time.Duration, do func(context.Context, string, string, time.Time) (bool, error)) {
		t.Helper()
		queued, err := do(ctx, "ws_a", id, at.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s: queued %v", id, d, queued))
	}
	dispatch("msg_1", 0, q.Dispatch)
	dispatch("msg_2", jobs.DueSlot-time.Millisecond, q.Dispatch)
	dispatch("msg_3", jobs.DueSlot, q.Dispatch)
	tasks, err := insp.ListScheduledTasks(jobs.QueueMessages)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, task := range tasks {
		listed = append(listed, fmt.Sprintf("task %s %s at %s", task.Type, task.ID, task.NextProcessAt.Sub(at)))
	}
	slices.Sort(listed)
	got = append(got, listed...)
	if err := insp.DeleteTask(jobs.QueueMessages, jobs.DueTaskID(at)); err != nil {
		t.Fatal(err)
	}
	dispatch("msg_4", 0, q.Dispatch)
	dispatch("msg_4", 0, q.Restore)
	want := []string{
		"msg_1 0s: queued true",
		"msg_2 999ms: queued false",
		"msg_3 1s: queued true",
		"task message:due " + jobs.DueTaskID(at) + " at 0s",
		"task message:due " + jobs.DueTaskID(at.Add(jobs.DueSlot)) + " at 1s",
		"msg_4 0s: queued false",
		"msg_4 0s: queued true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// No two kinds of task share an id.
func TestTaskIDsDiffer(t *testing.T) {
	if id := jobs.DispatchTaskID("msg_1"); id == jobs.DeliverTaskID("msg_1") {
		t.Errorf("a dispatch and a delivery share task id %s", id)
	}
}
