// Package rest is the spec's /v1 REST facade. Its handlers only translate: path,
// query and body into resolver input; resolver output into the spec's JSON; errors
// into the spec's error envelope. The use cases live in package graph.
package rest

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/graph"
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
	// Logger receives the access log; slog.Default when nil.
	Logger *slog.Logger
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
}

// NewRouter returns the HTTP handler of the whole API: /v1, /graphql, /monitoring,
// /media and /healthz.
func NewRouter(cfg Config) http.Handler {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &server{core: cfg.Resolver, query: cfg.Resolver.Query(), mutation: cfg.Resolver.Mutation(),
		board: cfg.Resolver.Board(), item: cfg.Resolver.BoardItem()}
	r := chi.NewRouter()
	r.Use(withRequestID, accessLog(logger), routeEscaped)
	r.NotFound(handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return switchboard.Errorf(switchboard.ENOTFOUND, "No route for %s %s.", r.Method, r.URL.Path)
	}).ServeHTTP)
	r.MethodNotAllowed(handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return switchboard.Errorf(switchboard.EMETHOD, "Method %s is not allowed on %s.", r.Method, r.URL.Path)
	}).ServeHTTP)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) })
	if cfg.Media != nil {
		r.Method(http.MethodGet, "/media/*", handlerFunc(cfg.Media.ServeMedia))
		r.Method(http.MethodHead, "/media/*", handlerFunc(cfg.Media.ServeMedia))
	}
	if cfg.MusicFiles != nil {
		r.Method(http.MethodGet, music.FilesPrefix+"*", handlerFunc(cfg.MusicFiles.ServeMedia))
		r.Method(http.MethodHead, music.FilesPrefix+"*", handlerFunc(cfg.MusicFiles.ServeMedia))
	}

	gql := limitBody(authenticate(cfg.Keys)(graph.NewHandler(cfg.Resolver)))
	ide := graph.NewIDE()
	r.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("query") == "" {
			ide.ServeHTTP(w, r) // a browser opening the endpoint gets GraphiQL
			return
		}
		gql.ServeHTTP(w, r)
	}))

	r.Group(func(r chi.Router) {
		r.Use(authenticate(cfg.Keys))
		r.Route("/v1", func(r chi.Router) {
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
			r.Method(http.MethodPost, "/music/songs", handlerFunc(s.generateSong))
			r.Method(http.MethodGet, "/music/songs/{id}", handlerFunc(s.getSong))
			r.Method(http.MethodPost, "/music/uploads", handlerFunc(s.uploadMusic))
			r.Method(http.MethodGet, "/music/account", handlerFunc(s.musicAccount))
			r.Method(http.MethodPost, "/sandbox/group-changes", handlerFunc(s.simulateGroupChange))
		})
	})
	if cfg.Monitor != nil {
		ro := cfg.MonitorReadOnly
		if ro == nil {
			ro = cfg.Monitor
		}
		r.Handle("/monitoring*", operatorOnly(cfg.Resolver.Client, cfg.OperatorToken, cfg.Monitor, ro))
	}
	return r
}
