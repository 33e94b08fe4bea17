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
// test is skipped without them.
func TestNodeEngineConforms(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "engine-node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws")); err != nil {
		t.Skip("run npm ci in examples/engine-node first")
	}
	var out bytes.Buffer
	r, err := conformance.Run(context.Background(), conformance.Options{Command: []string{node, filepath.Join(dir, "index.js")}, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	logReport(t, r)
	if r.Failed() > 0 {
		t.Errorf("%d checks failed; the engine said:\n%s", r.Failed(), out.String())
	}
}
