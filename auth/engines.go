package auth

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/viewer"
)

// EngineTokenPrefix starts every engine token. An engine token authenticates a
// remote engine on the engine protocol and nothing else; like a key, only its
// SHA-256 is stored.
const EngineTokenPrefix = "sb_engine_"

// NewEngineToken returns a new engine token, its stored hash and the prefix that
// may be shown.
func NewEngineToken() (token, hash, prefix string) {
	token = EngineTokenPrefix + switchboard.RandomToken(24)
	return token, Hash(token), RedactEngineToken(token)
}

// RedactEngineToken returns the part of an engine token that may be shown or logged.
func RedactEngineToken(token string) string {
	n := len(EngineTokenPrefix) + 4
	if len(token) <= n {
		return strings.Repeat("*", len(token))
	}
	return token[:n] + "…"
}

// AuthenticateEngine returns the remote engine a token belongs to, or
// EUNAUTHORIZED.
func AuthenticateEngine(ctx context.Context, client *ent.Client, token string) (*ent.Engine, error) {
	if !strings.HasPrefix(token, EngineTokenPrefix) || len(token) > maxKeyLen {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "Malformed engine token: tokens look like %s<opaque>.", EngineTokenPrefix)
	}
	e, err := client.Engine.Query().Where(entengine.TokenHash(Hash(token))).Only(viewer.SystemContext(ctx))
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.EUNAUTHORIZED, "Unknown engine token.")
	} else if err != nil {
		return nil, fmt.Errorf("auth: look up engine token: %w", err)
	}
	return e, nil
}
