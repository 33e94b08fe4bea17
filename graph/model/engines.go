package model

import (
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
)

// Engine is an engine row as the API shows it, with whether it is connected now.
type Engine struct {
	Row       *ent.Engine
	Connected bool
	// Default says the engine is its workspace's default (dispatch.DefaultEngines).
	Default bool
}

// ID is the engine's id.
func (e *Engine) ID() string { return e.Row.ID }

// Kind is sandbox, remote or gateway.
func (e *Engine) Kind() string { return e.Row.Kind.String() }

// Name is the engine's name.
func (e *Engine) Name() string { return e.Row.Name }

// Type is the engine type the API reports: what the engine said in its hello, or
// regular for a remote engine that never connected, gateway for the others.
func (e *Engine) Type() string {
	switch {
	case e.Row.Type != "":
		return e.Row.Type
	case e.Row.Kind == entengine.KindRemote:
		return engine.KindRegular
	}
	return engine.KindGateway
}

// Phone is the account's own number as the engine reported it in its hello;
// null when it reported none.
func (e *Engine) Phone() *string {
	if e.Row.Phone == "" {
		return nil
	}
	return &e.Row.Phone
}

// State is CONNECTED while the engine is connected, else the row's state.
func (e *Engine) State() string {
	switch {
	case e.Connected && e.Row.Kind == entengine.KindRemote && reportedState(engine.State(e.Row.State)):
		// A remote engine stays connected to the server while its session is
		// not (pairing, banned, ...): the state it reported (docs/engines.md,
		// "State reporting").
		return e.Row.State
	case e.Connected:
		return string(engine.StateConnected)
	case engine.State(e.Row.State) == engine.StateConnected:
		return string(engine.StateDisconnected)
	}
	return e.Row.State
}

// Stream is a gateway's network stream (open, connecting or closed); null for
// other engines.
func (e *Engine) Stream() *string { return e.Row.Stream }

// HasSynced is whether a gateway's phone sent its history sync; null for other
// engines.
func (e *Engine) HasSynced() *bool { return e.Row.HasSynced }

// Restriction is why the network restricts the account now; null when it does not.
func (e *Engine) Restriction() *string {
	if !e.restricted() {
		return nil
	}
	return &e.Row.Restriction
}

// LastError is the engine's last connection or pairing error; null when it
// never had one.
func (e *Engine) LastError() *string {
	if e.Row.LastError == "" {
		return nil
	}
	return &e.Row.LastError
}

// LastErrorAt is when LastError was last reported.
func (e *Engine) LastErrorAt() *time.Time { return e.Row.LastErrorAt }

// RestrictedUntil is when the restriction ends; null without one.
func (e *Engine) RestrictedUntil() *time.Time {
	if !e.restricted() {
		return nil
	}
	return e.Row.RestrictedUntil
}

// restricted: the row names a restriction that has not ended yet.
func (e *Engine) restricted() bool {
	return e.Row.Restriction != "" && (e.Row.RestrictedUntil == nil || time.Now().Before(*e.Row.RestrictedUntil))
}

// TokenPrefix is the shown part of a remote engine's token.
func (e *Engine) TokenPrefix() *string {
	if e.Row.TokenPrefix == "" {
		return nil
	}
	return &e.Row.TokenPrefix
}

// ConnectedAt is when the engine last connected.
func (e *Engine) ConnectedAt() *time.Time { return e.Row.ConnectedAt }

// DisconnectedAt is when the engine last disconnected.
func (e *Engine) DisconnectedAt() *time.Time { return e.Row.DisconnectedAt }

// CreatedAt is when the engine was created.
func (e *Engine) CreatedAt() time.Time { return e.Row.CreatedAt }

// UpdatedAt is when the row last changed.
func (e *Engine) UpdatedAt() time.Time { return e.Row.UpdatedAt }

// RejectCalls is whether the engine rejects incoming calls (docs/calls.md).
func (e *Engine) RejectCalls() bool { return e.Row.RejectCalls }

// RejectCallsMessage is the message a rejected caller is answered with; nil
// when none.
func (e *Engine) RejectCallsMessage() *string {
	if e.Row.RejectCallsMessage == "" {
		return nil
	}
	return &e.Row.RejectCallsMessage
}

// reportedState reports whether a remote engine's row state is one a state
// frame reported rather than its connection's.
func reportedState(s engine.State) bool {
	switch s {
	case engine.StatePairing, engine.StateUnpaired, engine.StateOpening, engine.StateLoggedOut, engine.StateBanned, engine.StateConflict:
		// not DISCONNECTED: a row may still hold the one its last socket's end
		// wrote while the new socket's connection is being applied
		return true
	}
	return false
}
