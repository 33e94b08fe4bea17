// Package remote is the engine WebSocket protocol (docs/engines.md): a remote
// engine process connects to /v1/engines/connect with its engine token, says
// hello, keeps a heartbeat, answers the server's commands and reports events.
//
// The server side is a Hub (one per replica) and Engine, the engine.Engine a
// connected remote engine looks like to the rest of Switchboard, on whichever
// replica the command starts: commands reach the replica that holds the socket
// through Redis. The client side is Client, which serves any engine.Engine over
// the protocol (`switchboard engine sandbox` serves the sandbox with it).
//
// Every engine method is one command: the method's name and its arguments (but
// the context) as a JSON array; the reply is its results (but the error) as a
// JSON array, or an error.
package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Version is the newest protocol version this package speaks.
const Version = 1

// Versions are the protocol versions the server serves, oldest first: a hello
// states the ones the engine speaks (versions, or a single version; none is 1)
// and the welcome the server's (versions) and the one chosen (version, the
// highest common one). A version stays served for at least six months after a
// newer one is released; meanwhile a welcome at it says deprecated.
var Versions = []int{1}

// DeprecatedVersions are the served versions that will stop being served
// (docs/engines.md, "Versions"): the welcome at one of them says deprecated.
var DeprecatedVersions = []int{}

// Path is where the server accepts engine connections.
const Path = "/v1/engines/connect"

// Frame types.
const (
	FrameHello     = "hello"      // engine -> server, first: token (unless sent as a header), kind, capabilities
	FrameWelcome   = "welcome"    // server -> engine: who it is, heartbeat interval, frame and batch limits
	FrameHeartbeat = "heartbeat"  // engine -> server, every heartbeat interval
	FrameCommand   = "command"    // server -> engine: id, method, params, deadline
	FrameReply     = "reply"      // engine -> server: id, result or error
	FrameEvents    = "events"     // engine -> server: id, events
	FrameEventsAck = "events_ack" // server -> engine: id, error when the events were not stored, rejected ones
	// FrameUnsupported answers a frame of a type the server does not know (a
	// newer version's): id and frameType of that frame. The connection stays.
	FrameUnsupported = "unsupported"
	// FrameState: engine -> server, id and state (State): the engine's session
	// as it changes; FrameStateAck answers it (error when not applied).
	FrameState    = "state"
	FrameStateAck = "state_ack"
)

// Limits of the protocol.
const (
	// HelloMaxFrame bounds every frame a connection sends before its welcome (the
	// hello): 64 KiB. No token has been checked yet then, so an unauthenticated
	// socket can make the server hold no more than this; a welcomed engine's
	// frames are bounded by the welcome's maxFrame instead.
	HelloMaxFrame = 64 << 10
	// MaxFeatures bounds the protocol features a hello announces.
	MaxFeatures = 32
	// MaxCapabilities bounds the capabilities a hello announces (there are twenty).
	MaxCapabilities = 64
	// DefaultMaxBatch bounds the events one events frame carries, as the welcome's
	// maxBatch tells the engine: a frame over it is refused whole (events_ack
	// error payload_too_large) before any of its events is decoded.
	DefaultMaxBatch = 1000
)

// FeatureMediaRefs is the protocol feature of media by reference
// (docs/engine-protocol.md, "Media"): the engine uploads the bytes a
// FetchMedia or ProfilePicture command asks for to the command's trailing
// uploadUrl param and replies without data, and fetches a picture the server
// hands it (SetGroupPicture, SetProfile) from its url.
const FeatureMediaRefs = "media_refs"

// Features are the protocol features the server knows, distinct from
// capabilities: they say how the engine speaks, not what it serves.
var Features = []string{FeatureMediaRefs}

// Close codes the server ends a connection with, besides the standard ones
// (1008 policy violation for a malformed frame, 1009 for an oversized one).
const (
	CloseLoggedOut    = 4000 // the engine was logged out through the API
	CloseUnauthorized = 4001 // missing, malformed or unknown token
	CloseDeleted      = 4002 // the engine was deleted through the API
	CloseHeartbeat    = 4003 // no heartbeat within the presence TTL
	CloseReplaced     = 4004 // the same engine connected again
	// CloseUnsupportedVersion: the hello's versions and the server's have none in common.
	CloseUnsupportedVersion = 4005
)

// Terminal reports whether a close code means the engine must not reconnect.
func Terminal(code int) bool {
	return code == CloseLoggedOut || code == CloseUnauthorized || code == CloseDeleted || code == CloseUnsupportedVersion
}

