// Package rest is the spec's /v1 REST facade. Its handlers only translate: path,
// query and body into resolver input; resolver output into the spec's JSON; errors
// into the spec's error envelope. The use cases live in package graph.
package rest

import (
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-redis/redis_rate/v10"
	"github.com/swaggest/swgui/v5emb"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/dashboard"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/graph"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/music"
)

// Config is what the router serves.
type Config struct {
	// Resolver is the application core.
	Resolver *graph.Resolver
	// Keys authenticates the API keys of requests.
	Keys *auth.Keys
	// Monitor is the operators' queue dashboard (asynqmon), mounted at /monitoring
	// for the holder of OperatorToken; MonitorReadOnly is the same dashboard in
	// read-only mode, for keys with the operator scope. Optional.
	Monitor, MonitorReadOnly http.Handler
	// OperatorToken is the operator's credential (SWITCHBOARD_OPERATOR_TOKEN); empty
	// leaves the read-write monitor closed.
	OperatorToken string
	// Media serves stored attachments at /media/. Optional.
	Media MediaServer
	// MusicFiles serves finished songs and covers at music.FilesPrefix. Optional.
	MusicFiles MediaServer
	// EngineSockets serves the engine protocol at /v1/engines/connect (remote
	// engines authenticate by engine token, not API key). Optional.
	EngineSockets EngineSockets
	// Logger receives the access log; slog.Default when nil.
	Logger *slog.Logger
	// Limiter counts the requests of each API key against RateLimit, on /v1
	// and /graphql; nil or a zero RateLimit leaves requests unlimited.
	Limiter   *redis_rate.Limiter
	RateLimit redis_rate.Limit
	// WorkspaceRateLimit counts the requests of all the keys of a workspace
	// together, beside RateLimit; zero: no such limit.
	WorkspaceRateLimit redis_rate.Limit
	// AddressRateLimit counts each client address's requests to each route
	// that takes no key (the dashboard's sign-in, media and music files, the
	// engine upgrade); zero: no such limit.
	AddressRateLimit redis_rate.Limit
	// AuthFailureLimit counts each client address's wrong credentials (API
	// keys, the operator token, sign-in); past it they are answered 429. Zero:
	// not counted.
	AuthFailureLimit redis_rate.Limit
	// TrustedProxies are the proxies whose X-Forwarded-For names the client of
	// the limits per address; with none, the connecting address is the client.
	TrustedProxies []netip.Prefix
	// Sessions are the dashboard's; nil leaves /dashboard unserved.
	Sessions *dashboard.Sessions
	// SecureCookies marks the dashboard's cookie Secure (the public URL is https).
	SecureCookies bool
}

// EngineSockets serves the engine WebSocket protocol; reject answers a request
// refused before the upgrade, and client names the address a request comes from
// (for the limits kept per address).
type EngineSockets interface {
	Handler(reject func(w http.ResponseWriter, r *http.Request, err error), client func(*http.Request) string) http.Handler
}

// EngineUploads serves the engine protocol's upload slots (PUT
// /v1/engines/uploads/{token}, authenticated by engine token); reject answers
// the refusals. An EngineSockets that is one has the route mounted.
type EngineUploads interface {
	UploadHandler(reject func(w http.ResponseWriter, r *http.Request, err error)) http.Handler
}

// MediaServer serves stored attachments; its errors are answered with the error
// envelope like every other route's.
type MediaServer interface {
	ServeMedia(w http.ResponseWriter, r *http.Request) error
}

type server struct {
	core     *graph.Resolver
	query    graph.QueryResolver
	mutation graph.MutationResolver
	board    graph.BoardResolver
	item     graph.BoardItemResolver
	audience graph.AudienceResolver
}

// NewRouter returns the HTTP handler of the whole API: /v1, /graphql, /monitoring,
// /metrics, /media, /healthz, the API reference (/v1/openapi.json, /docs) and the
// dashboard (/dashboard).
func NewRouter(cfg Config) http.Handler {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &server{core: cfg.Resolver, query: cfg.Resolver.Query(), mutation: cfg.Resolver.Mutation(),
		board: cfg.Resolver.Board(), item: cfg.Resolver.BoardItem(), audience: cfg.Resolver.Audience()}
	r := chi.NewRouter()
	r.Use(withRequestID, accessLog(logger), boundRequest, routeEscaped)
	// No route: 404 or 405, whatever the request holds (no handlerFunc, whose
	// checks of the path and query are a route's).
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, switchboard.Errorf(switchboard.ENOTFOUND, "No route for %s %s.", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, switchboard.Errorf(switchboard.EMETHOD, "Method %s is not allowed on %s.", r.Method, r.URL.Path))
	})
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) })
	client := clientAddress{trusted: cfg.TrustedProxies}
	m := &mounts{cfg: cfg, client: client, fails: &failures{l: cfg.Limiter, limit: cfg.AuthFailureLimit, client: client},
		limited: limitRate(cfg.Limiter, cfg.RateLimit, cfg.WorkspaceRateLimit)}
	m.files(r)
	m.graphQL(r)
	mountDocs(r)
	if cfg.Sessions != nil {
		d := &dashboardRoutes{sessions: cfg.Sessions, fails: m.fails, signInLimit: m.perAddress("sign-in"),
			secure: cfg.SecureCookies, assets: dashboard.Assets()}
		d.mount(r)
	}
	if cfg.EngineSockets != nil {
		r.Method(http.MethodGet, "/v1/engines/connect", m.perAddress("engine-connect")(cfg.EngineSockets.Handler(writeError, client.of)))
		if up, ok := cfg.EngineSockets.(EngineUploads); ok {
			r.Method(http.MethodPut, "/v1/engines/uploads/{token}", m.perAddress("engine-upload")(up.UploadHandler(writeError)))
		}
	}
	m.v1(r, s)
	m.operator(r)
	return r
}

