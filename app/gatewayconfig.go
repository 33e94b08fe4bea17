package app

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine/gateway"
)

// GatewaySettings is how the gateway engines of the process present themselves
// and behave on the network. The device name, platform and history choice are
// one per process (whatsmeow keeps them in process-wide variables): they apply
// to the devices paired after start.
type GatewaySettings struct {
	// DeviceName is the name the phone lists the device by
	// (SWITCHBOARD_GATEWAY_DEVICE_NAME, gateway.DefaultDeviceName).
	DeviceName string
	// Platform is the kind of client the phone shows: desktop, chrome,
	// firefox, safari, edge or opera (SWITCHBOARD_GATEWAY_PLATFORM,
	// gateway.DefaultPlatform).
	Platform string
	// HidePresence keeps the engines from telling the network the account is
	// available once connected (SWITCHBOARD_GATEWAY_PRESENCE=false).
	HidePresence bool
	// RecentHistoryOnly asks the phone for its recent history only when
	// pairing, not the full history (SWITCHBOARD_GATEWAY_FULL_SYNC=false).
	RecentHistoryOnly bool
	// FullSyncDays bounds the full history to its last days
	// (SWITCHBOARD_GATEWAY_FULL_SYNC_DAYS; 0, the default: the phone's own bound).
	FullSyncDays uint32
	// ReplacedRetry are the waits before each automatic retry of a session
	// another client replaced (SWITCHBOARD_GATEWAY_REPLACED_RETRY: nil, the
	// gateway's default 1m,5m,15m; empty for none).
	ReplacedRetry []time.Duration
}

// identity is the gateway.Identity of s.
func (s GatewaySettings) identity() gateway.Identity {
	return gateway.Identity{Name: s.DeviceName, Platform: s.Platform, FullSync: !s.RecentHistoryOnly, FullSyncDays: s.FullSyncDays}
}

// Identity is the gateway.Identity of s (gateway.SetIdentity takes it).
func (s GatewaySettings) Identity() gateway.Identity { return s.identity() }

// GatewayFromEnv reads the SWITCHBOARD_GATEWAY_* settings, for a gateway
// engine run out of process (switchboard engine gateway).
func GatewayFromEnv() (GatewaySettings, error) {
	var c Config
	err := c.gatewayFromEnv()
	return c.Gateway, err
}

// gatewayFromEnv reads the SWITCHBOARD_GATEWAY_* settings.
func (c *Config) gatewayFromEnv() error {
	g := GatewaySettings{DeviceName: env("SWITCHBOARD_GATEWAY_DEVICE_NAME", gateway.DefaultDeviceName),
		Platform: env("SWITCHBOARD_GATEWAY_PLATFORM", gateway.DefaultPlatform)}
	for name, dst := range map[string]*bool{"SWITCHBOARD_GATEWAY_PRESENCE": &g.HidePresence, "SWITCHBOARD_GATEWAY_FULL_SYNC": &g.RecentHistoryOnly} {
		on, err := strconv.ParseBool(env(name, "true"))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*dst = !on
	}
	days, err := strconv.ParseUint(env("SWITCHBOARD_GATEWAY_FULL_SYNC_DAYS", "0"), 10, 32)
	if err != nil {
		return fmt.Errorf("SWITCHBOARD_GATEWAY_FULL_SYNC_DAYS: must be a number of days (%w)", err)
	}
	g.FullSyncDays = uint32(days)
	if err := gateway.CheckIdentity(g.identity()); err != nil {
		return fmt.Errorf("SWITCHBOARD_GATEWAY_PLATFORM / SWITCHBOARD_GATEWAY_DEVICE_NAME: %w", err)
	}
	if g.ReplacedRetry, err = gatewayReplacedRetry(); err != nil {
		return err
	}
	c.Gateway = g
	return nil
}

// gatewayReplacedRetry reads SWITCHBOARD_GATEWAY_REPLACED_RETRY: the waits
// before each automatic retry of a gateway session another client replaced
// (default 1m,5m,15m), or "off" for none (the session then waits for a
// restart at once). Nil stands for the gateway's own default.
func gatewayReplacedRetry() ([]time.Duration, error) {
	v := strings.TrimSpace(env("SWITCHBOARD_GATEWAY_REPLACED_RETRY", ""))
	switch v {
	case "":
		return nil, nil
	case "off":
		return []time.Duration{}, nil
	}
	s, err := ParseSchedule(v)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_GATEWAY_REPLACED_RETRY: %w (durations such as 1m,5m,15m, or off)", err)
	}
	return s, nil
}
