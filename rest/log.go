package rest

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/metrics"
)

// logWriter records what a handler answered, for the access log.
type logWriter struct {
	http.ResponseWriter
	status int
	key    string // redacted API key, set by authenticate
}

func (w *logWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *logWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog logs one line per request, with at most the first characters of the
// API key and the path without its query or media token (switchboard.RedactPath),
// counts it in the metrics by route pattern, and turns a panic into a
// 500 error envelope.
func accessLog(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			lw := &logWriter{ResponseWriter: w}
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					logger.Error("panic serving request", "request_id", RequestID(r.Context()), "panic", p)
					if lw.status == 0 {
						writeError(lw, r, errPanic)
					}
				}
				took := time.Since(start)
				logger.Info("request", "method", r.Method, "path", switchboard.RedactPath(r.URL.Path), "status", lw.status,
					"duration", took, "key", lw.key, "request_id", RequestID(r.Context()))
				route := "unmatched"
				if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
					route = rc.RoutePattern()
				}
				metrics.Requests.WithLabelValues(route, r.Method, strconv.Itoa(lw.status)).Inc()
				metrics.Latency.WithLabelValues(route, r.Method).Observe(took.Seconds())
			}()
			next.ServeHTTP(lw, r)
		})
	}
}

type panicError struct{}

func (panicError) Error() string { return "handler panicked" }

var errPanic error = panicError{}
