// Command switchboard is the Switchboard server and its operator tools.
//
//	switchboard serve   [--addr HOST:PORT] [--database-url URL] [--redis-url URL] [--role all|api|worker]
//	switchboard migrate [--database-url URL]
//	switchboard keys create --workspace NAME --scopes a,b|* [--name N] [--database-url URL]
//	switchboard keys list   [--database-url URL]
//	switchboard keys revoke KEY|ID [--database-url URL]
//	switchboard engine sandbox --server URL --token T [--database-url URL]
//	switchboard engine gateway --server URL --token T [--database-url URL]
//	switchboard engine conformance [--to E164] -- COMMAND [ARGS...]
//	switchboard version
//	switchboard completion bash|zsh|fish|powershell
//
// `switchboard help COMMAND` or `switchboard COMMAND --help` describes each.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/switchboardhq/switchboard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		printError(os.Stderr, err)
		os.Exit(1)
	}
}

// run runs the command line args (without the program name). Nothing is opened,
// migrated or started before the command's own flags are parsed: --help and a
// mistyped command have no side effect.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRoot(stdout, stderr)
	root.SetArgs(goStyleFlags(args))
	return root.ExecuteContext(ctx)
}

// newRoot returns the command tree.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "switchboard",
		Short: "Switchboard: a self-hosted WhatsApp automation server and its operator tools",
		Long: `Switchboard serves the Messaging Automation API (REST /v1, GraphQL, webhooks and the
dashboard) on one binary. With no configuration it runs on an embedded SQLite database,
an in-process Redis and the sandbox engine: "switchboard serve" and open http://127.0.0.1:8080.

Configuration comes from flags or environment variables (each flag names its variable).`,
		Example: `  switchboard serve
  switchboard serve --addr :8080 --database-url postgres://sb@db/sb --redis-url redis://redis:6379/0
  switchboard keys create --workspace acme --scopes messages:read,messages:write
  switchboard help serve`,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	var v strings.Builder
	printVersion(&v)
	root.Version = strings.TrimPrefix(strings.SplitN(v.String(), "\n", 2)[0], "switchboard ")
	root.SetVersionTemplate(v.String())
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{cmd: cmd.CommandPath(), err: err}
	})
	root.AddCommand(newServeCmd(), newMigrateCmd(), newKeysCmd(), newEngineCmd(), newVersionCmd())
	return root
}

// groupCmd returns a command that only holds subcommands: alone it prints its
// help, with an unknown subcommand it fails with a hint.
func groupCmd(use, short, long, example string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Long: long, Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
				cmd.SuggestionsMinimumDistance = 2
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += "; did you mean " + strings.Join(s, " or ") + "?"
				}
				return usageError{cmd: cmd.CommandPath(), err: errors.New(msg)}
			}
			return cmd.Help()
		},
	}
}

// usageError is a mistake on the command line: its message ends with where to
// find the command's usage.
type usageError struct {
	cmd string
	err error
}

func (u usageError) Error() string {
	return fmt.Sprintf("%v\nRun '%s --help' for usage.", u.err, u.cmd)
}

func (u usageError) Unwrap() error { return u.err }

// printError prints err for a person: an application error's message, then each
// of its details on a line of its own.
func printError(w io.Writer, err error) {
	var e *switchboard.Error
	if errors.As(err, &e) {
		msg := e.Message
		// Keep what wrapped the application error (e.g. "engine sandbox: ").
		if s := err.Error(); s != e.Error() {
			if prefix, _, ok := strings.Cut(s, e.Error()); ok {
				msg = prefix + msg
			}
		}
		fmt.Fprintln(w, "switchboard:", msg)
		for _, d := range e.Details {
			if d.Path != "" {
				fmt.Fprintf(w, "  - %s: %s (%s)\n", d.Path, d.Message, d.Code)
			} else {
				fmt.Fprintf(w, "  - %s (%s)\n", d.Message, d.Code)
			}
		}
		return
	}
	var u usageError
	if !errors.As(err, &u) && strings.HasPrefix(err.Error(), "unknown command") {
		err = usageError{cmd: "switchboard", err: err}
	}
	fmt.Fprintln(w, "switchboard:", err)
}

// goStyleFlags rewrites the single-dash long flags Go's flag package accepted
// (-addr :8080) to the double-dash form (--addr :8080); -h stays.
func goStyleFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && (a[1] >= 'a' && a[1] <= 'z') {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
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
