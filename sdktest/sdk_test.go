// Package sdktest drives Switchboard with the official SDK (npm blueticks, pinned in
// package.json): a real client's encodings, envelopes and error classes.
package sdktest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/apptest"
)

// redisDB is this package's database index on TEST_REDIS_URL.
const redisDB = 7

// TestOfficialSDK runs sdk.test.mjs with node against a fresh Switchboard. It needs
// `npm ci` in this directory first; without node_modules it is skipped, except in CI
// (CI=true), where .ci/run installs them and a skip would hide a failure.
func TestOfficialSDK(t *testing.T) {
	if _, err := os.Stat("node_modules/blueticks/package.json"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sdktest/node_modules is missing: run `npm ci` in sdktest/")
		}
		t.Skip("sdktest/node_modules is missing: run `npm ci` in sdktest/ to drive the server with the SDK")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for the SDK test: ", err)
	}
	e := apptest.New(t, apptest.Options{RedisDB: redisDB})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "sdk.test.mjs")
	cmd.Env = append(os.Environ(), "BLUETICKS_BASE_URL="+e.Server.URL, "BLUETICKS_API_KEY="+e.Key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
