// Package switchboard holds the domain vocabulary shared by every layer of the
// server: error codes, scopes and identifiers. It imports nothing of the project.
package switchboard

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. Each is mapped to an HTTP status in exactly one place (rest.statusOf)
// and carried as the `code` extension of GraphQL errors.
const (
	EINVALID      = "invalid_request"         // 400: malformed params or body
	EVALIDATION   = "validation_failed"       // 422: a field breaks a rule
	EUNAUTHORIZED = "authentication_required" // 401: missing, malformed, unknown or revoked key
	EFORBIDDEN    = "insufficient_scope"      // 403: the key lacks a scope
	ECSRF         = "csrf_required"           // 403: a dashboard-session request without the session's CSRF token
	ENOTFOUND     = "not_found"               // 404
	EMETHOD       = "method_not_allowed"      // 405
	ECONFLICT     = "conflict"                // 409
	ETOOLARGE     = "payload_too_large"       // 413
	EUNSUPPORTED  = "unsupported_media_type"  // 415
	EURITOOLONG   = "uri_too_long"            // 414: the request target is longer than the server reads
	EHEADERS      = "headers_too_large"       // 431: the request's header fields are larger than the server reads
	ERATELIMIT    = "rate_limited"            // 429
	EINTERNAL     = "internal_error"          // 500
	EUNAVAILABLE  = "unavailable"             // 503: a dependency (the database) is down; retry
	ENOENGINE     = "engine_unavailable"      // 503: no engine can take the work now
	EDISCONNECTED = "engine_disconnected"     // 503: the engine a command was for is not connected (or left while it waited)
	ETIMEOUT      = "engine_timeout"          // 504: the engine did not answer a command in time
	ENOTPAIRABLE  = "not_pairable"            // 409: the engine has nothing to pair (no QR, no pairing code)
	ENOTIMPL      = "not_implemented"         // 501: the server cannot do it yet
	ENOTSUPPORTED = "not_supported"           // 501: the engine serves no such capability (NotSupported)
)

// ErrUnavailable marks an error caused by a dependency that is down or restarting
// (a lost database connection, for one). Such errors carry the code EUNAVAILABLE:
// the caller may retry the same request.
var ErrUnavailable = errors.New("switchboard: a dependency is unavailable")

// Error is an application error: a machine-readable code, a message that is safe to
// show the caller, and per-field details for validation failures.
type Error struct {
	Code    string
	Message string
	Details []Detail
	// RetryAfter is how long the caller should wait before trying again (an
	// ERATELIMIT refusal); zero when it says nothing.
	RetryAfter time.Duration
}

// Detail is one per-field validation issue.
type Detail struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("switchboard error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotSupported is the error of an operation the engine it acts through cannot
// do: a remote engine that did not announce capability in its hello, or an
// engine kind without it. Its detail names the capability.
func NotSupported(engineID, capability string) *Error {
	return &Error{Code: ENOTSUPPORTED,
		Message: fmt.Sprintf("The engine %s does not support %s.", engineID, capability),
		Details: []Detail{{Path: "engineId", Code: "not_supported", Message: "capability " + capability}}}
}

// ErrorCode returns the code of the application error in err's chain, or EINTERNAL
// for any other non-nil error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	} else if errors.Is(err, ErrUnavailable) {
		return EUNAVAILABLE
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err: the application error's
// message, or a generic text that hides internal details.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	} else if errors.Is(err, ErrUnavailable) {
		return "The service is temporarily unavailable; retry the request shortly."
	}
	return "Internal error."
}

// ErrorRetryAfter returns how long the application error in err's chain asks the
// caller to wait before retrying, or zero.
func ErrorRetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// ErrorDetails returns the per-field details of the application error in err's chain.
func ErrorDetails(err error) []Detail {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}

// Problems collects per-field validation issues and turns them into one error.
type Problems []Detail

// Add records an issue on the field at path.
func (p *Problems) Add(path, code, format string, args ...any) {
	*p = append(*p, Detail{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Err returns nil when nothing was recorded, else an *Error with the given code.
func (p Problems) Err(code string) error {
	if len(p) == 0 {
		return nil
	}
	msg := p[0].Message
	if len(p) > 1 {
		more := "issues"
		if len(p) == 2 {
			more = "issue"
		}
		msg = fmt.Sprintf("%s (and %d more %s)", msg, len(p)-1, more)
	}
	return &Error{Code: code, Message: msg, Details: p}
}
