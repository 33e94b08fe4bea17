package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/remote/conformance"
)

// conformanceOpts are the options of engine conformance.
type conformanceOpts struct {
	to           string
	wait         time.Duration
	json, output bool
}

// newEngineConformanceCmd is `switchboard engine conformance`: the engine
// protocol's conformance kit.
func newEngineConformanceCmd() *cobra.Command {
	var o conformanceOpts
	cmd := &cobra.Command{
		Use:   "conformance [flags] -- COMMAND [ARGS...]",
		Short: "Check that an engine speaks the engine protocol (the conformance kit)",
		Long: `Start a Switchboard of its own (an embedded database and Redis in a temporary directory, on
a free loopback port), run COMMAND as the engine under test with SWITCHBOARD_SERVER and
SWITCHBOARD_ENGINE_TOKEN in its environment, and check the engine protocol's contract
(docs/engine-protocol.md): the handshake, heartbeats, unknown frame types, methods and fields,
malformed params, every command of the capabilities the hello announces with its reply's
shape, a message sent through the API, event batches and their acks, resending after an ack
error, reconnecting, and no reconnect after a final close. Every frame the engine sends is
validated against the protocol's JSON Schema. It prints one line a check and exits 1 when one
failed. --to (default +15550002222) must be a number on the engine's network.`,
		Example: `  switchboard engine conformance -- switchboard engine sandbox
  switchboard engine conformance -- node examples/engine-node/index.js
  switchboard engine conformance --json --to +15550003333 -- ./my-engine`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConformance(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.to, "to", "+15550002222", "a number on the engine's network (E.164) the kit sends messages to")
	fs.DurationVar(&o.wait, "wait", 15*time.Second, "how long the kit waits for each answer of the engine")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.BoolVar(&o.output, "engine-output", false, "show the engine's output as it runs (by default only when a check failed)")
	return cmd
}

// runConformance runs the kit against the engine that command starts.
func runConformance(ctx context.Context, o conformanceOpts, command []string, stdout, stderr io.Writer) error {
	if !remote.ValidPhone(o.to) {
		return fmt.Errorf("engine conformance: --to %q is not an E.164 number such as +15550002222", o.to)
	}
	var engineOut bytes.Buffer
	out := io.Writer(&engineOut)
	if o.output {
		out = stderr
	}
	fmt.Fprintf(stderr, "conformance: running %s\n", strings.Join(command, " "))
	r, err := conformance.Run(ctx, conformance.Options{Command: command, To: o.to, Wait: o.wait, Output: out})
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		r.Write(stdout)
	}
	if n := r.Failed(); n > 0 {
		if !o.output && engineOut.Len() > 0 {
			fmt.Fprintf(stderr, "\nthe engine's output:\n%s\n", tail(engineOut.String(), 60))
		}
		return fmt.Errorf("engine conformance: %d checks failed", n)
	}
	return nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
