package rest

import (
	"mime"
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard"
)

// graphQLTransport answers, with the error envelope, the requests that the
// GraphQL handler's transports would refuse with a bare "transport not
// supported" (or a query string they cannot parse): a method other than GET,
// POST, HEAD or OPTIONS is a 405, a POST whose body is neither JSON nor
// multipart/form-data a 415, and a WebSocket upgrade (not served) a 400.
func graphQLTransport(next http.Handler) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		switch r.Method {
		case http.MethodGet:
			if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
				return invalidBody("query", "invalid_string", "The query string is malformed.")
			}
		case http.MethodHead, http.MethodOptions:
		case http.MethodPost:
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || (mt != "application/json" && mt != "multipart/form-data") {
				return switchboard.Errorf(switchboard.EUNSUPPORTED,
					"A GraphQL request's Content-Type must be application/json (or multipart/form-data for uploads).")
			}
		default:
			w.Header().Set("Allow", "GET, POST, OPTIONS")
			return switchboard.Errorf(switchboard.EMETHOD, "Method %s is not allowed on /graphql.", r.Method)
		}
		if r.Header.Get("Upgrade") != "" {
			return switchboard.Errorf(switchboard.EINVALID, "GraphQL over WebSocket is not served; send queries over HTTP.")
		}
		next.ServeHTTP(w, r)
		return nil
	})
}
