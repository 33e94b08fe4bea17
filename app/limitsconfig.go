package app

import (
	"fmt"
	"os"
	"strconv"
)

// limitsFromEnv reads the rate limits (per key, per workspace, per address,
// failed authentications, engine sends) and the proxies trusted to name the
// client's address.
func (c *Config) limitsFromEnv() error {
	var err error
	c.RateLimit = env("SWITCHBOARD_RATE_LIMIT", DefaultRateLimit)
	if c.RateBurst, err = strconv.Atoi(env("SWITCHBOARD_RATE_BURST", strconv.Itoa(DefaultRateBurst))); err != nil {
		return fmt.Errorf("SWITCHBOARD_RATE_BURST: %w", err)
	}
	c.WorkspaceRateLimit = os.Getenv("SWITCHBOARD_WORKSPACE_RATE_LIMIT")
	if c.WorkspaceRateBurst, err = strconv.Atoi(env("SWITCHBOARD_WORKSPACE_RATE_BURST", "0")); err != nil {
		return fmt.Errorf("SWITCHBOARD_WORKSPACE_RATE_BURST: %w", err)
	}
	c.AddressRateLimit = env("SWITCHBOARD_ADDRESS_RATE_LIMIT", DefaultAddressRateLimit)
	if c.AddressRateBurst, err = strconv.Atoi(env("SWITCHBOARD_ADDRESS_RATE_BURST", strconv.Itoa(DefaultAddressRateBurst))); err != nil {
		return fmt.Errorf("SWITCHBOARD_ADDRESS_RATE_BURST: %w", err)
	}
	c.AuthFailureLimit = env("SWITCHBOARD_AUTH_FAILURE_LIMIT", DefaultAuthFailureLimit)
	c.EngineSendLimit = env("SWITCHBOARD_ENGINE_SEND_LIMIT", DefaultEngineSendLimit)
	if c.TrustedProxies, err = ParseTrustedProxies(os.Getenv("SWITCHBOARD_TRUSTED_PROXIES")); err != nil {
		return fmt.Errorf("SWITCHBOARD_TRUSTED_PROXIES: %w", err)
	}
	return nil
}
