package app

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestGatewaySettingsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name                                           string
		deviceName, platform, presence, fullSync, days string
		want                                           GatewaySettings
		wantErr                                        bool
	}{
		{"defaults", "", "", "", "", "", GatewaySettings{DeviceName: "Switchboard", Platform: "desktop"}, false},
		{"all set", "Acme Support", "chrome", "false", "false", "",
			GatewaySettings{DeviceName: "Acme Support", Platform: "chrome", HidePresence: true, RecentHistoryOnly: true}, false},
		{"a year of history", "", "", "", "true", "365",
			GatewaySettings{DeviceName: "Switchboard", Platform: "desktop", FullSyncDays: 365}, false},
		{"unknown platform", "", "commodore64", "", "", "", GatewaySettings{}, true},
		{"bad presence", "", "", "sometimes", "", "", GatewaySettings{}, true},
		{"bad days", "", "", "", "", "-1", GatewaySettings{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SWITCHBOARD_GATEWAY_DEVICE_NAME", tc.deviceName)
			t.Setenv("SWITCHBOARD_GATEWAY_PLATFORM", tc.platform)
			t.Setenv("SWITCHBOARD_GATEWAY_PRESENCE", tc.presence)
			t.Setenv("SWITCHBOARD_GATEWAY_FULL_SYNC", tc.fullSync)
			t.Setenv("SWITCHBOARD_GATEWAY_FULL_SYNC_DAYS", tc.days)
			c, err := ConfigFromEnv()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, c.Gateway); diff != "" {
					t.Errorf("Gateway (-want +got):\n%s", diff)
				}
			}
		})
	}
}

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
			got := c.Gateway.ReplacedRetry
			if diff := cmp.Diff(tc.want, got); diff != "" || (tc.want == nil) != (got == nil) {
				t.Errorf("ReplacedRetry (-want +got):\n%s (nil %v)", diff, got == nil)
			}
		})
	}
}
