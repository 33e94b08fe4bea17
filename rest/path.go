package rest

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/graph"
)

// routeEscaped makes chi match routes on the escaped path, so that every path
// parameter arrives still escaped (an encoded "/" stays inside its segment) and
// decodePathParams can decode each exactly once.
func routeEscaped(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath == "" {
			rctx.RoutePath = r.URL.EscapedPath()
		}
		next.ServeHTTP(w, r)
	})
}

// decodePathParams URL-decodes every path parameter of the matched route in place
// and checks its text (graph.CheckText): the one place where path parameters are
// decoded (an SDK sends +15551234567 as %2B15551234567 and 1@c.us as 1%40c.us).
func decodePathParams(r *http.Request) error {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil {
		return nil
	}
	for i, key := range rctx.URLParams.Keys {
		if key == "*" || i >= len(rctx.URLParams.Values) {
			continue
		}
		v, err := url.PathUnescape(rctx.URLParams.Values[i])
		if err != nil {
			return &switchboard.Error{Code: switchboard.EINVALID, Message: "Malformed escape in path parameter " + key + ".",
				Details: []switchboard.Detail{{Path: key, Code: "invalid_string", Message: "malformed percent-encoding"}}}
		}
		if err := graph.CheckText(key, v); err != nil {
			return err
		}
		rctx.URLParams.Values[i] = v
	}
	return nil
}
