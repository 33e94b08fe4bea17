package engine

import (
	"context"

	"github.com/switchboardhq/switchboard"
)

// Kinds of engine rows a workspace owns (what runs the session, as opposed to
// Kind, the type the API reports).
const (
	RowSandbox = "sandbox" // the simulated network inside the server
	RowRemote  = "remote"  // an engine that connects over the engine WebSocket protocol
	RowGateway = "gateway" // a server-side gateway on the real network
)

// State is an engine's connection state as its row (and the API) shows it: one
// vocabulary for every kind of engine. Every engine is connected, disconnected or
// logged out; a gateway also reports the finer states of its session (see
// host.RowState).
type State string

// Engine states.
const (
	StateConnected    State = "CONNECTED"
	StateDisconnected State = "DISCONNECTED"
	StateLoggedOut    State = "LOGGED_OUT"
	StateOpening      State = "OPENING"  // a gateway connecting to the network
	StatePairing      State = "PAIRING"  // a gateway showing a QR or pairing code
	StateUnpaired     State = "UNPAIRED" // a gateway with no device yet
	StateBanned       State = "BANNED"   // a gateway's account, temporarily banned
	StateConflict     State = "CONFLICT" // a gateway's session, taken by another client
)

// ErrDisconnected is a command to an engine that is not connected, or whose
// connection was lost while the command waited for its answer.
var ErrDisconnected = &switchboard.Error{Code: switchboard.EDISCONNECTED,
	Message: "The engine is not connected; the command was not carried out. Retry once it is connected (GET /v1/engines)."}

// ErrTimeout is a command the engine did not answer in time; it may or may not
// have been carried out.
var ErrTimeout = &switchboard.Error{Code: switchboard.ETIMEOUT,
	Message: "The engine did not answer in time; the command may or may not have been carried out."}

// Pairer is an engine that links to a phone: by a QR code the phone scans, or by
// a code typed on the phone. Engines with nothing to pair (the sandbox, remote
// engines) do not implement it.
type Pairer interface {
	// PairingQR returns the payload of the QR code to show now.
	PairingQR(ctx context.Context) (string, error)
	// PairingCode returns a code to type on the phone of the number phone (E.164 digits).
	PairingCode(ctx context.Context, phone string) (string, error)
}

// LoggerOut is an engine that can unlink itself from its account.
type LoggerOut interface {
	Logout(ctx context.Context) error
}

// Restarter is an engine whose session can be restarted: disconnected and
// connected again on the same account, which stays linked (a gateway whose
// session another client replaced, or one stuck offline).
type Restarter interface {
	Restart(ctx context.Context) error
}

// Remote finds the engines whose sessions this process may not hold: engines
// connected over the engine protocol to any replica.
type Remote interface {
	// Lookup returns a connected remote engine of the workspace, or ErrNoEngine.
	Lookup(ctx context.Context, workspaceID string) (Engine, error)
	// Get returns the connected remote engine engineID of the workspace, or
	// ErrDisconnected.
	Get(ctx context.Context, workspaceID, engineID string) (Engine, error)
}

// Why a session ends (Sessions.End).
const (
	EndLoggedOut = "logged_out" // the account was logged out: the engine must pair again
	EndDeleted   = "deleted"    // the engine was deleted
)

// Sessions ends engine sessions wherever they run (every replica).
type Sessions interface {
	// End ends the session of an engine: reason is EndLoggedOut or EndDeleted.
	End(ctx context.Context, workspaceID, engineID, reason string) error
}
