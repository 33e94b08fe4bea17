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
}

// identity is the gateway.Identity of s.
func (s GatewaySettings) identity() gateway.Identity {
	return gateway.Identity{Name: s.DeviceName, Platform: s.Platform, FullSync: !s.RecentHistoryOnly}
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
	if err := gateway.CheckIdentity(g.identity()); err != nil {
		return fmt.Errorf("SWITCHBOARD_GATEWAY_PLATFORM / SWITCHBOARD_GATEWAY_DEVICE_NAME: %w", err)
	}
	c.Gateway = g
	return nil
}