// Frame is one protocol message; which fields are set depends on Type.
type Frame struct {
	Type string `json:"type"`
	// ID correlates a command with its reply, and an events frame with its ack.
	ID string `json:"id,omitempty"`

	// hello
	Token        string   `json:"token,omitempty"`
	Kind         string   `json:"kind,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	// Features are the protocol features the engine speaks (hello), such as
	// FeatureMediaRefs, unknown ones ignored; in the welcome, those of them the
	// server uses with the engine.
	Features []string `json:"features,omitempty"`
	Phone    string   `json:"phone,omitempty"` // the account's own number, E.164 (ValidPhone)
	Version  int      `json:"version,omitempty"`
	// Versions are the protocol versions the sender speaks (hello, welcome).
	Versions []int `json:"versions,omitempty"`
	// Deprecated says the welcome's version will stop being served.
	Deprecated bool `json:"deprecated,omitempty"`
	// FrameType is the type of the frame an unsupported frame answers.
	FrameType string `json:"frameType,omitempty"`

	// welcome
	EngineID    string `json:"engineId,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	HeartbeatMs int64  `json:"heartbeatMs,omitempty"`
	TTLMs       int64  `json:"ttlMs,omitempty"`
	MaxFrame    int64  `json:"maxFrame,omitempty"`
	MaxBatch    int    `json:"maxBatch,omitempty"`

	// command
	Method   string          `json:"method,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
	Deadline *time.Time      `json:"deadline,omitempty"`

	// reply
	Result json.RawMessage `json:"result,omitempty"`
	Error  *WireError      `json:"error,omitempty"`

	// events
	Events []engine.Event `json:"events,omitempty"`

	// state
	State *State `json:"state,omitempty"`

	// events_ack: the events of the frame refused for good (the others are stored)
	Rejected []Rejected `json:"rejected,omitempty"`
}

// Rejected is an event of an events frame that the server refused for good
// because it can never be applied (see engine.Event.Validate): Index is its
// position in the frame, ID its id (when it had one), Reason why. The frame's
// other events are stored; an engine must not report a refused event again.
type Rejected struct {
	Index  int    `json:"index"`
	ID     string `json:"id,omitempty"`
	Reason string `json:"reason"`
}

// WireError is an error carried by a reply or an events ack. Code is rejected,
// not_found, group_rule (Rule, Participant), unsupported, engine_timeout,
// engine_disconnected, one of Switchboard's error codes, or engine_error.
type WireError struct {
	Code        string `json:"code"`
	Message     string `json:"message"`
	Rule        string `json:"rule,omitempty"`
	Participant string `json:"participant,omitempty"`
	// Reason is a media_unavailable error's (engine.MediaUnavailableError).
	Reason string `json:"reason,omitempty"`
}

// Wire error codes besides Switchboard's.
const (
	codeRejected    = "rejected"
	codeNotFound    = "not_found"
	codeGroupRule   = "group_rule"
	codeUnsupported = "unsupported"
	codeEngineError = "engine_error"
	codeNoMedia     = "media_unavailable"
)

// EncodeError is the wire form of an engine method's error.
func EncodeError(err error) *WireError {
	if err == nil {
		return nil
	}
	var rule *engine.GroupRuleError
	var app *switchboard.Error
	var wire *WireError
	var media *engine.MediaUnavailableError
	switch {
	case errors.As(err, &wire):
		return wire
	case errors.As(err, &media):
		return &WireError{Code: codeNoMedia, Message: media.Message, Reason: media.Reason}
	case errors.As(err, &rule):
		return &WireError{Code: codeGroupRule, Message: rule.Message, Rule: rule.Rule, Participant: rule.Participant}
	case errors.Is(err, engine.ErrRejected):
		return &WireError{Code: codeRejected, Message: err.Error()}
	case errors.Is(err, engine.ErrNotFound):
		return &WireError{Code: codeNotFound, Message: err.Error()}
	case errors.As(err, &app):
		return &WireError{Code: app.Code, Message: app.Message}
	}
	return &WireError{Code: codeEngineError, Message: err.Error()}
}

// Error implements error.
func (w *WireError) Error() string { return w.Code + ": " + w.Message }

// Err turns a wire error back into the error the engine method returned, so that
// Switchboard treats a remote engine's errors like an in-process one's.
func (w *WireError) Err() error {
	if w == nil {
		return nil
	}
	switch w.Code {
	case codeGroupRule:
		return &engine.GroupRuleError{Rule: w.Rule, Participant: w.Participant, Message: w.Message}
	case codeNoMedia:
		return &engine.MediaUnavailableError{Reason: w.Reason, Message: w.Message}
	case codeRejected:
		return fmt.Errorf("%w: remote engine: %s", engine.ErrRejected, w.Message)
	case codeNotFound:
		return fmt.Errorf("%w: remote engine: %s", engine.ErrNotFound, w.Message)
	case codeUnsupported:
		return switchboard.Errorf(switchboard.ENOENGINE, "The connected engine cannot do that: %s", w.Message)
	case switchboard.EDISCONNECTED:
		return engine.ErrDisconnected
	case switchboard.ETIMEOUT:
		return engine.ErrTimeout
	case codeEngineError, "":
		return fmt.Errorf("remote engine: %s", w.Message)
	}
	return &switchboard.Error{Code: w.Code, Message: w.Message}
}

// sentWire is the wire form of an engine.Sent.
type sentWire struct {
	Key   engine.Key `json:"key"`
	Error *WireError `json:"error,omitempty"`
}

// ValidPhone reports whether phone is a number in E.164 form: "+" and 7 to 15
// digits, the first not 0.
func ValidPhone(phone string) bool {
	digits, ok := strings.CutPrefix(phone, "+")
	if !ok || len(digits) < 7 || len(digits) > 15 || digits[0] == '0' {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
