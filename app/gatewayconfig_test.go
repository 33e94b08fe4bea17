package app

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGatewayReplacedRetryFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env     string
		want    []time.Duration
		wantErr bool
	}{
		{"", nil, false}, // the gateway's default, 1m,5m,15m
		{"off", []time.Duration{}, false},
		{"30s, 2m", []time.Duration{30 * time.Second, 2 * time.Minute}, false},
		{"1m,never", nil, true},
		{"-1m", nil, true},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("SWITCHBOARD_GATEWAY_REPLACED_RETRY", tc.env)
			c, err := ConfigFromEnv()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, c.GatewayReplacedRetry); diff != "" || (tc.want == nil) != (c.GatewayReplacedRetry == nil) {
				t.Errorf("GatewayReplacedRetry (-want +got):\n%s (nil %v)", diff, c.GatewayReplacedRetry == nil)
			}
		})
	}
}
