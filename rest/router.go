// Package rest is the spec's /v1 REST facade. Its handlers only translate: path,
// query and body into resolver input; resolver output into the spec's JSON; errors
// into the spec's error envelope. The use cases live in package graph.
package rest

import (
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/go-chi/chi/v5"
	"github.com/go-redis/redis_rate/v10"
	"github.com/swaggest/swgui/v5emb"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/dashboard"
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
	fails := &failures{l: cfg.Limiter, limit: cfg.AuthFailureLimit, client: client}
	perAddress := func(group string) func(http.Handler) http.Handler {
		return limitAddress(cfg.Limiter, cfg.AddressRateLimit, client, group)
	}
	if cfg.Media != nil {
		media := perAddress("media")(handlerFunc(cfg.Media.ServeMedia))
		r.Method(http.MethodGet, "/media/*", media)
		r.Method(http.MethodHead, "/media/*", media)
	}
	if cfg.MusicFiles != nil {
		files := perAddress("media")(handlerFunc(cfg.MusicFiles.ServeMedia))
		r.Method(http.MethodGet, music.FilesPrefix+"*", files)
		r.Method(http.MethodHead, music.FilesPrefix+"*", files)
	}

	limited := limitRate(cfg.Limiter, cfg.RateLimit, cfg.WorkspaceRateLimit)
	gql := limitBody(authenticate(cfg.Keys, cfg.Sessions, fails)(limited(graphQLTransport(graph.NewHandler(cfg.Resolver)))))
	ide := graph.NewIDE()
	r.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("query") == "" {
			ide.ServeHTTP(w, r) // a browser opening the endpoint gets GraphiQL
			return
		}
		gql.ServeHTTP(w, r)
	}))

	r.Get("/v1/openapi.json", serveOpenAPI) // the API reference, open without a key
	// Swagger UI answers GET and HEAD only; other methods get the router's 405
	// with the error envelope.
	docs := notFoundAsEnvelope(v5emb.New("Switchboard API", "/v1/openapi.json", "/docs/"))
	for _, p := range []string{"/docs", "/docs/*"} {
		r.Method(http.MethodGet, p, docs)
		r.Method(http.MethodHead, p, docs)
	}
	if cfg.Sessions != nil {
		d := &dashboardRoutes{sessions: cfg.Sessions, fails: fails, signInLimit: perAddress("sign-in"),
			secure: cfg.SecureCookies, assets: dashboard.Assets()}
		d.mount(r)
	}
	if cfg.EngineSockets != nil {
		r.Method(http.MethodGet, "/v1/engines/connect", perAddress("engine-connect")(cfg.EngineSockets.Handler(writeError, client.of)))
	}
	r.Group(func(r chi.Router) {
		r.Use(authenticate(cfg.Keys, nil, fails), limited)
		r.Route("/v1", func(r chi.Router) {
			r = scoped(r, "/v1") // each route behind the scope the route table gives it
			r.Method(http.MethodGet, "/ping", handlerFunc(s.ping))
			r.Method(http.MethodGet, "/account", handlerFunc(s.account))
			r.Method(http.MethodGet, "/scheduled-messages", handlerFunc(s.listScheduledMessages))
			r.Method(http.MethodPost, "/scheduled-messages/{chatId}", handlerFunc(s.scheduleMessage))
			r.Method(http.MethodGet, "/scheduled-messages/{id}", handlerFunc(s.getScheduledMessage))
			r.Method(http.MethodPatch, "/scheduled-messages/{id}", handlerFunc(s.updateScheduledMessage))
			r.Method(http.MethodDelete, "/scheduled-messages/{id}", handlerFunc(s.cancelScheduledMessage))
			r.Method(http.MethodPost, "/messages/{chatId}", handlerFunc(s.sendMessage))
			r.Method(http.MethodGet, "/messages", handlerFunc(s.listStoredMessages))
			r.Method(http.MethodGet, "/messages/ack/{waMessageKey}", handlerFunc(s.getMessageAck))
			r.Method(http.MethodPost, "/messages/acks", handlerFunc(s.getMessageAcks))
			r.Method(http.MethodPost, "/messages/load_older/{chatId}", handlerFunc(s.loadOlder))
			r.Method(http.MethodGet, "/messages/media/{waMessageKey}", handlerFunc(s.getMessageMedia))
			r.Method(http.MethodPost, "/messages/reactions/{waMessageKey}", handlerFunc(s.reactToMessage))
			r.Method(http.MethodPost, "/messages/pin/{waMessageKey}", handlerFunc(s.pinMessage))
			r.Method(http.MethodPost, "/messages/unpin/{waMessageKey}", handlerFunc(s.unpinMessage))
			r.Method(http.MethodGet, "/messages/pinned/{chatId}", handlerFunc(s.listPinnedMessages))
			r.Method(http.MethodGet, "/latest-chats", handlerFunc(s.latestChats))
			r.Method(http.MethodGet, "/chats", handlerFunc(s.listChats))
			r.Method(http.MethodGet, "/chats/{id}", handlerFunc(s.getChat))
			r.Method(http.MethodGet, "/chats/{chatId}/participants", handlerFunc(s.listParticipants))
			r.Method(http.MethodPost, "/chats/{chatId}/mark_read", handlerFunc(s.markChatRead))
			r.Method(http.MethodPost, "/chats/{chatId}/archive", s.archiveChat(true))
			r.Method(http.MethodPost, "/chats/{chatId}/unarchive", s.archiveChat(false))
			r.Method(http.MethodGet, "/contacts", handlerFunc(s.listContacts))
			r.Method(http.MethodGet, "/contacts/{id}/common_groups", handlerFunc(s.commonGroups))
			r.Method(http.MethodGet, "/groups", handlerFunc(s.listGroups))
			r.Method(http.MethodPost, "/groups", handlerFunc(s.createGroup))
			r.Method(http.MethodGet, "/groups/{id}", handlerFunc(s.getGroup))
			r.Method(http.MethodPatch, "/groups/{id}", handlerFunc(s.updateGroup))
			r.Method(http.MethodPost, "/groups/{id}/members", handlerFunc(s.addGroupMembers))
			r.Method(http.MethodDelete, "/groups/{id}/members/me", handlerFunc(s.leaveGroup))
			r.Method(http.MethodDelete, "/groups/{id}/members/{chatId}", s.participantRoute(s.mutation.RemoveGroupParticipant))
			r.Method(http.MethodPost, "/groups/{id}/members/{chatId}/admin", s.participantRoute(s.mutation.PromoteGroupParticipant))
			r.Method(http.MethodDelete, "/groups/{id}/members/{chatId}/admin", s.participantRoute(s.mutation.DemoteGroupParticipant))
			r.Method(http.MethodPut, "/groups/{id}/picture", handlerFunc(s.setGroupPicture))
			r.Method(http.MethodGet, "/newsletters", handlerFunc(s.listNewsletters))
			r.Method(http.MethodPost, "/newsletters", handlerFunc(s.createNewsletter))
			r.Method(http.MethodGet, "/newsletters/{id}", handlerFunc(s.getNewsletter))
			r.Method(http.MethodGet, "/messages/{id}", handlerFunc(s.getMessage))
			r.Method(http.MethodPost, "/webhooks", handlerFunc(s.createWebhook))
			r.Method(http.MethodGet, "/webhooks", handlerFunc(s.listWebhooks))
			r.Method(http.MethodGet, "/webhooks/{id}", handlerFunc(s.getWebhook))
			r.Method(http.MethodPatch, "/webhooks/{id}", handlerFunc(s.updateWebhook))
			r.Method(http.MethodDelete, "/webhooks/{id}", handlerFunc(s.deleteWebhook))
			r.Method(http.MethodPost, "/webhooks/{id}/rotate-secret", handlerFunc(s.rotateWebhookSecret))
			r.Method(http.MethodGet, "/webhooks/{id}/deliveries", handlerFunc(s.listDeliveries))
			r.Method(http.MethodPost, "/webhooks/{id}/deliveries/{deliveryId}/redeliver", handlerFunc(s.redeliver))
			r.Method(http.MethodGet, "/boards", handlerFunc(s.listBoards))
			r.Method(http.MethodPost, "/boards", handlerFunc(s.openBoard))
			r.Method(http.MethodGet, "/boards/{id}", handlerFunc(s.getBoard))
			r.Method(http.MethodGet, "/boards/{id}/items", handlerFunc(s.listBoardItems))
			r.Method(http.MethodPost, "/boards/{id}/items", handlerFunc(s.createBoardItem))
			r.Method(http.MethodPost, "/boards/{id}/items/bulk", handlerFunc(s.upsertBoardItems))
			r.Method(http.MethodPost, "/boards/{id}/items/find-similar", handlerFunc(s.findSimilarBoardItems))
			r.Method(http.MethodPatch, "/boards/{id}/items/{itemId}", handlerFunc(s.updateBoardItem))
			r.Method(http.MethodGet, "/audiences", handlerFunc(s.listAudiences))
			r.Method(http.MethodPost, "/audiences", handlerFunc(s.createAudience))
			r.Method(http.MethodGet, "/audiences/{id}", handlerFunc(s.getAudience))
			r.Method(http.MethodPatch, "/audiences/{id}", handlerFunc(s.updateAudience))
			r.Method(http.MethodDelete, "/audiences/{id}", handlerFunc(s.deleteAudience))
			r.Method(http.MethodPost, "/audiences/{id}/contacts", handlerFunc(s.addAudienceContacts))
			r.Method(http.MethodPatch, "/audiences/{id}/contacts/{contactId}", handlerFunc(s.updateAudienceContact))
			r.Method(http.MethodDelete, "/audiences/{id}/contacts/{contactId}", handlerFunc(s.removeAudienceContact))
			r.Method(http.MethodGet, "/campaigns", handlerFunc(s.listCampaigns))
			r.Method(http.MethodPost, "/campaigns", handlerFunc(s.createCampaign))
			r.Method(http.MethodGet, "/campaigns/{id}", handlerFunc(s.getCampaign))
			r.Method(http.MethodPatch, "/campaigns/{id}", handlerFunc(s.updateCampaign))
			r.Method(http.MethodPost, "/campaigns/{id}/pause", s.campaignAction(s.mutation.PauseCampaign))
			r.Method(http.MethodPost, "/campaigns/{id}/resume", s.campaignAction(s.mutation.ResumeCampaign))
			r.Method(http.MethodPost, "/campaigns/{id}/cancel", s.campaignAction(s.mutation.CancelCampaign))
			r.Method(http.MethodPost, "/music/songs", handlerFunc(s.generateSong))
			r.Method(http.MethodGet, "/music/songs/{id}", handlerFunc(s.getSong))
			r.Method(http.MethodPost, "/music/uploads", handlerFunc(s.uploadMusic))
			r.Method(http.MethodGet, "/music/account", handlerFunc(s.musicAccount))
			r.Method(http.MethodGet, "/engines", handlerFunc(s.listEngines))
			r.Method(http.MethodPost, "/engines", handlerFunc(s.createEngine))
			r.Method(http.MethodGet, "/engines/{id}", handlerFunc(s.getEngine))
			r.Method(http.MethodDelete, "/engines/{id}", handlerFunc(s.deleteEngine))
			r.Method(http.MethodPost, "/engines/{id}/logout", handlerFunc(s.logoutEngine))
			r.Method(http.MethodGet, "/engines/{id}/qr", handlerFunc(s.engineQR))
			r.Method(http.MethodPost, "/engines/{id}/pairing-code", handlerFunc(s.enginePairingCode))
			r.Method(http.MethodPost, "/sandbox/group-changes", handlerFunc(s.simulateGroupChange))
		})
	})
	origin := newOriginCheck(cfg.Resolver.PublicURL)
	r.Handle("/metrics", operatorOnly(cfg.Resolver.Client, cfg.Sessions, cfg.OperatorToken, origin, fails, metrics.Handler(), metrics.Handler()))
	if cfg.Monitor != nil {
		ro := cfg.MonitorReadOnly
		if ro == nil {
			ro = cfg.Monitor
		}
		r.Handle("/monitoring*", operatorOnly(cfg.Resolver.Client, cfg.Sessions, cfg.OperatorToken, origin, fails, monitorErrors(cfg.Monitor), monitorErrors(ro)))
	}
	return r
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
