package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/switchboardhq/switchboard"
)

// commands returns every command of the tree under c, c included.
func commands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, commands(sub)...)
	}
	return out
}

// Every command answers --help (and help COMMAND) with its description and
// examples, succeeds (exit 0), and has no side effect: no database is created
// in the working directory (issue 33, row 10).
func TestHelpOfEveryCommand(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("DATABASE_URL", "")
	ctx := context.Background()
	var all []*cobra.Command
	for _, c := range commands(newRoot(new(bytes.Buffer), new(bytes.Buffer))) {
		if c.Name() != "help" && !strings.HasPrefix(c.CommandPath(), "switchboard completion ") {
			all = append(all, c)
		}
	}
	if len(all) < 9 {
		t.Fatalf("only %d commands", len(all))
	}
	for _, c := range all {
		path := strings.Fields(c.CommandPath())[1:]
		if c.Short == "" {
			t.Errorf("%s has no description", c.CommandPath())
		}
		if c.Example == "" && c.Name() != "completion" {
			t.Errorf("%s has no example", c.CommandPath())
		}
		for _, args := range [][]string{append(path, "--help"), append(path, "-h"), append([]string{"help"}, path...)} {
			var out, errOut bytes.Buffer
			if err := run(ctx, append([]string(nil), args...), &out, &errOut); err != nil {
				t.Errorf("%q: %v", args, err)
				continue
			}
			desc := c.Long
			if desc == "" {
				desc = c.Short
			}
			desc, _, _ = strings.Cut(desc, "\n")
			if !strings.Contains(out.String(), desc) || !strings.Contains(out.String(), "Usage:") {
				t.Errorf("%q does not describe the command:\n%s", args, out.String())
			}
		}
	}
	// keys list --help shows list's flags, not create's.
	var out bytes.Buffer
	_ = run(ctx, []string{"keys", "list", "--help"}, &out, &out)
	if strings.Contains(out.String(), "--scopes") || !strings.Contains(out.String(), "--database-url") {
		t.Errorf("keys list --help:\n%s", out.String())
	}
	// A group without its subcommand shows its help.
	out.Reset()
	if err := run(ctx, []string{"keys"}, &out, &out); err != nil || !strings.Contains(out.String(), "revoke") {
		t.Errorf("keys alone: %v\n%s", err, out.String())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("help left %s in the working directory", e.Name())
	}
}

// A mistyped command or flag fails (non-zero exit) with a hint, before anything
// is opened.
func TestUnknownCommandsAndFlags(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("DATABASE_URL", "")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "Run 'switchboard --help' for usage."}},
		{[]string{"serv"}, []string{`unknown command "serv"`, "serve", "--help"}},
		{[]string{"keys", "frob"}, []string{`unknown command "frob" for "switchboard keys"`, "Run 'switchboard keys --help' for usage."}},
		{[]string{"keys", "lst"}, []string{"did you mean list?"}},
		{[]string{"serve", "--frob"}, []string{"unknown flag: --frob", "Run 'switchboard serve --help' for usage."}},
		{[]string{"keys", "create", "--workspace", "acme"}, []string{"--workspace and --scopes are required"}},
		{[]string{"keys", "revoke"}, []string{"accepts 1 arg(s)"}},
		{[]string{"engine", "conformance"}, []string{"requires at least 1 arg(s)"}},
		{[]string{"engine", "conformance", "--to", "5550002222", "--", "true"}, []string{"--to", "not an E.164 number"}},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), tc.args, &out, &errOut)
		if err == nil {
			t.Errorf("%q succeeded", tc.args)
			continue
		}
		var msg bytes.Buffer
		printError(&msg, err)
		for _, w := range tc.want {
			if !strings.Contains(msg.String(), w) {
				t.Errorf("%q printed %q, want %q in it", tc.args, msg.String(), w)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("a failed command left %s in the working directory", e.Name())
	}
}

// An application error prints as a sentence and its details as lines, not as
// code=… message=….
func TestErrorsPrintForPeople(t *testing.T) {
	var p switchboard.Problems
	p.Add("scopes[0]", "unknown_scope", "unknown scope %q", "everything")
	p.Add("workspace", "too_long", "too long")
	var out bytes.Buffer
	printError(&out, p.Err(switchboard.EVALIDATION))
	want := "switchboard: unknown scope \"everything\" (and 1 more issue)\n  - scopes[0]: unknown scope \"everything\" (unknown_scope)\n  - workspace: too long (too_long)\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printError(&out, errorsJoin("engine sandbox: ", switchboard.Errorf(switchboard.ENOTFOUND, "no such key")))
	if out.String() != "switchboard: engine sandbox: no such key\n" {
		t.Errorf("wrapped: %q", out.String())
	}
}

// version prints the version, the revision and the Go version.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"switchboard ", runtime.Version()} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q printed %q, want %q", args, out.String(), w)
			}
		}
	}
	var out bytes.Buffer
	_ = run(context.Background(), []string{"version"}, &out, &out)
	if !strings.Contains(out.String(), "revision:") {
		t.Errorf("version: %q", out.String())
	}
}

// Shell completion scripts are served by the completion command.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"completion", sh}, &out, &out); err != nil || !strings.Contains(out.String(), "switchboard") {
			t.Errorf("completion %s: %v %.80q", sh, err, out.String())
		}
	}
}

// The single-dash long flags Go's flag package took still work.
func TestGoStyleFlags(t *testing.T) {
	got := strings.Join(goStyleFlags([]string{"serve", "-addr", ":1", "--role", "api", "-h", "--rate-burst", "-1", "--", "-x"}), " ")
	if want := "serve --addr :1 --role api -h --rate-burst -1 -- -x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// errorsJoin wraps err with a prefix, as a command would.
func errorsJoin(prefix string, err error) error { return fmt.Errorf("%s%w", prefix, err) }
