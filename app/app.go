package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-redis/redis_rate/v10"
	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/dashboard"
	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/host"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/linkpreview"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/mediaproc"
	"github.com/switchboardhq/switchboard/music"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/rest"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/storage/wake"
	"github.com/switchboardhq/switchboard/viewer"
	"github.com/switchboardhq/switchboard/webhook"
)

// App is one assembled Switchboard process.
type App struct {
	cfg Config

	Client  *ent.Client
	Redis   redis.UniversalClient
	Engines *engine.Registry
	// Hub serves remote engines (the engine protocol) and routes their commands.
	Hub *remote.Hub
	// Gateways runs the workspaces' gateway engines (whatsmeow), each on one replica.
	Gateways *host.Host
	// Delivery fans events out to webhooks and makes the delivery attempts.
	Delivery *delivery.Service
	// Sandbox is the simulated network behind the sandbox engines.
	Sandbox *sandbox.Network
	Queue   *jobs.Queue
	// Keys authenticates API keys, from memory for a short TTL.
	Keys     *auth.Keys
	Jobs     *jobs.Handlers
	Resolver *graph.Resolver
	// Handler serves the whole HTTP API.
	Handler http.Handler
	// Dispatcher claims, sends and records messages (tasks and direct sends).
	Dispatcher *dispatch.Dispatcher
	// Inbox stores and applies what engines report: the engines' sink.
	Inbox *inbox.Inbox
	// Wake wakes the worker's loops on PostgreSQL; nil before Start, on SQLite
	// and for the API role.
	Wake *wake.Listener

	mini      *miniredis.Miniredis
	redisURL  string
	redisOpt  asynq.RedisConnOpt
	asynqc    *asynq.Client
	inspector *asynq.Inspector
	monitor   *monitor        // read-write, for the operator
	monitorRO *monitor        // read-only, for API keys and dashboard sessions
	servers   []*asynq.Server // the dispatch tasks' and the others'
	scheduler *asynq.Scheduler

	stopWork    context.CancelFunc // the worker's loops
	stopEngines context.CancelFunc // the engine heartbeat, then the engines
	work        sync.WaitGroup
	engines     sync.WaitGroup
	closers     []func()
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

	client, sqlDB, dialect, err := storage.OpenWithDB(cfg.DatabaseURL, storage.DefaultPool)
	if err != nil {
		return nil, err
	}
	a.Client = client
	a.closers = append(a.closers, func() { _ = client.Close() })
	if err := storage.Migrate(ctx, client, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if err := a.openRedis(ctx); err != nil {
		return nil, err
	}

	a.asynqc = asynq.NewClientFromRedisClient(a.Redis)
	a.inspector = asynq.NewInspectorFromRedisClient(a.Redis)
	a.watchMetrics()
	a.Queue = jobs.NewQueue(a.asynqc, a.inspector, a.Redis)
	a.Queue.DispatchTimeout = cfg.DispatchTimeout
	work, err := a.workerClient()
	if err != nil {
		return nil, err
	}
	store := media.NewStore(client, cfg.PublicURL)
	if !mediaproc.Find(cfg.FFmpeg).Available() {
		cfg.Logger.Warn("ffmpeg/ffprobe not found (SWITCHBOARD_FFMPEG): gateway engines send videos without thumbnail, dimensions and duration, and refuse voice notes that are not Ogg/Opus")
	}
	store.MaxBytes = cfg.MediaMaxBytes
	if store.Backend, err = media.OpenBackend(ctx, cfg.MediaURL, client); err != nil {
		return nil, err
	}
	a.assemblePaths(work, dialect, store)
	open := cfg.OpenGateway
	if open == nil {
		open = host.OpenGateway
	}
	if err := gateway.SetIdentity(cfg.Gateway.identity()); err != nil {
		return nil, err
	}
	a.Gateways = &host.Host{Client: client, Redis: a.Redis, Hub: a.Hub, Open: open, LeaseTTL: cfg.GatewayLeaseTTL,
		Logger: cfg.Logger, Base: gateway.Config{DB: sqlDB, Dialect: dialect, Sink: a.Inbox, Media: store,
			Logger: cfg.Logger, FFmpeg: cfg.FFmpeg, MaxMediaBytes: cfg.SendMediaMax, MaxDocumentBytes: cfg.SendDocumentMax, MediaRetryWait: cfg.MediaRetryWait,
			HidePresence: cfg.Gateway.HidePresence, ReplacedRetry: cfg.Gateway.ReplacedRetry},
		Lifted: a.restrictionLifted}
	a.Hub.States = a.Gateways.RemoteState // remote engines' reported states, recorded as a gateway's
	songs, files, err := a.assembleMusic(work)
	if err != nil {
		return nil, err
	}
	a.assembleAPI(store, songs, files)
	ok = true
	return a, nil
}

// restrictionLifted resumes at once the campaigns a gateway's restriction
// paused, when the replica that runs it sees the restriction end; the
// reconciler does it otherwise.
func (a *App) restrictionLifted(ctx context.Context, engineID string) {
	if n, err := a.Jobs.Campaigns.ResumeLifted(ctx, engineID, time.Now()); err != nil {
		a.cfg.Logger.Warn("campaigns not resumed after a restriction; the reconciler retries", "engine", engineID, "err", err)
	} else if n > 0 {
		a.cfg.Logger.Info("campaigns resumed after a restriction", "engine", engineID, "count", n)
	}
}

// workerClient is the client the background work uses: the API's, or, in a
// process that serves the API and runs the worker, a pool of its own, so that a
// backlog of jobs never leaves requests waiting for a connection.
func (a *App) workerClient() (*ent.Client, error) {
	if a.cfg.Role != RoleAll || !storage.Separate(a.cfg.DatabaseURL) {
		return a.Client, nil
	}
	work, err := storage.OpenPool(a.cfg.DatabaseURL, workerPool)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() { _ = work.Close() })
	return work, nil
}

