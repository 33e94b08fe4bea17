// Package e2e drives the dashboard in headless Chromium (Debian's chromium,
// through playwright-core pinned in package.json) against the real binary on the
// embedded default, as `make run` starts it.
package e2e

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard"
)

// chromium is where Debian's package puts the browser; CHROMIUM overrides it.
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// TestDashboardInChromium builds the server, starts it as `make run` does (in a
// scratch directory, with an operator token), reads the bootstrap key it prints
// and runs dashboard.mjs. Screenshots go to E2E_SCREENSHOTS, or to a temporary
// directory whose path the test logs. Without Chromium or node_modules it is
// skipped, except in CI (CI=true), where .ci/run installs them. It runs on the
// embedded default only: the run with TEST_DATABASE_URL skips it.
func TestDashboardInChromium(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") != "" {
		t.Skip("the dashboard's browser test runs on the embedded default (make run), not on TEST_DATABASE_URL")
	}
	missing := ""
	if _, err := os.Stat("node_modules/playwright-core/package.json"); err != nil {
		missing = "e2e/node_modules (run `npm ci` in e2e/)"
	} else if _, err := os.Stat(chromium()); err != nil {
		missing = chromium() + " (apt-get install chromium)"
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = "node"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing", missing)
		}
		t.Skipf("%s is missing", missing)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-o", bin, "../cmd/switchboard")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	token := switchboard.RandomToken(24) // 32 characters: the operator token must have 24 at least
	// the server's start, then about 2 minutes of browsing
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", addr)
	srv.Dir = dir
	// webhooks may reach loopback: the test's webhook points at a closed local port
	srv.Env = append(cleanEnv(), "SWITCHBOARD_OPERATOR_TOKEN="+token, "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	srv.Stderr = logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()

	key := make(chan string, 1)
	go func() { // the bootstrap key, as make run prints it; the rest of stdout is drained
		re := regexp.MustCompile(`^sb_live_\S+$`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if re.MatchString(strings.TrimSpace(sc.Text())) {
				key <- strings.TrimSpace(sc.Text())
			}
		}
	}()
	var bootstrap string
	select {
	case bootstrap = <-key:
	case <-ctx.Done():
		t.Fatalf("the server printed no bootstrap key; its log:\n%s", readFile(filepath.Join(dir, "server.log")))
	}
	base := "http://" + addr
	waitHealthy(t, ctx, base)

	shots := os.Getenv("E2E_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(dir, "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, "dashboard.mjs")
	cmd.Env = append(os.Environ(), "BASE_URL="+base, "KEY="+bootstrap, "OPERATOR_TOKEN="+token,
		"SCREENSHOTS="+shots, "CHROMIUM="+chromium())
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	t.Logf("screenshots in %s", shots)
	if err != nil {
		t.Fatalf("dashboard.mjs: %v; the server's log:\n%s", err, readFile(filepath.Join(dir, "server.log")))
	}
}

// cleanEnv is the environment without the settings that would move the server
// off the embedded default.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SWITCHBOARD_") || strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "REDIS_URL=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHealthy(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	for ctx.Err() == nil {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the server never became healthy")
}

func readFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}
