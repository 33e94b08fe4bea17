package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/apikey"
	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/linkpreview"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/rest"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	"github.com/switchboardhq/switchboard/webhook"
)

// App is one assembled Switchboard process.
type App struct {
	cfg Config

	Client   *ent.Client
	Redis    redis.UniversalClient
	Engines  *engine.Registry
	Queue    *jobs.Queue
	Jobs     *jobs.Handlers
	Resolver *graph.Resolver
	// Handler serves the whole HTTP API.
	Handler http.Handler

	mini      *miniredis.Miniredis
	redisOpt  asynq.RedisConnOpt
	asynqc    *asynq.Client
	inspector *asynq.Inspector
	monitor   *asynqmon.HTTPHandler
	monitorRO *asynqmon.HTTPHandler
	server    *asynq.Server
	scheduler *asynq.Scheduler

	stop    context.CancelFunc
	wg      sync.WaitGroup
	closers []func()
}

// New connects to the database and Redis, migrates the schema and assembles the
// parts. Nothing runs in the background until Start.
func New(ctx context.Context, cfg Config) (*App, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &App{cfg: cfg}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()

	client, err := storage.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	a.Client = client
	a.closers = append(a.closers, func() { _ = client.Close() })
	if err := storage.Migrate(ctx, client); err != nil {
		return nil, err
	}
	if err := a.openRedis(ctx); err != nil {
		return nil, err
	}

	a.asynqc = asynq.NewClientFromRedisClient(a.Redis)
	a.inspector = asynq.NewInspectorFromRedisClient(a.Redis)
	a.Queue = jobs.NewQueue(a.asynqc, a.inspector)
	a.Jobs = &jobs.Handlers{Client: client, Queue: a.Queue,
		Previews:      linkpreview.NewFetcher(3*time.Second, cfg.LinkPreviewAllowPrivate),
		Sender:        webhook.NewSender(cfg.AllowPrivate),
		RetrySchedule: cfg.WebhookRetrySchedule}
	a.Engines = engine.NewRegistry(engine.NewPresence(a.Redis, cfg.PresenceTTL), a.Jobs, a.sandboxFor)
	a.Jobs.Engines = a.Engines

	store := media.NewStore(client, cfg.PublicURL)
	a.Resolver = &graph.Resolver{Client: client, Engines: a.Engines, Queue: a.Queue, Jobs: a.Jobs, Media: store,
		AllowPrivate: cfg.AllowPrivate, MediaAllowPrivate: cfg.MediaAllowPrivate}
	a.monitor = asynqmon.New(asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: a.redisOpt})
	a.monitorRO = asynqmon.New(asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: a.redisOpt, ReadOnly: true})
	a.Handler = rest.NewRouter(rest.Config{Resolver: a.Resolver, Monitor: a.monitor, MonitorReadOnly: a.monitorRO,
		OperatorToken: cfg.OperatorToken, Media: store, Logger: cfg.Logger})
	ok = true
	return a, nil
}

// openRedis connects to REDIS_URL, or starts an in-process Redis whose clock is
// moved forward every second so that TTLs expire.
func (a *App) openRedis(ctx context.Context) error {
	url := a.cfg.RedisURL
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return fmt.Errorf("app: start embedded redis: %w", err)
		}
		a.mini = m
		a.closers = append(a.closers, m.Close)
		url = "redis://" + m.Addr()
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("app: bad redis URL: %w", err)
	}
	a.Redis = redis.NewClient(opt)
	a.closers = append(a.closers, func() { _ = a.Redis.Close() })
	if err := a.Redis.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("app: connect redis: %w", err)
	}
	a.redisOpt, err = asynq.ParseRedisURI(url)
	return err
}

// sandboxFor is the registry's provider: a sandbox engine for the workspaces the
// configuration names.
func (a *App) sandboxFor(workspaceID string) engine.Engine {
	names := a.cfg.SandboxWorkspaces
	if !slices.Contains(names, "*") {
		ws, err := a.Client.Workspace.Get(viewer.SystemContext(context.Background()), workspaceID)
		if err != nil || !slices.Contains(names, ws.Name) {
			return nil
		}
	}
	return sandbox.New(workspaceID, a.cfg.SandboxAckDelay, a.Jobs)
}

