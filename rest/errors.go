package rest

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/switchboardhq/switchboard"
)

// statusOf maps an application error code to its HTTP status. It is the only place
// where that mapping lives.
func statusOf(code string) int {
	switch code {
	case switchboard.EINVALID:
		return http.StatusBadRequest
	case switchboard.EVALIDATION:
		return http.StatusUnprocessableEntity
	case switchboard.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case switchboard.EFORBIDDEN, switchboard.ECSRF:
		return http.StatusForbidden
	case switchboard.ENOTFOUND:
		return http.StatusNotFound
	case switchboard.EMETHOD:
		return http.StatusMethodNotAllowed
	case switchboard.ECONFLICT, switchboard.ENOTPAIRABLE:
		return http.StatusConflict
	case switchboard.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case switchboard.EUNSUPPORTED:
		return http.StatusUnsupportedMediaType
	case switchboard.EURITOOLONG:
		return http.StatusRequestURITooLong
	case switchboard.EHEADERS:
		return http.StatusRequestHeaderFieldsTooLarge
	case switchboard.ERATELIMIT:
		return http.StatusTooManyRequests
	case switchboard.EUNAVAILABLE, switchboard.ENOENGINE, switchboard.EDISCONNECTED:
		return http.StatusServiceUnavailable
	case switchboard.ETIMEOUT:
		return http.StatusGatewayTimeout
	case switchboard.ENOTIMPL, switchboard.ENOTSUPPORTED:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// errorBody is the spec's error envelope.
type errorBody struct {
	Success bool      `json:"success"`
	Error   errorInfo `json:"error"`
}

type errorInfo struct {
	Code      string               `json:"code"`
	Message   string               `json:"message"`
	RequestID string               `json:"requestId"`
	Details   []switchboard.Detail `json:"details"`
}

// writeError renders err as the spec's error envelope. Unexpected errors are
// logged with the request id and shown only as a generic internal error.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := switchboard.ErrorCode(err)
	var appErr *switchboard.Error
	if code == switchboard.EUNAVAILABLE {
		w.Header().Set("Retry-After", "5")
		slog.Warn("dependency unavailable", "request_id", RequestID(r.Context()), "method", r.Method, "path", switchboard.RedactPath(r.URL.Path), "err", err)
	} else if !errors.As(err, &appErr) {
		slog.Error("internal error", "request_id", RequestID(r.Context()), "method", r.Method, "path", switchboard.RedactPath(r.URL.Path), "err", err)
	}
	if retry := switchboard.ErrorRetryAfter(err); retry > 0 {
		w.Header().Set("Retry-After", seconds(retry))
	}
	details := switchboard.ErrorDetails(err)
	if details == nil {
		details = []switchboard.Detail{}
	}
	writeJSON(w, statusOf(code), errorBody{Error: errorInfo{
		Code: code, Message: switchboard.ErrorMessage(err), RequestID: RequestID(r.Context()), Details: details,
	}})
}
