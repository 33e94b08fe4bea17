package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
)

// sandboxOpts are the options of engine sandbox.
type sandboxOpts struct {
	server, token, dbURL, phone, logLevel string
	delay                                 time.Duration
}

func newEngineCmd() *cobra.Command {
	cmd := groupCmd("engine", "Run an engine out of process over the engine protocol",
		`Run an engine in a process of its own, connected to a server over the engine protocol
(a WebSocket). Create the engine first with POST /v1/engines {"kind":"remote"}: its answer
carries the token the process connects with.`,
		`  switchboard engine sandbox --server http://127.0.0.1:8080 --token "$ENGINE_TOKEN"
  switchboard engine gateway --server http://127.0.0.1:8080 --token "$ENGINE_TOKEN"`)
	var o sandboxOpts
	sb := &cobra.Command{
		Use:   "sandbox --server URL --token T",
		Short: "Run the sandbox engine (a simulated WhatsApp network) as a remote engine",
		Long: `Run the sandbox engine, a simulated WhatsApp network, as a remote engine of the server at
--server, with the engine token POST /v1/engines gave. It logs "remote engine connected" once
the server has welcomed it, reconnects when the connection drops and stops on Ctrl-C.
Its memory lives in --database-url, by default in the user's cache directory
(` + "`" + `switchboard engine sandbox --help` + "`" + ` shows where), never in the current directory.`,
		Example: `  switchboard engine sandbox --server http://127.0.0.1:8080 --token "$ENGINE_TOKEN"
  SWITCHBOARD_SERVER=http://127.0.0.1:8080 SWITCHBOARD_ENGINE_TOKEN=… switchboard engine sandbox --phone +15550001111`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSandbox(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	fs := sb.Flags()
	fs.StringVar(&o.server, "server", os.Getenv("SWITCHBOARD_SERVER"), "the server's base URL, e.g. http://127.0.0.1:8080 (env SWITCHBOARD_SERVER)")
	fs.StringVar(&o.token, "token", os.Getenv("SWITCHBOARD_ENGINE_TOKEN"), "the engine token POST /v1/engines gave (env SWITCHBOARD_ENGINE_TOKEN)")
	fs.StringVar(&o.dbURL, "database-url", envOr("SWITCHBOARD_ENGINE_DATABASE_URL", defaultSandboxDB()),
		"where the sandbox network keeps its memory (env SWITCHBOARD_ENGINE_DATABASE_URL)")
	fs.DurationVar(&o.delay, "ack-delay", time.Second, "spacing of the sandbox's acks")
	fs.StringVar(&o.phone, "phone", os.Getenv("SWITCHBOARD_ENGINE_PHONE"),
		"the simulated account's own number, E.164 (+15550001111), so that two sandboxes can serve one workspace (env SWITCHBOARD_ENGINE_PHONE)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	cmd.AddCommand(sb, newEngineGatewayCmd(), newEngineConformanceCmd())
	return cmd
}

// defaultSandboxDB is where the sandbox engine keeps its memory unless told: a
// file in the user's cache directory (the temporary directory without one), so
// that no database is left in the directory the command ran in.
func defaultSandboxDB() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return "sqlite://" + filepath.ToSlash(filepath.Join(dir, "switchboard", "engine-sandbox.db"))
}

// runSandbox runs the sandbox engine over the engine protocol until ctx ends.
func runSandbox(ctx context.Context, o sandboxOpts, stderr io.Writer) error {
	if o.server == "" || o.token == "" {
		return errors.New("engine sandbox: --server and --token are required")
	}
	if o.phone != "" && !remote.ValidPhone(o.phone) {
		return fmt.Errorf("engine sandbox: --phone %q is not an E.164 number such as +15550001111", o.phone)
	}
	logger, err := newLogger(stderr, o.logLevel, "text")
	if err != nil {
		return err
	}
	if path, ok := sqlitePath(o.dbURL); ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("engine sandbox: %w", err)
		}
	}
	db, err := openDB(ctx, o.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	c := &remote.Client{URL: o.server, Token: o.token, Phone: o.phone, Logger: logger}
	logger.Info("sandbox engine connecting", "server", o.server, "token", redactToken(o.token), "phone", o.phone, "database", o.dbURL)
	err = sandbox.ServeRemote(ctx, c, db, o.delay)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("engine sandbox: %w", err)
}

// sqlitePath returns the file of a sqlite:// URL (sqlite:///abs.db or
// sqlite://rel.db), without its query.
func sqlitePath(url string) (string, bool) {
	rest, ok := strings.CutPrefix(url, "sqlite://")
	if !ok {
		return "", false
	}
	rest, _, _ = strings.Cut(rest, "?")
	return rest, rest != ""
}

func redactToken(t string) string {
	if len(t) <= 14 {
		return "****"
	}
	return t[:14] + "…"
}