// assemblePaths builds the paths of the work on the client work: the inbox,
// webhook delivery, dispatch, the job handlers, the sandbox network, the engine
// registry and the remote engines' hub.
func (a *App) assemblePaths(work *ent.Client, dialect string, store *media.Store) {
	cfg := a.cfg
	a.Inbox = &inbox.Inbox{Client: work, Media: &inbox.Downloads{Store: store, Queue: a.Queue,
		Off: cfg.MediaDownload == MediaDownloadNone, MaxBytes: cfg.MediaDownloadMax}}
	a.Delivery = &delivery.Service{Client: work, Queue: a.Queue, Sender: webhook.NewSender(cfg.AllowPrivate),
		RetrySchedule: cfg.WebhookRetrySchedule, Dialect: dialect}
	a.Dispatcher = &dispatch.Dispatcher{Client: work, Queue: a.Queue,
		Previews: linkpreview.NewFetcher(3*time.Second, cfg.LinkPreviewAllowPrivate)}
	a.Jobs = &jobs.Handlers{Client: work, Queue: a.Queue, Dispatcher: a.Dispatcher, Delivery: a.Delivery, Inbox: a.Inbox,
		Campaigns: &campaigns.Stepper{Client: work, Queue: a.Queue}, MediaRetention: cfg.MediaRetention, Dialect: dialect, Media: store}
	a.Sandbox = sandbox.NewNetwork(work, cfg.SandboxAckDelay, a.Inbox)
	a.Engines = engine.NewRegistry(engine.NewPresence(a.Redis, cfg.PresenceTTL), a.Inbox, a.sandboxFor)
	a.Jobs.Engines, a.Dispatcher.Engines, a.Jobs.Campaigns.Engines = a.Engines, a.Engines, a.Engines
	a.Hub = remote.NewHub(a.Redis, a.Client, a.Engines, a.Inbox)
	a.Hub.MaxFrame, a.Hub.MaxBatch, a.Hub.Logger = cfg.EngineMaxFrame, cfg.EngineMaxBatch, cfg.Logger
	a.Hub.Media, a.Hub.PublicURL = store, cfg.PublicURL
	a.Engines.SetRemote(a.Hub)
	a.Engines.SetOwns(a.ownsEngine)
}

// assembleMusic builds song generation: the published files, the provider (the
// local synthesizer unless MusicURL names a server) and the jobs' generator.
func (a *App) assembleMusic(work *ent.Client) (music.Provider, *music.Files, error) {
	cfg := a.cfg
	files, err := music.NewFiles(filepath.Join(cfg.DataDir, "music"), cfg.PublicURL)
	if err != nil {
		return nil, nil, err
	}
	var songs music.Provider = &music.Local{MinSeconds: cfg.MusicMinSeconds, MaxSeconds: cfg.MusicMaxSeconds}
	if cfg.MusicURL != "" {
		songs = music.NewHTTP(cfg.MusicURL, cfg.MusicKey, cfg.MusicAllowPrivate)
	}
	a.Jobs.Music = &music.Generator{Client: work, Provider: songs, Files: files, Queue: a.Queue, PollEvery: cfg.MusicPollEvery}
	return songs, files, nil
}

