package rest

import (
	"net/http"

	"github.com/switchboardhq/switchboard"
)

// Request line and header limits. net/http refuses a request whose request line
// and header fields pass the server's MaxHeaderBytes with a plain-text 431 of
// its own; the served API sets that limit to ServerMaxHeaderBytes, well above
// these, so that a request past them is answered here, with the error envelope.
// Only a request past ServerMaxHeaderBytes still gets Go's plain-text answer.
const (
	// MaxRequestTarget bounds the request target (path and query): past it, 414
	// uri_too_long.
	MaxRequestTarget = 32 << 10
	// MaxHeaderBytes bounds the header fields (names and values): past it, 431
	// headers_too_large.
	MaxHeaderBytes = 64 << 10
	// ServerMaxHeaderBytes is the http.Server's MaxHeaderBytes for the API.
	ServerMaxHeaderBytes = 1 << 20
)

// boundRequest answers a request whose target or header fields pass their
// limits with 414 or 431 and the error envelope, before anything reads them.
func boundRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.RequestURI); n > MaxRequestTarget {
			writeError(w, r, switchboard.Errorf(switchboard.EURITOOLONG,
				"The request target is %d bytes; at most %d are read. Send long input in a POST body.", n, MaxRequestTarget))
			return
		}
		n := 0
		for name, values := range r.Header {
			for _, v := range values {
				n += len(name) + len(v) + 4 // "name: value\r\n"
			}
		}
		if n > MaxHeaderBytes {
			writeError(w, r, switchboard.Errorf(switchboard.EHEADERS,
				"The request's header fields are %d bytes; at most %d are read.", n, MaxHeaderBytes))
			return
		}
		next.ServeHTTP(w, r)
	})
}
