package app

import (
	"context"
	"fmt"
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

// workerPool is how many database connections the worker of a process that also
// serves the API may hold; the API keeps storage.DefaultPool of its own.
const workerPool = 12

// ShutdownTimeout bounds how long Close waits for running jobs.
const ShutdownTimeout = 10 * time.Second

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