// assembleAPI builds what serves requests: the API keys, the resolver, the
// queue monitor and the HTTP handler.
func (a *App) assembleAPI(store *media.Store, songs music.Provider, files *music.Files) {
	cfg, client := a.cfg, a.Client
	a.Keys = auth.NewKeys(client, a.Redis, cfg.KeyTTL)
	a.Resolver = &graph.Resolver{Client: client, Keys: a.Keys, Engines: a.Engines, Sessions: a.Hub, Gateways: a.Gateways, Queue: a.Queue, Dispatcher: a.Dispatcher, Inbox: a.Inbox, Media: store,
		Music: songs, MusicFiles: files, MusicMaxUpload: cfg.MusicMaxUpload,
		AllowPrivate: cfg.AllowPrivate, MediaAllowPrivate: cfg.MediaAllowPrivate, PublicURL: cfg.PublicURL}
	a.Resolver.Deliveries = a.Delivery
	a.Inbox.Calls = a.Resolver.AnswerCall // rejects calls as engines' settings say (docs/calls.md)
	if cfg.LoadOlderPace > 0 {
		a.Resolver.LoadOlderPace = &cfg.LoadOlderPace
	}
	a.Resolver.SendLimit = &graph.SendLimit{Limiter: redis_rate.NewLimiter(a.Redis), Limit: cfg.engineSendLimit()}
	a.monitor = &monitor{opts: asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: a.redisOpt}}
	a.monitorRO = &monitor{opts: asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: a.redisOpt, ReadOnly: true}}
	workspaceLimit, _ := cfg.workspaceRateLimit() // checked by validate
	a.Handler = rest.NewRouter(rest.Config{Resolver: a.Resolver, Keys: a.Keys, Monitor: a.monitor, MonitorReadOnly: a.monitorRO,
		OperatorToken: cfg.OperatorToken, Media: store, EngineSockets: a.Hub, MusicFiles: files, Logger: cfg.Logger,
		Limiter: redis_rate.NewLimiter(a.Redis), RateLimit: cfg.rateLimit(), WorkspaceRateLimit: workspaceLimit,
		AddressRateLimit: cfg.addressRateLimit(), AuthFailureLimit: cfg.authFailureLimit(), TrustedProxies: cfg.TrustedProxies,
		Sessions:      &dashboard.Sessions{Redis: a.Redis, Keys: a.Keys, OperatorToken: cfg.OperatorToken},
		SecureCookies: strings.HasPrefix(cfg.PublicURL, "https:")})
}

// openRedis connects to REDIS_URL (see ParseRedisURL), or starts an in-process
// Redis whose clock is moved forward every second so that TTLs expire.
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
	a.redisURL = url
	opt, err := ParseRedisURL(url)
	if err != nil {
		return err
	}
	a.redisOpt = opt
	a.Redis = opt.MakeRedisClient().(redis.UniversalClient)
	a.closers = append(a.closers, func() { _ = a.Redis.Close() })
	if err := a.Redis.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("app: connect redis: %w", err)
	}
	return nil
}

// ownsEngine tells the registry whether a workspace has an engine of its own (a
// gateway, paired or not, or a remote engine): then its sandbox sends only what
// names it.
func (a *App) ownsEngine(ctx context.Context, workspaceID string) (bool, error) {
	ctx = viewer.WorkspaceContext(ctx, workspaceID)
	return a.Client.Engine.Query().Where(entengine.KindNEQ(entengine.KindSandbox)).Exist(ctx)
}

// sandboxFor is the registry's provider: the sandbox engine of a workspace that
// has a sandbox engine row (its oldest), or that the configuration names (which
// gets a row the first time).
func (a *App) sandboxFor(workspaceID string) engine.Engine {
	ctx := viewer.WorkspaceContext(context.Background(), workspaceID)
	row, err := a.Client.Engine.Query().Where(entengine.KindEQ(entengine.KindSandbox)).
		Order(ent.Asc(entengine.FieldCreatedAt), ent.Asc(entengine.FieldID)).First(ctx)
	if err == nil {
		return a.Sandbox.EngineFor(workspaceID, row.ID)
	} else if !ent.IsNotFound(err) {
		a.cfg.Logger.Warn("sandbox engine lookup failed", "workspace", workspaceID, "err", err)
		return nil
	}
	names := a.cfg.SandboxWorkspaces
	if !slices.Contains(names, "*") {
		ws, err := a.Client.Workspace.Get(viewer.SystemContext(ctx), workspaceID)
		if err != nil || !slices.Contains(names, ws.Name) {
			return nil
		}
	}
	// One row per workspace however many replicas create it at once.
	id := "eng_sandbox_" + workspaceID
	err = a.Client.Engine.Create().SetID(id).SetWorkspaceID(workspaceID).SetKind(entengine.KindSandbox).
		SetName("Sandbox").Exec(ctx)
	if err != nil && !ent.IsConstraintError(err) {
		a.cfg.Logger.Warn("sandbox engine not created", "workspace", workspaceID, "err", err)
		return nil
	}
	return a.Sandbox.EngineFor(workspaceID, id)
}

