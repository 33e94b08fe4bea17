package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/hibiken/asynq"
	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/storage/wake"
	"github.com/switchboardhq/switchboard/webhook"
)

// The worker's side of a process: the asynq servers and their scheduler, the
// loops that look for work in the database, and what wakes them.

// Start runs the background parts the role needs: the engine heartbeat always,
// and for the worker role the asynq server, the periodic reconciler, the inbox
// applier, the webhook fan-out, the sandbox network and one reconciliation pass at
// once (what Redis lost while the process was down). They run until Close, not
// until ctx ends, so that Close can stop them in order.
func (a *App) Start(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	engines, stopEngines := context.WithCancel(ctx)
	work, stopWork := context.WithCancel(ctx)
	a.stopEngines, a.stopWork = stopEngines, stopWork
	if err := a.startEngines(engines); err != nil {
		return err
	}
	if a.cfg.Role == RoleAPI {
		return nil
	}
	if err := a.startServers(); err != nil {
		return err
	}
	if err := a.startScheduler(); err != nil {
		return err
	}
	a.goWork(func() { a.Dispatcher.Run(work, dispatchWorkers) })
	a.goWork(func() { a.Delivery.RunRecorder(work, 2) })
	a.goWork(func() { a.Delivery.RunLoader(work, 2) })
	sweep, err := a.startListener(work)
	if err != nil {
		return err
	}
	tick := sandboxTick(a.cfg.SandboxAckDelay)
	loop := poll.Pace{Min: loopBusy, Max: idlePoll, Sweep: sweep, Gather: loopBusy}
	sandbox := poll.Pace{Min: tick, Max: idlePoll, Sweep: sweep, Gather: tick}
	a.goWork(func() { a.Inbox.Run(work, loop) })
	a.goWork(func() { a.Delivery.RunFanout(work, loop) })
	a.goWork(func() { a.Sandbox.Run(work, sandbox) })
	a.goWork(func() { a.Sandbox.RunGroups(work, sandbox) })
	// What Redis lost while no worker ran is queued again at once, beside serving.
	a.goWork(func() {
		if _, err := a.Jobs.ReconcileOnce(work, time.Now(), 0); err != nil && work.Err() == nil {
			a.cfg.Logger.Warn("initial reconciliation failed", "err", err)
		}
	})
	return nil
}

// startListener starts, on PostgreSQL, the listener that wakes the worker's
// loops when any replica writes their tables, and returns the loops' safety
// sweep; on SQLite (one process, whose writers signal the loops themselves)
// there is none, and the loops keep polling every idlePoll.
func (a *App) startListener(work context.Context) (time.Duration, error) {
	if !storage.IsPostgres(a.cfg.DatabaseURL) {
		return 0, nil
	}
	l, err := wake.New(a.cfg.DatabaseURL)
	if err != nil {
		return 0, err
	}
	l.Notify("inbox_events", a.Inbox.WakeChannel())
	l.Notify("events", a.Delivery.WakeChannel())
	l.Notify("sandbox_events", a.Sandbox.WakeChannel())
	l.Notify("sandbox_groups", a.Sandbox.GroupsWakeChannel())
	a.Wake = l
	a.goWork(func() { l.Run(work) })
	return safetySweep, nil
}

// asynqServer is one asynq server of the worker: the queues it serves, how many
// tasks it runs at once, and how often an idle one looks for tasks.
type asynqServer struct {
	queues      map[string]int
	concurrency int
	checkEvery  time.Duration
}

// asynqServers are the worker's asynq servers, of three kinds: dispatch tasks
// only wait for the batch they join (dispatch.Dispatcher.Run), so theirs has room
// for many at once; webhook attempts mostly wait on the network, so theirs has
// room for webhook.Concurrency; the other queues keep a concurrency their
// database work can bear. An idle server looks for tasks every checkEvery: often
// where a message or its webhook waits.
func asynqServers() []asynqServer {
	others := maps.Clone(jobs.Queues)
	delete(others, jobs.QueueMessages)
	delete(others, jobs.QueueWebhooks)
	servers := []asynqServer{
		{map[string]int{jobs.QueueWebhooks: 1}, webhook.Concurrency, 20 * time.Millisecond},
		{others, 10, 100 * time.Millisecond},
	}
	// An asynq server takes its tasks one at a time, a Redis round trip each: when
	// thousands come due in the same second, one server's loop is what they wait
	// for. Several servers share the dispatch queue and its concurrency.
	for range dispatchServers {
		servers = append(servers, asynqServer{map[string]int{jobs.QueueMessages: 1}, dispatchConcurrency / dispatchServers,
			20 * time.Millisecond})
	}
	return servers
}

