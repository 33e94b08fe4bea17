package conformance_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/engine/remote/conformance"
)

// The engine in Node under examples/engine-node, written from
// docs/engine-protocol.md alone, passes every check. It needs node (20 or
// later) and the example's packages (`npm ci` in examples/engine-node); the
// test is skipped without them, but under CI=true.
func TestNodeEngineConforms(t *testing.T) {
	skip := t.Skip
	if os.Getenv("CI") == "true" {
		skip = t.Fatal // .ci/run installs node and the packages
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "engine-node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws")); err != nil {
		skip("run npm ci in examples/engine-node first")
	}
	var out bytes.Buffer
	r, err := conformance.Run(context.Background(), conformance.Options{Command: []string{node, filepath.Join(dir, "index.js")}, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, r)
	for _, name := range []string{"handshake", "command Send", "send through the API", "resend after an ack error", "reconnect", "frames"} {
		if c, ok := r.Find(name); !ok || c.Status != conformance.Pass {
			t.Errorf("check %q: %+v, want PASS", name, c)
		}
	}
	if r.Failed() > 0 {
		t.Errorf("%d checks failed; the engine said:\n%s", r.Failed(), out.String())
	}
}