// RedisURL is the URL of the Redis the app uses (the embedded one's, when it
// runs one), for another process or replica to share it.
func (a *App) RedisURL() string { return a.redisURL }

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
	a.goWork(func() { a.Inbox.Run(work, poll.Pace{Min: loopBusy, Max: idlePoll, Sweep: sweep}) })
	a.goWork(func() { a.Delivery.RunFanout(work, poll.Pace{Min: loopBusy, Max: idlePoll, Sweep: sweep}) })
	a.goWork(func() { a.Sandbox.Run(work, poll.Pace{Min: tick, Max: idlePoll, Sweep: sweep}) })
	a.goWork(func() { a.Sandbox.RunGroups(work, poll.Pace{Min: tick, Max: idlePoll, Sweep: sweep}) })
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

// startEngines starts what every role runs until engines ends: the in-process
// Redis's clock, the engine registry, the remote engines' hub, the gateways, and
// the listeners for changed keys and webhooks.
func (a *App) startEngines(engines context.Context) error {
	if a.mini != nil {
		a.goEngines(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-engines.Done():
					return
				case <-t.C:
					a.mini.FastForward(time.Second)
				}
			}
		})
	}
	a.goEngines(func() { a.Engines.Run(engines) })
	if err := a.Hub.Start(engines); err != nil {
		return err
	}
	a.goEngines(func() { a.Gateways.Run(engines) })
	a.goEngines(func() { a.Keys.Listen(engines, a.Redis) })
	a.goEngines(func() { outbox.Listen(engines, a.Redis) })
	return nil
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

// workerPool is how many database connections the worker of a process that also
// serves the API may hold; the API keeps storage.DefaultPool of its own.
const workerPool = 12

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
// they find work.
const loopBusy = 50 * time.Millisecond

// ShutdownTimeout bounds how long Close waits for running jobs.
const ShutdownTimeout = 10 * time.Second

// sandboxTick is how often the sandbox network reports due events: often enough
// that acks keep their spacing.
func sandboxTick(delay time.Duration) time.Duration {
	return min(max(delay/5, 10*time.Millisecond), 200*time.Millisecond)
}

func (a *App) goWork(f func()) {
	a.work.Add(1)
	go func() { defer a.work.Done(); f() }()
}

func (a *App) goEngines(f func()) {
	a.engines.Add(1)
	go func() { defer a.engines.Done(); f() }()
}

// Bootstrap creates the default workspace and an all-scopes key on the first start
// of a database that never had a key, and returns it (empty otherwise). It does so
// on the embedded default (SQLite) or when the configuration asks for it, never in
// a worker, and never again once a key existed: an operator who revoked every key
// meant it. On PostgreSQL the first key comes from `switchboard keys create`.
func (a *App) Bootstrap(ctx context.Context) (string, error) {
	if a.cfg.Role == RoleWorker || !(a.cfg.BootstrapKey || strings.HasPrefix(a.cfg.DatabaseURL, "sqlite:")) {
		return "", nil
	}
	n, err := a.Client.APIKey.Query().Count(viewer.SystemContext(ctx))
	if err != nil || n > 0 {
		return "", err
	}
	issued, err := auth.CreateKey(ctx, a.Client, DefaultWorkspace, []string{"*"}, "bootstrap")
	if err != nil {
		return "", err
	}
	return issued.Key, nil
}

// Close stops the background parts in order and releases connections: first the
// scheduler and the asynq server (running jobs finish, bounded by
// ShutdownTimeout), then the worker's loops (each finishes the batch in hand),
// then the engines, last the connections. Stop the HTTP server before, so that
// in-flight requests still find their engines.
func (a *App) Close() {
	if a.scheduler != nil {
		a.scheduler.Shutdown()
	}
	var wg sync.WaitGroup
	for _, srv := range a.servers {
		wg.Add(1)
		go func() { defer wg.Done(); srv.Shutdown() }()
	}
	wg.Wait()
	if a.stopWork != nil {
		a.stopWork()
	}
	a.work.Wait()
	if a.stopEngines != nil {
		a.stopEngines()
	}
	a.engines.Wait()
	if a.monitor != nil {
		a.monitor.Close()
		a.monitorRO.Close()
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
