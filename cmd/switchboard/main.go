// Command switchboard is the Switchboard server and its operator tools.
//
//	switchboard serve   [--addr HOST:PORT] [--database-url URL] [--redis-url URL] [--role all|api|worker]
//	switchboard migrate [--database-url URL]
//	switchboard keys create --workspace NAME --scopes a,b|* [--name N] [--database-url URL]
//	switchboard keys list   [--database-url URL]
//	switchboard keys revoke KEY|ID [--database-url URL]
//	switchboard engine sandbox --server URL --token T [--database-url URL]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/rest"
	"github.com/switchboardhq/switchboard/storage"
)

const usage = `usage:
  switchboard serve   [--addr HOST:PORT] [--database-url URL] [--redis-url URL] [--role all|api|worker]
  switchboard migrate [--database-url URL]
  switchboard keys create --workspace NAME --scopes a,b|* [--name N] [--database-url URL]
  switchboard keys list   [--database-url URL]
  switchboard keys revoke KEY|ID [--database-url URL]
  switchboard engine sandbox --server URL --token T [--database-url URL] [--ack-delay 1s]
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("missing command")
	}
	cfg, err := app.ConfigFromEnv()
	if err != nil {
		return err
	}
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, args[1:], stdout, stderr)
	case "migrate":
		fs := newFlags("migrate", &cfg)
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		client, err := storage.Open(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer client.Close()
		if err := storage.Migrate(ctx, client, cfg.DatabaseURL); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "schema is up to date")
		return nil
	case "keys":
		return keys(ctx, cfg, args[1:], stdout)
	case "engine":
		return engineCmd(ctx, args[1:], stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func newFlags(name string, cfg *app.Config) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "database URL: sqlite:///abs.db, sqlite://rel.db or postgres://… (env DATABASE_URL)")
	return fs
}

func serve(ctx context.Context, cfg app.Config, args []string, stdout, stderr io.Writer) error {
	f, err := parseServe(&cfg, args)
	if err != nil {
		return err
	}
	logger, err := newLogger(stderr, f.level, f.format)
	if err != nil {
		return err
	}
	// One logger everywhere: packages that log through slog's default use it too.
	cfg.Logger = logger
	slog.SetDefault(logger)

	a, err := app.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		a.Close()
		logger.Info("switchboard stopped")
	}()
	if key, err := a.Bootstrap(ctx); err != nil {
		return err
	} else if key != "" {
		fmt.Fprintf(stdout, "Bootstrap API key for workspace %q (all scopes; shown once, store it now):\n%s\n", app.DefaultWorkspace, key)
	}
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
	return serveAPI(ctx, cfg, a.Handler, logger)
}

// serveFlags are serve's options that are not the app's configuration.
type serveFlags struct {
	level, format string // of the log
	debugAddr     string // where Go's profiles and the metrics are served, if anywhere
}

// parseServe parses serve's flags, over the configuration cfg holds from the
// environment.
func parseServe(cfg *app.Config, args []string) (serveFlags, error) {
	fs := newFlags("serve", cfg)
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
	schedule := fs.String("webhook-retry-schedule", "", "webhook retry delays, e.g. 1m,5m,15m (env SWITCHBOARD_WEBHOOK_RETRY_SCHEDULE)")
	var f serveFlags
	fs.StringVar(&f.level, "log-level", envOr("SWITCHBOARD_LOG_LEVEL", "info"), "debug, info, warn or error (env SWITCHBOARD_LOG_LEVEL)")
	fs.StringVar(&f.debugAddr, "debug-addr", os.Getenv("SWITCHBOARD_DEBUG_ADDR"), "serve Go's profiles (/debug/pprof/) and the metrics (/metrics) on this address, e.g. 127.0.0.1:6060; keep it off public interfaces (env SWITCHBOARD_DEBUG_ADDR)")
	fs.StringVar(&f.format, "log-format", envOr("SWITCHBOARD_LOG_FORMAT", "text"), "text or json (env SWITCHBOARD_LOG_FORMAT)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if *schedule != "" {
		s, err := app.ParseSchedule(*schedule)
		if err != nil {
			return f, fmt.Errorf("--webhook-retry-schedule: %w", err)
		}
		cfg.WebhookRetrySchedule = s
	}
	return f, nil
}

// serveAPI serves handler on cfg.Addr until ctx ends, then stops accepting and
// lets the requests in flight finish (bounded by app.ShutdownTimeout).
func serveAPI(ctx context.Context, cfg app.Config, handler http.Handler, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
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

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func keys(ctx context.Context, cfg app.Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("keys: want create, list or revoke")
	}
	fs := newFlags("keys "+args[0], &cfg)
	workspace := fs.String("workspace", "", "workspace name (created if missing)")
	scopes := fs.String("scopes", "", "comma-separated scopes, or * for all")
	name := fs.String("name", "", "a label for the key")
	// Accept flags before or after the positional argument.
	var positional []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	client, err := storage.Open(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := storage.Migrate(ctx, client, cfg.DatabaseURL); err != nil {
		return err
	}
	switch args[0] {
	case "create":
		if *workspace == "" || *scopes == "" {
			return errors.New("keys create: --workspace and --scopes are required")
		}
		issued, err := auth.CreateKey(ctx, client, *workspace, splitList(*scopes), *name)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, issued.Key)
		return nil
	case "list":
		list, err := auth.ListKeys(ctx, client)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKEY\tWORKSPACE\tNAME\tSCOPES\tCREATED\tREVOKED")
		for _, k := range list {
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.WorkspaceID, k.Name,
				strings.Join(k.Scopes, ","), k.CreatedAt.UTC().Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	case "revoke":
		if len(positional) != 1 {
			return errors.New("keys revoke: want exactly one KEY or ID")
		}
		k, err := auth.RevokeKey(ctx, client, positional[0])
		if err != nil {
			return err
		}
		if cfg.RedisURL != "" { // servers on an embedded Redis refuse it within their key TTL
			if opt, err := redis.ParseURL(cfg.RedisURL); err == nil {
				rdb := redis.NewClient(opt)
				_ = auth.AnnounceRevoked(ctx, rdb, k.Hash)
				rdb.Close()
			}
		}
		fmt.Fprintf(stdout, "revoked %s (%s…)\n", k.ID, k.Prefix)
		return nil
	}
	return fmt.Errorf("keys: unknown subcommand %q", args[0])
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func redisLabel(u string) string {
	if u == "" {
		return "embedded"
	}
	return switchboard.RedactURL(u)
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
