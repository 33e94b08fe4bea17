package app

import (
	"fmt"
	"strings"
	"time"
)

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
