package app

import (
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
