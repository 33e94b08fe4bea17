package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hibiken/asynq"
)

func TestLoadOlderPaceFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env     string
		want    time.Duration
		wantErr bool
	}{
		{"", 2500 * time.Millisecond, false},
		{"1s", time.Second, false},
		{"0s", 0, true},
		{"-1s", 0, true},
		{"soon", 0, true},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("SWITCHBOARD_LOAD_OLDER_PACE", tc.env)
			c, err := ConfigFromEnv()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, c.LoadOlderPace); diff != "" {
					t.Errorf("LoadOlderPace (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseRateLimit(t *testing.T) {
	for _, tc := range []struct {
		rate    string
		burst   int
		want    redis_rate.Limit
		wantErr bool
	}{
		{"1200/m", 100, redis_rate.Limit{Rate: 1200, Period: time.Minute, Burst: 100}, false},
		{"20/s", 5, redis_rate.Limit{Rate: 20, Period: time.Second, Burst: 5}, false},
		{"10000/h", 1, redis_rate.Limit{Rate: 10000, Period: time.Hour, Burst: 1}, false},
		{"off", 0, redis_rate.Limit{}, false},
		{"", 0, redis_rate.Limit{}, false},
		{"1200", 100, redis_rate.Limit{}, true},
		{"1200/d", 100, redis_rate.Limit{}, true},
		{"0/s", 100, redis_rate.Limit{}, true},
		{"-5/s", 100, redis_rate.Limit{}, true},
		{"many/s", 100, redis_rate.Limit{}, true},
		{"20/s", 0, redis_rate.Limit{}, true},
	} {
		t.Run(tc.rate, func(t *testing.T) {
			got, err := ParseRateLimit(tc.rate, tc.burst)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRateLimitFromEnv(t *testing.T) {
	c, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimit != DefaultRateLimit || c.RateBurst != DefaultRateBurst {
		t.Errorf("defaults: %q burst %d", c.RateLimit, c.RateBurst)
	}
	t.Setenv("SWITCHBOARD_RATE_LIMIT", "5/s")
	t.Setenv("SWITCHBOARD_RATE_BURST", "7")
	if c, err = ConfigFromEnv(); err != nil || c.rateLimit() != (redis_rate.Limit{Rate: 5, Period: time.Second, Burst: 7}) {
		t.Errorf("from env: %+v %v", c.rateLimit(), err)
	}
	c.RateLimit = "fast"
	if err := c.validate(); err == nil {
		t.Error("a bad rate limit passed validation")
	}
}

// The direct-send limit per engine: 60/m by default (60 at once, then one a
// second), from SWITCHBOARD_ENGINE_SEND_LIMIT, off when asked; a bad one does
// not start.
func TestEngineSendLimitFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env     string // "" leaves it unset
		want    redis_rate.Limit
		wantErr bool
	}{
		{"", redis_rate.Limit{Rate: 60, Period: time.Minute, Burst: 60}, false},
		{"5/s", redis_rate.Limit{Rate: 5, Period: time.Second, Burst: 5}, false},
		{"off", redis_rate.Limit{}, false},
		{"lots", redis_rate.Limit{}, true},
	} {
		t.Run(tc.env, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("SWITCHBOARD_ENGINE_SEND_LIMIT", tc.env)
			}
			c, err := ConfigFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.validate(); (err != nil) != tc.wantErr {
				t.Fatalf("validate: %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, c.engineSendLimit()); diff != "" {
				t.Errorf("limit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRedisURL(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		want    asynq.RedisConnOpt
		wantErr bool
	}{
		{"redis://127.0.0.1:6379/3", asynq.RedisClientOpt{Addr: "127.0.0.1:6379", DB: 3}, false},
		{"redis://:pw@10.0.0.1:6380", asynq.RedisClientOpt{Addr: "10.0.0.1:6380", Password: "pw"}, false},
		{"redis-sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379/2?master=main&sentinel_password=spw",
			asynq.RedisFailoverClientOpt{MasterName: "main", SentinelAddrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"},
				Password: "pw", SentinelPassword: "spw", DB: 2}, false},
		{"redis-cluster://:pw@10.0.0.1:7000,10.0.0.2:7001", asynq.RedisClusterClientOpt{
			Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7001"}, Password: "pw"}, false},
		{"redis-sentinel://:pw@10.0.0.1:26379", nil, true},        // no master
		{"redis-sentinel://10.0.0.1:26379/x?master=m", nil, true}, // bad database
		{"redis-cluster://10.0.0.1:7000/1", nil, true},            // clusters have database 0 only
		{"memcached://10.0.0.1", nil, true},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := ParseRedisURL(tc.raw)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("the error shows the password: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(asynq.RedisClientOpt{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A server refuses to start with an operator token that is easy to guess, and
// says why without showing the token.
func TestOperatorTokenStrength(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"", true}, // no token: the read-write monitor stays closed
		{"6Jq0w8xG1sVb2Zk9LrT4yPn3", true},
		{"op-secret-token", false},        // 15 characters
		{"operator-metrics-token", false}, // 22
		{strings.Repeat("ab", 16), false}, // 32, but 2 different characters
		{" 6Jq0w8xG1sVb2Zk9LrT4yPn3", false},
	} {
		t.Run(tc.token, func(t *testing.T) {
			if tc.ok {
				c := Config{Role: RoleAll, OperatorToken: tc.token}
				if err := c.validate(); err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			// New checks the configuration before it opens anything.
			_, err := New(context.Background(), Config{Role: RoleAll, OperatorToken: tc.token, DatabaseURL: "sqlite://" + t.TempDir() + "/x.db"})
			if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_OPERATOR_TOKEN") {
				t.Fatalf("err = %v, want the operator token refused", err)
			}
			if tc.token != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.token)) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestLimitsPerAddressAndWorkspaceFromEnv(t *testing.T) {
	c, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	ws, _ := c.workspaceRateLimit()
	want := struct{ Key, Workspace, Address, Failures redis_rate.Limit }{
		redis_rate.Limit{Rate: 1200, Period: time.Minute, Burst: 100},
		redis_rate.Limit{Rate: 6000, Period: time.Minute, Burst: 500}, // WorkspaceRateFactor keys' worth
		redis_rate.Limit{Rate: 20, Period: time.Second, Burst: 100},
		redis_rate.Limit{Rate: 20, Period: time.Hour, Burst: 20},
	}
	got := want
	got.Key, got.Workspace, got.Address, got.Failures = c.rateLimit(), ws, c.addressRateLimit(), c.authFailureLimit()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if len(c.TrustedProxies) != 0 {
		t.Errorf("trusted proxies by default: %v", c.TrustedProxies)
	}

	t.Setenv("SWITCHBOARD_WORKSPACE_RATE_LIMIT", "100/s")
	t.Setenv("SWITCHBOARD_WORKSPACE_RATE_BURST", "50")
	t.Setenv("SWITCHBOARD_ADDRESS_RATE_LIMIT", "off")
	t.Setenv("SWITCHBOARD_AUTH_FAILURE_LIMIT", "5/m")
	t.Setenv("SWITCHBOARD_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7,fd00::/8")
	if c, err = ConfigFromEnv(); err != nil {
		t.Fatal(err)
	}
	ws, err = c.workspaceRateLimit()
	if err != nil || ws != (redis_rate.Limit{Rate: 100, Period: time.Second, Burst: 50}) {
		t.Errorf("workspace limit from env: %+v %v", ws, err)
	}
	if !c.addressRateLimit().IsZero() || c.authFailureLimit() != (redis_rate.Limit{Rate: 5, Period: time.Minute, Burst: 5}) {
		t.Errorf("address %+v, failures %+v", c.addressRateLimit(), c.authFailureLimit())
	}
	if got := fmt.Sprint(c.TrustedProxies); got != "[10.0.0.0/8 192.0.2.7/32 fd00::/8]" {
		t.Errorf("trusted proxies = %s", got)
	}
	// A key without a limit leaves the workspace unlimited unless it is set.
	c = Config{Role: RoleAll, RateLimit: "off"}
	if ws, err := c.workspaceRateLimit(); err != nil || !ws.IsZero() {
		t.Errorf("workspace limit of unlimited keys = %+v %v", ws, err)
	}

	for name, bad := range map[string]string{
		"SWITCHBOARD_TRUSTED_PROXIES":    "10.0.0.0/33",
		"SWITCHBOARD_ADDRESS_RATE_BURST": "many",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("err = %v", err)
			}
		})
	}
	for _, c := range []Config{
		{Role: RoleAll, AuthFailureLimit: "often"},
		{Role: RoleAll, AddressRateLimit: "5/d", AddressRateBurst: 1},
		{Role: RoleAll, WorkspaceRateLimit: "0/s"},
	} {
		if err := c.validate(); err == nil {
			t.Errorf("%+v passed validation", c)
		}
	}
}

func TestSandboxWorkspacesFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{"", []string{DefaultWorkspace}},
		{"*", []string{"*"}},
		{"default,acme", []string{"default", "acme"}},
		{"none", nil},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("SWITCHBOARD_SANDBOX_WORKSPACES", tc.env)
			c, err := ConfigFromEnv()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.SandboxWorkspaces); diff != "" {
				t.Errorf("SandboxWorkspaces (-want +got):\n%s", diff)
			}
		})
	}
}

// The media settings come from the environment; a bad SWITCHBOARD_MEDIA_URL or
// SWITCHBOARD_MEDIA_MAX_BYTES stops the start with an error naming it.
func TestMediaSettingsFromEnv(t *testing.T) {
	tests := []struct {
		url, maxBytes, wantErr string
	}{
		{"", "", ""},
		{"db:", "1048576", ""},
		{"s3://k:s@media/sb?endpoint=127.0.0.1:9000&secure=false", "", ""},
		{"", "-1", "SWITCHBOARD_MEDIA_MAX_BYTES"},
		{"", "lots", "SWITCHBOARD_MEDIA_MAX_BYTES"},
		{"ftp://media", "", "SWITCHBOARD_MEDIA_URL"},
		{"s3://k:s@media?secure=perhaps", "", "SWITCHBOARD_MEDIA_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.url+" "+tc.maxBytes, func(t *testing.T) {
			t.Setenv("SWITCHBOARD_MEDIA_URL", tc.url)
			t.Setenv("SWITCHBOARD_MEDIA_MAX_BYTES", tc.maxBytes)
			c, err := ConfigFromEnv()
			if err == nil {
				err = c.validate()
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
			}
			if err == nil && (c.MediaURL != tc.url || tc.maxBytes == "1048576" && c.MediaMaxBytes != 1<<20) {
				t.Errorf("MediaURL %q, MediaMaxBytes %d", c.MediaURL, c.MediaMaxBytes)
			}
		})
	}
}