// Start runs the background parts the role needs: the engine heartbeat always,
// and for the worker role the asynq server, the periodic reconciler and one
// reconciliation pass at once (what Redis lost while the process was down).
func (a *App) Start(ctx context.Context) error {
	ctx, a.stop = context.WithCancel(ctx)
	if a.mini != nil {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					a.mini.FastForward(time.Second)
				}
			}
		}()
	}
	a.wg.Add(1)
	go func() { defer a.wg.Done(); a.Engines.Run(ctx) }()
	if a.cfg.Role == RoleAPI {
		return nil
	}
	a.server = asynq.NewServerFromRedisClient(a.Redis, asynq.Config{
		Concurrency:              20,
		Queues:                   jobs.Queues,
		RetryDelayFunc:           jobs.RetryDelayFunc,
		TaskCheckInterval:        100 * time.Millisecond,
		DelayedTaskCheckInterval: 200 * time.Millisecond,
		ShutdownTimeout:          10 * time.Second,
		Logger:                   asynqLogger{a.cfg.Logger},
		LogLevel:                 asynq.WarnLevel,
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			if errors.Is(err, engine.ErrNoEngine) || t.Type() == jobs.TypeDeliver {
				return // waiting for an engine, or a receiver's failure already recorded
			}
			a.cfg.Logger.Warn("task failed", "type", t.Type(), "err", err)
		}),
	})
	mux := asynq.NewServeMux()
	a.Jobs.Register(mux)
	if err := a.server.Start(mux); err != nil {
		return fmt.Errorf("app: start worker: %w", err)
	}
	a.scheduler = asynq.NewScheduler(a.redisOpt, &asynq.SchedulerOpts{Logger: asynqLogger{a.cfg.Logger}, LogLevel: asynq.WarnLevel})
	if _, err := a.scheduler.Register(fmt.Sprintf("@every %s", jobs.ReconcileEvery), jobs.ReconcileTask(),
		asynq.Queue(jobs.QueueMaintenance), asynq.Unique(jobs.ReconcileEvery), asynq.MaxRetry(0)); err != nil {
		return fmt.Errorf("app: schedule reconciler: %w", err)
	}
	if err := a.scheduler.Start(); err != nil {
		return fmt.Errorf("app: start scheduler: %w", err)
	}
	a.wg.Add(1)
	go func() { defer a.wg.Done(); a.Jobs.RunFanout(ctx, 100*time.Millisecond) }()
	if _, err := a.Jobs.ReconcileOnce(ctx, time.Now(), 0); err != nil {
		a.cfg.Logger.Warn("initial reconciliation failed", "err", err)
	}
	return nil
}

// Bootstrap creates the default workspace and an all-scopes key when the database
// has no key at all, and returns it (empty when keys exist).
func (a *App) Bootstrap(ctx context.Context) (string, error) {
	n, err := a.Client.APIKey.Query().Where(apikey.RevokedAtIsNil()).Count(viewer.SystemContext(ctx))
	if err != nil || n > 0 {
		return "", err
	}
	issued, err := auth.CreateKey(ctx, a.Client, DefaultWorkspace, []string{"*"}, "bootstrap")
	if err != nil {
		return "", err
	}
	return issued.Key, nil
}

// Close stops the background parts and releases connections.
func (a *App) Close() {
	if a.stop != nil {
		a.stop()
	}
	if a.scheduler != nil {
		a.scheduler.Shutdown()
	}
	if a.server != nil {
		a.server.Shutdown()
	}
	a.wg.Wait()
	if a.monitor != nil {
		_ = a.monitor.Close()
	}
	if a.monitorRO != nil {
		_ = a.monitorRO.Close()
	}
	if a.asynqc != nil {
		_ = a.asynqc.Close()
	}
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// asynqLogger adapts slog to asynq's logger.
type asynqLogger struct{ l *slog.Logger }

func (l asynqLogger) Debug(args ...any) { l.l.Debug(fmt.Sprint(args...)) }
func (l asynqLogger) Info(args ...any)  { l.l.Info(fmt.Sprint(args...)) }
func (l asynqLogger) Warn(args ...any)  { l.l.Warn(fmt.Sprint(args...)) }
func (l asynqLogger) Error(args ...any) { l.l.Error(fmt.Sprint(args...)) }
func (l asynqLogger) Fatal(args ...any) { l.l.Error(fmt.Sprint(args...)) }
