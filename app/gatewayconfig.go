package app

import (
	"fmt"
	"strconv"

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
}

// identity is the gateway.Identity of s.
func (s GatewaySettings) identity() gateway.Identity {
	return gateway.Identity{Name: s.DeviceName, Platform: s.Platform, FullSync: !s.RecentHistoryOnly, FullSyncDays: s.FullSyncDays}
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
	c.Gateway = g
	return nil
}
