package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/rest"
)

// serveFlags are serve's options that are not the app's configuration.
type serveFlags struct {
	level, format string // of the log
	debugAddr     string // where Go's profiles and the metrics are served, if anywhere
	schedule      string // the webhook retry schedule, if given
}

func newServeCmd() *cobra.Command {
	cfg, envErr := app.ConfigFromEnv()
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server: the API, the dashboard, the engines and the background jobs",
		Long: `Run the server. With no flags it serves on 127.0.0.1:8080 with an embedded SQLite
database (switchboard.db), an in-process Redis and the sandbox engine, and prints a first
API key (all scopes) once it is listening, on the first start only.

For production use PostgreSQL and Redis (--database-url, --redis-url); several replicas
may share them, each with a --role: all (the default), api (HTTP only) or worker (jobs,
engines and webhooks, no HTTP). The server stops cleanly on Ctrl-C or SIGTERM: it
finishes the requests and jobs in flight and exits 0.`,
		Example: `  switchboard serve
  switchboard serve --addr 0.0.0.0:8080 --public-url https://sb.example.com
  DATABASE_URL=postgres://sb@db/sb REDIS_URL=redis://redis:6379/0 switchboard serve --role api
  switchboard serve --webhook-allow-private   # let webhooks reach http://127.0.0.1 for local testing`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if envErr != nil {
				return envErr
			}
			if f.schedule != "" {
				s, err := app.ParseSchedule(f.schedule)
				if err != nil {
					return fmt.Errorf("--webhook-retry-schedule: %w", err)
				}
				cfg.WebhookRetrySchedule = s
			}
			return serve(cmd.Context(), cfg, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	serveFlagSet(cmd.Flags(), &cfg, &f)
	return cmd
}

// databaseFlag registers --database-url.
func databaseFlag(fs *pflag.FlagSet, url *string) {
	fs.StringVar(url, "database-url", *url, "database URL: sqlite:///abs.db, sqlite://rel.db or postgres://… (env DATABASE_URL)")
}

// serveFlagSet registers serve's flags, over the configuration cfg holds from the
// environment.
func serveFlagSet(fs *pflag.FlagSet, cfg *app.Config, f *serveFlags) {
	databaseFlag(fs, &cfg.DatabaseURL)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (env SWITCHBOARD_ADDR)")
	fs.StringVar(&cfg.RedisURL, "redis-url", cfg.RedisURL, "Redis URL; empty runs an embedded Redis (env REDIS_URL)")
	fs.StringVar(&cfg.Role, "role", cfg.Role, "all, api or worker (env SWITCHBOARD_ROLE)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "public base URL of this server (env SWITCHBOARD_PUBLIC_URL)")
	fs.BoolVar(&cfg.AllowPrivate, "webhook-allow-private", cfg.AllowPrivate, "let webhooks use http and reach private addresses (env SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE)")
	edgeFlags(fs, cfg)
	fs.DurationVar(&cfg.SandboxAckDelay, "sandbox-ack-delay", cfg.SandboxAckDelay, "delay between sandbox acks (env SWITCHBOARD_SANDBOX_ACK_DELAY)")
	fs.DurationVar(&cfg.LoadOlderPace, "load-older-pace", cfg.LoadOlderPace, "wait between two pages of one load-older call (env SWITCHBOARD_LOAD_OLDER_PACE)")
	fs.StringVar(&cfg.RateLimit, "rate-limit", cfg.RateLimit, "requests one API key may make over all replicas: 20/s, 1200/m, 10000/h or off (env SWITCHBOARD_RATE_LIMIT)")
	fs.IntVar(&cfg.RateBurst, "rate-burst", cfg.RateBurst, "how many of those requests may come at once (env SWITCHBOARD_RATE_BURST)")
	fs.BoolVar(&cfg.BootstrapKey, "bootstrap-key", cfg.BootstrapKey, "print a first all-scopes key if the database never had one; always on for SQLite (env SWITCHBOARD_BOOTSTRAP_KEY)")
	fs.StringVar(&f.schedule, "webhook-retry-schedule", "", "webhook retry delays, e.g. 1m,5m,15m (env SWITCHBOARD_WEBHOOK_RETRY_SCHEDULE)")
	fs.StringVar(&f.level, "log-level", envOr("SWITCHBOARD_LOG_LEVEL", "info"), "debug, info, warn or error (env SWITCHBOARD_LOG_LEVEL)")
	fs.StringVar(&f.debugAddr, "debug-addr", envOr("SWITCHBOARD_DEBUG_ADDR", ""), "serve Go's profiles (/debug/pprof/) and the metrics (/metrics) on this address, e.g. 127.0.0.1:6060; keep it off public interfaces (env SWITCHBOARD_DEBUG_ADDR)")
	fs.StringVar(&f.format, "log-format", envOr("SWITCHBOARD_LOG_FORMAT", "text"), "text or json (env SWITCHBOARD_LOG_FORMAT)")
	fs.SortFlags = false
}

// serve runs the server until ctx ends. The API's address is taken before
// anything else: a taken port fails the start before the database is touched,
// and the one-time bootstrap key is made and printed only once the server
// listens and its background parts have started.
func serve(ctx context.Context, cfg app.Config, f serveFlags, stdout, stderr io.Writer) error {
	logger, err := newLogger(stderr, f.level, f.format)
	if err != nil {
		return err
	}
	// One logger everywhere: packages that log through slog's default use it too.
	cfg.Logger = logger
	slog.SetDefault(logger)
	routeRedisLog()

	var ln net.Listener
	if cfg.Role != app.RoleWorker {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("cannot listen on %s (--addr, env SWITCHBOARD_ADDR): %w", cfg.Addr, err)
		}
		defer ln.Close()
	}
	a, err := app.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		a.Close()
		logger.Info("switchboard stopped")
	}()
	if err := a.Start(ctx); err != nil {
		return err
	}
	if f.debugAddr != "" {
		stop, err := serveDebug(f.debugAddr, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.Role == app.RoleWorker {
		logger.Info("switchboard worker running", "database", switchboard.RedactURL(cfg.DatabaseURL), "redis", redisLabel(cfg.RedisURL))
		<-ctx.Done()
		logger.Info("switchboard shutting down: finishing running jobs")
		return nil
	}
	if key, err := a.Bootstrap(ctx); err != nil {
		return err
	} else if key != "" {
		fmt.Fprintf(stdout, "Bootstrap API key for workspace %q (all scopes; shown once, store it now):\n%s\n", app.DefaultWorkspace, key)
	}
	return serveAPI(ctx, cfg, ln, a.Handler, logger)
}

// serveAPI serves handler on ln until ctx ends, then stops accepting and lets the
// requests in flight finish (bounded by app.ShutdownTimeout).
func serveAPI(ctx context.Context, cfg app.Config, ln net.Listener, handler http.Handler, logger *slog.Logger) error {
	srv := newHTTPServer(handler, logger, serverLimits)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("switchboard listening", "addr", ln.Addr().String(), "role", cfg.Role,
		"database", switchboard.RedactURL(cfg.DatabaseURL), "redis", redisLabel(cfg.RedisURL))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish (bounded); serve's deferred Close
	// then finishes running jobs and closes the engines last.
	logger.Info("switchboard shutting down: finishing requests, then jobs")
	shutdown, cancel := context.WithTimeout(context.Background(), app.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		logger.Warn("requests still running at shutdown were cut", "err", err)
	}
	return nil
}

// httpLimits bound how long a client may take: to send its headers, its whole
// request, to read the answer, and to keep an idle connection. A client too slow
// for them is cut off.
type httpLimits struct {
	readHeader, read, write, idle time.Duration
}

// serverLimits are the limits of the served API: a whole request may take a
// minute (a 64 MB upload at 10 Mbit/s included), its answer 90 s.
var serverLimits = httpLimits{readHeader: 10 * time.Second, read: time.Minute, write: 90 * time.Second, idle: 90 * time.Second}

// newHTTPServer returns the API's server. Its MaxHeaderBytes leaves room above the
// router's own limits on the request target and header fields, so that a request
// past those gets the error envelope (414, 431) rather than Go's plain text.
func newHTTPServer(h http.Handler, logger *slog.Logger, l httpLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.readHeader, ReadTimeout: l.read,
		WriteTimeout: l.write, IdleTimeout: l.idle, MaxHeaderBytes: rest.ServerMaxHeaderBytes,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
}

// newLogger returns the process logger.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	// Every line is redacted: no URL query, password or media token reaches the log.
	switch format {
	case "text":
		return slog.New(switchboard.NewRedactingHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(switchboard.NewRedactingHandler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

var redisLogOnce sync.Once

// routeRedisLog sends the Redis client's own log lines (a dropped connection at
// shutdown, a failed dial) to the process logger, structured like every other
// line, instead of the standard library's unstructured log.
func routeRedisLog() {
	redisLogOnce.Do(func() { redis.SetLogger(redisLog{}) })
}

// redisLog is the Redis client's logger: a warning on slog's default logger.
type redisLog struct{}

// Printf logs one line of the Redis client.
func (redisLog) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	slog.Default().WarnContext(ctx, msg, "component", "redis")
}

// serveDebug serves Go's runtime profiles (net/http/pprof) and the metrics on a
// listener of its own, apart from the API and without a credential: they are
// for the operator's eyes only.
func serveDebug(addr string, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/metrics", metrics.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	logger.Info("profiles served", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
