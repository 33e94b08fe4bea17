package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/netguard"
	"github.com/switchboardhq/switchboard/storage"
)

// gatewayOpts are the options of engine gateway.
type gatewayOpts struct {
	server, token, dbURL, ffmpeg, logLevel string
	mediaAllowPrivate                      bool
}

// newEngineGatewayCmd is `switchboard engine gateway`: the whatsmeow gateway
// engine as a remote engine.
func newEngineGatewayCmd() *cobra.Command {
	var o gatewayOpts
	cmd := &cobra.Command{
		Use:   "gateway --server URL --token T",
		Short: "Run the WhatsApp gateway engine (a linked device of a real phone) as a remote engine",
		Long: `Run the gateway engine, a companion device of a real WhatsApp account (like WhatsApp Web),
as a remote engine of the server at --server, with the engine token POST /v1/engines gave: the
phone's session lives on this machine, the API on another. The API's QR code, pairing code,
logout and restart calls reach it; what the account sends and receives is carried to the server.
It logs "remote engine connected" once the server has welcomed it, reconnects when the connection
drops and stops on Ctrl-C.
Its device keys (whatsmeow's tables) and the device it paired live in --database-url, by default
a SQLite file in the user's data directory (` + "`" + `switchboard engine gateway --help` + "`" + ` shows
where), never in the current directory; PostgreSQL works too. Keep that database: losing it
unlinks the phone.`,
		Example: `  switchboard engine gateway --server http://127.0.0.1:8080 --token "$ENGINE_TOKEN"
  SWITCHBOARD_SERVER=https://api.example.com SWITCHBOARD_ENGINE_TOKEN=… \
    switchboard engine gateway --database-url postgres://wa@db.internal/wa_gateway`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGateway(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.server, "server", os.Getenv("SWITCHBOARD_SERVER"), "the server's base URL, e.g. http://127.0.0.1:8080 (env SWITCHBOARD_SERVER)")
	fs.StringVar(&o.token, "token", os.Getenv("SWITCHBOARD_ENGINE_TOKEN"), "the engine token POST /v1/engines gave (env SWITCHBOARD_ENGINE_TOKEN)")
	fs.StringVar(&o.dbURL, "database-url", envOr("SWITCHBOARD_ENGINE_DATABASE_URL", defaultGatewayDB()),
		"where the gateway keeps its device keys: sqlite://FILE or postgres://… (env SWITCHBOARD_ENGINE_DATABASE_URL)")
	fs.StringVar(&o.ffmpeg, "ffmpeg", os.Getenv("SWITCHBOARD_FFMPEG"),
		`ffmpeg's path, "" to look on PATH, "off" for none: video thumbnails and voice notes (env SWITCHBOARD_FFMPEG)`)
	fs.BoolVar(&o.mediaAllowPrivate, "media-allow-private", envBool("SWITCHBOARD_MEDIA_ALLOW_PRIVATE"),
		"let outgoing media URLs point at private addresses, e.g. a server on 127.0.0.1 (env SWITCHBOARD_MEDIA_ALLOW_PRIVATE)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

func envBool(name string) bool {
	b, _ := strconv.ParseBool(os.Getenv(name))
	return b
}

// defaultGatewayDB is where the gateway engine keeps its device keys unless
// told: a file in the user's data directory ($XDG_DATA_HOME, ~/.local/share;
// the configuration directory on macOS and Windows). Unlike the sandbox's
// memory it is not a cache: losing it unlinks the phone.
func defaultGatewayDB() string {
	return "sqlite://" + filepath.ToSlash(filepath.Join(userDataDir(), "switchboard", "engine-gateway.db"))
}

func userDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, ".local", "share")
		}
	} else if d, err := os.UserConfigDir(); err == nil {
		return d
	}
	return os.TempDir()
}

// runGateway runs the gateway engine over the engine protocol until ctx ends.
func runGateway(ctx context.Context, o gatewayOpts, stderr io.Writer) error {
	if o.server == "" || o.token == "" {
		return errors.New("engine gateway: --server and --token are required")
	}
	logger, err := newLogger(stderr, o.logLevel, "text")
	if err != nil {
		return err
	}
	// The device's name, platform, presence and history choices are the
	// server's SWITCHBOARD_GATEWAY_* settings.
	settings, err := app.GatewayFromEnv()
	if err != nil {
		return fmt.Errorf("engine gateway: %w", err)
	}
	if err := gateway.SetIdentity(settings.Identity()); err != nil {
		return fmt.Errorf("engine gateway: %w", err)
	}
	if path, ok := sqlitePath(o.dbURL); ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("engine gateway: %w", err)
		}
	}
	client, db, dialect, err := storage.OpenWithDB(o.dbURL, 4)
	if err != nil {
		return fmt.Errorf("engine gateway: %w", err)
	}
	defer client.Close()
	cfg := gateway.Config{DB: db, Dialect: dialect, Logger: logger, FFmpeg: o.ffmpeg,
		HidePresence: settings.HidePresence, ReplacedRetry: settings.ReplacedRetry}
	if o.mediaAllowPrivate {
		cfg.HTTP = netguard.Client(60*time.Second, true)
		cfg.HTTP.Timeout = 0 // the send's context bounds a large attachment's body
	}
	c := &remote.Client{URL: o.server, Token: o.token, Logger: logger}
	logger.Info("gateway engine connecting", "server", o.server, "token", redactToken(o.token), "database", redactURL(o.dbURL))
	err = gateway.ServeRemote(ctx, c, cfg)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("engine gateway: %w", err)
}

// redactURL is a database URL without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