// startServers starts the worker's asynq servers, every one with the jobs'
// handlers.
func (a *App) startServers() error {
	mux := asynq.NewServeMux()
	a.Jobs.Register(mux)
	for _, q := range asynqServers() {
		srv := asynq.NewServerFromRedisClient(a.Redis, asynq.Config{
			Concurrency:              q.concurrency,
			Queues:                   q.queues,
			RetryDelayFunc:           jobs.RetryDelayFunc,
			TaskCheckInterval:        q.checkEvery,
			DelayedTaskCheckInterval: 200 * time.Millisecond,
			ShutdownTimeout:          ShutdownTimeout,
			Logger:                   asynqLogger{a.cfg.Logger},
			LogLevel:                 asynq.WarnLevel,
			ErrorHandler:             asynq.ErrorHandlerFunc(jobs.LogFailure(a.cfg.Logger)),
		})
		if err := srv.Start(mux); err != nil {
			return fmt.Errorf("app: start worker: %w", err)
		}
		a.servers = append(a.servers, srv)
	}
	return nil
}

// startScheduler schedules the periodic maintenance: the reconciler and pruning.
func (a *App) startScheduler() error {
	a.scheduler = asynq.NewScheduler(a.redisOpt, &asynq.SchedulerOpts{Logger: asynqLogger{a.cfg.Logger}, LogLevel: asynq.WarnLevel})
	if _, err := a.scheduler.Register(fmt.Sprintf("@every %s", jobs.ReconcileEvery), jobs.ReconcileTask(),
		asynq.Queue(jobs.QueueMaintenance), asynq.Unique(jobs.ReconcileEvery), asynq.MaxRetry(0)); err != nil {
		return fmt.Errorf("app: schedule reconciler: %w", err)
	}
	if _, err := a.scheduler.Register(fmt.Sprintf("@every %s", jobs.PruneEvery), jobs.PruneTask(),
		asynq.Queue(jobs.QueueMaintenance), asynq.Unique(jobs.PruneEvery), asynq.MaxRetry(0)); err != nil {
		return fmt.Errorf("app: schedule pruning: %w", err)
	}
	if err := a.scheduler.Start(); err != nil {
		return fmt.Errorf("app: start scheduler: %w", err)
	}
	return nil
}

// dispatchConcurrency is how many dispatch tasks may wait for their batch at once,
// shared by dispatchServers asynq servers, and dispatchWorkers how many batches
// are in flight.
const (
	dispatchConcurrency = 2 * dispatch.MaxBatch
	dispatchServers     = 2
	dispatchWorkers     = 4
)

// idlePoll is how often the worker's loops look for work made by other processes
// when there is none and no listener wakes them (SQLite): the longest an event
// recorded elsewhere may wait. It is also the longest a loop whose database
// calls fail waits before it tries again.
const idlePoll = time.Second

// safetySweep is how often an idle loop looks for work while a wake.Listener
// wakes it (PostgreSQL): every insert of work, in any replica, notifies it,
// and the loops know when stored work comes due by the clock (retries, leases,
// scheduled events), so the sweep only bounds what a lost notification could
// delay: a listener's reconnection sweeps at once, so what remains is work a
// replica locked or leased and then died holding without finishing.
const safetySweep = 30 * time.Second

// loopBusy is how long the inbox and fan-out loops wait between passes while
// they find work, and the least time between two passes that wakes start: the
// events stored meanwhile (a wake each) are applied by one pass.
const loopBusy = 50 * time.Millisecond

// sandboxTick is how often the sandbox network reports due events: often enough
// that acks keep their spacing.
func sandboxTick(delay time.Duration) time.Duration {
	return min(max(delay/5, 10*time.Millisecond), 200*time.Millisecond)
}

// asynqLogger adapts slog to asynq's logger.
type asynqLogger struct{ l *slog.Logger }

func (l asynqLogger) Debug(args ...any) { l.l.Debug(fmt.Sprint(args...)) }
func (l asynqLogger) Info(args ...any)  { l.l.Info(fmt.Sprint(args...)) }
func (l asynqLogger) Warn(args ...any)  { l.l.Warn(fmt.Sprint(args...)) }
func (l asynqLogger) Error(args ...any) { l.l.Error(fmt.Sprint(args...)) }
func (l asynqLogger) Fatal(args ...any) { l.l.Error(fmt.Sprint(args...)) }
