package jobs_test

import (
	"context"
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

// A message's dispatch is queued once, whatever the number of calls; a finished
// one is replaced; it moves and goes away on request, and going away twice is no
// error.
func TestDispatchQueuedOncePerMessage(t *testing.T) {
	ctx := context.Background()
	q, insp := newQueue(t)
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	state := func(id string) string {
		info, err := insp.GetTaskInfo(jobs.QueueMessages, jobs.DispatchTaskID(id))
		if err != nil {
			return "none"
		}
		return info.State.String() + " " + info.NextProcessAt.UTC().Format(time.RFC3339)
	}
	var got []string
	step := func(what string, queued bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got = append(got, what+": "+map[bool]string{true: "queued", false: "kept"}[queued]+", "+state("msg_1"))
	}
	queued, err := q.Dispatch(ctx, "ws_a", "msg_1", at)
	step("first", queued, err)
	queued, err = q.Dispatch(ctx, "ws_a", "msg_1", at.Add(time.Minute))
	step("again", queued, err)
	step("rescheduled", false, q.Reschedule(ctx, "ws_a", "msg_1", at.Add(2*time.Hour)))
	step("unscheduled", false, q.Unschedule(ctx, "msg_1"))
	step("unscheduled twice", false, q.Unschedule(ctx, "msg_1"))
	queued, err = q.Dispatch(ctx, "ws_a", "msg_1", at)
	step("after", queued, err)
	if err := insp.ArchiveTask(jobs.QueueMessages, jobs.DispatchTaskID("msg_1")); err != nil {
		t.Fatal(err)
	}
	queued, err = q.Dispatch(ctx, "ws_a", "msg_1", at)
	step("finished, then again", queued, err)

	f := func(d time.Duration) string { return at.Add(d).UTC().Format(time.RFC3339) }
	want := []string{
		"first: queued, scheduled " + f(0),
		"again: kept, scheduled " + f(0),
		"rescheduled: kept, scheduled " + f(2*time.Hour),
		"unscheduled: kept, none",
		"unscheduled twice: kept, none",
		"after: queued, scheduled " + f(0),
		"finished, then again: queued, scheduled " + f(0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the dispatch of msg_1 (-want +got):\n%s", diff)
	}
	if id := jobs.DispatchTaskID("msg_1"); id == jobs.DeliverTaskID("msg_1") {
		t.Errorf("a dispatch and a delivery share task id %s", id)
	}
}
