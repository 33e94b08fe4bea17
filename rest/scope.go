package rest

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard/viewer"
)

// The scope of every /v1 route is declared once, by the @scope directive of the
// GraphQL root field the route serves (apiOp.field in the route table, which the
// API reference is built from; graph.RootScope reads it from the schema), and
// checked before the route's handler runs: a key that lacks it gets 403
// insufficient_scope whatever its request holds, before a path parameter, query
// value or body is read. Then the text of every query name and value is checked
// (checkQueryText), whether the route reads it or not. The resolvers the
// handlers call do not check scopes again: GraphQL checks the same directive
// before an operation runs (graph.checkScopes).

// routeScopes maps "METHOD /v1/path" of the route table to its scope.
var routeScopes = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, len(apiOperations))
	for _, o := range apiOperations {
		m[o.method+" "+o.path] = o.needs()
	}
	return m
})

// routeQuery maps "METHOD /v1/path" of the route table to the names of the
// query parameters the route accepts.
var routeQuery = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, len(apiOperations))
	for _, o := range apiOperations {
		names := make([]string, 0, len(o.query))
		for _, q := range o.query {
			names = append(names, q.name)
		}
		m[o.method+" "+o.path] = names
	}
	return m
})

// scopedRouter registers each route behind the check of the scope the route
// table declares for it. Registering a route the table does not hold panics:
// every route has its scope (and its documentation) before it can be served.
type scopedRouter struct {
	chi.Router
	prefix string
}

// scoped returns r registering its routes (whose paths are under prefix) behind
// their scopes.
func scoped(r chi.Router, prefix string) chi.Router { return scopedRouter{Router: r, prefix: prefix} }

// Method registers h for method and pattern behind the pattern's scope.
func (s scopedRouter) Method(method, pattern string, h http.Handler) {
	scope, ok := routeScopes()[method+" "+s.prefix+pattern]
	if !ok {
		panic(fmt.Sprintf("rest: route %s %s%s is not in the route table (apiOperations)", method, s.prefix, pattern))
	}
	s.Router.Method(method, pattern, requireScope(scope, checkQuery(routeQuery()[method+" "+s.prefix+pattern], h)))
}

// MethodFunc is Method for a handler function.
func (s scopedRouter) MethodFunc(method, pattern string, h http.HandlerFunc) {
	s.Method(method, pattern, h)
}

// Get registers a GET route behind its scope.
func (s scopedRouter) Get(pattern string, h http.HandlerFunc) { s.Method(http.MethodGet, pattern, h) }

// Post registers a POST route behind its scope.
func (s scopedRouter) Post(pattern string, h http.HandlerFunc) { s.Method(http.MethodPost, pattern, h) }

// Put registers a PUT route behind its scope.
func (s scopedRouter) Put(pattern string, h http.HandlerFunc) { s.Method(http.MethodPut, pattern, h) }

// Patch registers a PATCH route behind its scope.
func (s scopedRouter) Patch(pattern string, h http.HandlerFunc) {
	s.Method(http.MethodPatch, pattern, h)
}

// Delete registers a DELETE route behind its scope.
func (s scopedRouter) Delete(pattern string, h http.HandlerFunc) {
	s.Method(http.MethodDelete, pattern, h)
}

// Handle would register a route for every method, which the table cannot scope.
func (s scopedRouter) Handle(pattern string, _ http.Handler) {
	panic("rest: register " + s.prefix + pattern + " with Method: routes are scoped per method")
}

// HandleFunc is refused like Handle.
func (s scopedRouter) HandleFunc(pattern string, h http.HandlerFunc) { s.Handle(pattern, h) }

// checkQuery answers 400 for a query name or value that is not text
// (checkQueryText) or a query parameter the route does not take (one not in
// accepted, the route table's) before next reads the request.
func checkQuery(accepted []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkQueryText(r); err != nil {
			writeError(w, r, err)
			return
		}
		if err := checkQueryNames(r, accepted); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireScope answers 403 insufficient_scope unless the request's viewer holds
// scope ("" asks only for a valid key), before next reads anything.
func requireScope(scope string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := viewer.Require(r.Context(), scope); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