// mounts holds what NewRouter's groups of routes share: the configuration, the
// client's address, the count of failed authentications and the rate limit.
type mounts struct {
	cfg     Config
	client  clientAddress
	fails   *failures
	limited func(http.Handler) http.Handler // the per-key and per-workspace rate limit
}

// perAddress limits a group of routes per client address.
func (m *mounts) perAddress(group string) func(http.Handler) http.Handler {
	return limitAddress(m.cfg.Limiter, m.cfg.AddressRateLimit, m.client, group)
}

// files mounts the published files: attachments (/media) and songs.
func (m *mounts) files(r chi.Router) {
	if m.cfg.Media != nil {
		media := m.perAddress("media")(handlerFunc(m.cfg.Media.ServeMedia))
		r.Method(http.MethodGet, "/media/*", media)
		r.Method(http.MethodHead, "/media/*", media)
	}
	if m.cfg.MusicFiles != nil {
		files := m.perAddress("media")(handlerFunc(m.cfg.MusicFiles.ServeMedia))
		r.Method(http.MethodGet, music.FilesPrefix+"*", files)
		r.Method(http.MethodHead, music.FilesPrefix+"*", files)
	}
}

// graphQL mounts /graphql: the API behind a key (or a dashboard session), and
// GraphiQL for a browser that opens it.
func (m *mounts) graphQL(r chi.Router) {
	gql := limitBody(authenticate(m.cfg.Keys, m.cfg.Sessions, m.fails)(m.limited(graphQLTransport(graph.NewHandler(m.cfg.Resolver)))))
	ide := graph.NewIDE()
	r.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("query") == "" {
			ide.ServeHTTP(w, r) // a browser opening the endpoint gets GraphiQL
			return
		}
		gql.ServeHTTP(w, r)
	}))
}

// mountDocs mounts the API reference, open without a key: the OpenAPI document
// and Swagger UI.
func mountDocs(r chi.Router) {
	r.Get("/v1/openapi.json", serveOpenAPI)
	// The engine protocol's JSON Schema (docs/engine-protocol.md), public like
	// the OpenAPI document: it describes the protocol, not any workspace.
	r.Get("/v1/engines/protocol.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(remote.Schema())
	})
	// Swagger UI answers GET and HEAD only; other methods get the router's 405
	// with the error envelope.
	docs := notFoundAsEnvelope(v5emb.New("Switchboard API", "/v1/openapi.json", "/docs/"))
	for _, p := range []string{"/docs", "/docs/*"} {
		r.Method(http.MethodGet, p, docs)
		r.Method(http.MethodHead, p, docs)
	}
}

// v1 mounts every /v1 operation of the route table, behind authentication, the
// rate limit and the scope the table gives it (scoped).
func (m *mounts) v1(r chi.Router, s *server) {
	r.Group(func(r chi.Router) {
		r.Use(authenticate(m.cfg.Keys, nil, m.fails), m.limited)
		r.Route("/v1", func(r chi.Router) {
			r = scoped(r, "/v1")
			for _, op := range apiOperations {
				switch {
				case op.handle != nil:
					r.Method(op.method, strings.TrimPrefix(op.path, "/v1"), op.handle(s))
				case !op.public:
					panic("rest: " + op.method + " " + op.path + " is in the route table without a handler")
				}
			}
		})
	})
}

// operator mounts what only the operator sees: /metrics and the queue monitor.
func (m *mounts) operator(r chi.Router) {
	cfg := m.cfg
	origin := newOriginCheck(cfg.Resolver.PublicURL)
	r.Handle("/metrics", operatorOnly(cfg.Resolver.Client, cfg.Sessions, cfg.OperatorToken, origin, m.fails, metrics.Handler(), metrics.Handler()))
	if cfg.Monitor != nil {
		ro := cfg.MonitorReadOnly
		if ro == nil {
			ro = cfg.Monitor
		}
		r.Handle("/monitoring*", operatorOnly(cfg.Resolver.Client, cfg.Sessions, cfg.OperatorToken, origin, m.fails, monitorErrors(cfg.Monitor), monitorErrors(ro)))
	}
}

// notFoundAsEnvelope answers what h does not find (its 404) with the error
// envelope, like every other route.
func notFoundAsEnvelope(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nf := &notFoundWriter{ResponseWriter: w}
		h.ServeHTTP(nf, r)
		if nf.notFound {
			writeError(w, r, switchboard.Errorf(switchboard.ENOTFOUND, "No such page of the API reference."))
		}
	})
}

// notFoundWriter swallows a 404 and its body; other answers pass through.
type notFoundWriter struct {
	http.ResponseWriter
	notFound bool
}

func (w *notFoundWriter) WriteHeader(code int) {
	if code == http.StatusNotFound {
		w.notFound = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *notFoundWriter) Write(b []byte) (int, error) {
	if w.notFound {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
