package graph

import (
	"context"
	"embed"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
)

// MaxComplexity bounds the cost of one GraphQL operation. A field costs 1 plus its
// children; a page of n items costs n times its children (n is first, last or limit,
// the field's default when omitted), so 40 aliased pages of 200 messages cannot be
// asked for at once, nor pages nested in pages through edges that lead back up.
// Every list field has a cost (setComplexity) or is bounded by something smaller
// (the schema test names each, with its bound).
const MaxComplexity = 5000

// MaxUploadSize bounds a multipart GraphQL request (operations plus files).
const MaxUploadSize = 64 << 20

// NewHandler returns the GraphQL endpoint over r: POST (JSON or multipart uploads)
// and GET queries.
func NewHandler(r *Resolver) http.Handler {
	cfg := Config{Resolvers: r}
	setComplexity(&cfg.Complexity)
	srv := handler.New(NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: MaxUploadSize, MaxMemory: 16 << 20})
	srv.Use(extension.Introspection{})
	srv.Use(&operationLimits{})
	srv.AroundFields(guardArgs)
	srv.AroundOperations(withQuoteBatches)
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		slog.Error("graphql resolver panic", "panic", p)
		return errors.New("internal error")
	})
	return srv
}

//go:embed ide
var ide embed.FS

// NewIDE returns the GraphQL console for a browser: a small self-contained page
// whose assets are embedded in the binary (nothing is loaded from a CDN). It holds
// no data and stores nothing: the API key typed into it stays in the page's memory,
// never in localStorage, so a script that runs on this origin cannot find it there.
// Assets are served at ?asset=ide.js and ?asset=ide.css.
func NewIDE() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ctype := "ide/index.html", "text/html; charset=utf-8"
		switch r.URL.Query().Get("asset") {
		case "ide.js":
			name, ctype = "ide/ide.js", "text/javascript; charset=utf-8"
		case "ide.css":
			name, ctype = "ide/ide.css", "text/css; charset=utf-8"
		}
		b, err := ide.ReadFile(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		h.Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
	})
}

// guardArgs runs before every field: it bounds the page of every connection (first
// or last at most 200, first 50 when both are omitted) and checks the text of the
// arguments of every field, root fields included, so that no field of the schema
// can take a NUL byte or invalid UTF-8 to the database. (The REST facade, which
// calls the resolvers directly, checks what it decodes with CheckText.)
func guardArgs(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || len(fc.Args) == 0 {
		return next(ctx)
	}
	if _, ok := fc.Args["first"]; ok {
		first, _ := fc.Args["first"].(*int)
		last, _ := fc.Args["last"].(*int)
		for name, n := range map[string]*int{"first": first, "last": last} {
			if n != nil && (*n < 0 || *n > maxPageLimit) {
				return nil, pageError(name, "%s must be between 0 and %d", name, maxPageLimit)
			}
		}
		if first == nil && last == nil {
			n := defaultPageLimit
			fc.Args["first"] = &n
		}
	}
	if err := checkArgs(fc.Args); err != nil {
		return nil, err
	}
	return next(ctx)
}

// setComplexity makes every page cost its size times its children. The list
// fields that have no cost here are bounded by something smaller (listed with
// their bound in the schema test), and a latest chat's messages cost the page
// latestChats asks for (costs).
func setComplexity(c *ComplexityRoot) {
	c.Query.Messages = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.MessageOrder, _ *ent.MessageWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Query.Webhooks = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.WebhookWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Webhook.Deliveries = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.DeliveryWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Query.Nodes = func(child int, ids []string) int { return listCost(child, len(ids)) }
	c.Query.ScheduledMessages = func(child int, _ *model.ScheduledMessageFilter, limit, _ *int) int {
		return pageCost(child, limit, nil)
	}
	c.Query.WebhookList = func(child int, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.Boards = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.BoardOrder, _ *ent.BoardWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Board.Items = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.BoardItemOrder, _ *ent.BoardItemWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Query.BoardList = func(child int, _ *model.BoardFilter, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.BoardItems = func(child int, _ string, _ *model.BoardItemFilter, limit, _ *int) int {
		return pageCost(child, limit, nil)
	}
	c.Query.FindSimilarBoardItems = func(child int, _ string, candidates []*model.BoardCandidateInput) int {
		return listCost(child, len(candidates))
	}
	c.Mutation.UpsertBoardItems = func(child int, _ string, items []*model.BoardItemInput, _ *string) int {
		return listCost(child, len(items))
	}
	c.Query.WebhookDeliveries = func(child int, _ string, _ *string, limit, _ *int) int {
		return pageCost(child, limit, nil)
	}
	// Audiences and campaigns.
	c.Audience.Contacts = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.AudienceContactOrder, _ *ent.AudienceContactWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Campaign.Messages = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.MessageOrder, _ *ent.MessageWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Query.AudienceList = func(child int, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.CampaignList = func(child int, _, _, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	// The conversation store.
	c.Query.ChatConnection = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.ChatOrder, _ *ent.ChatWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Query.ContactConnection = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.ContactWhereInput) int {
		return pageCost(child, first, last)
	}
	c.Chat.MessageConnection = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.MessageOrder, _ *ent.MessageWhereInput) int {
		return pageCost(child, first, last)
	}
	// latestChats costs its chats; each chat's messages cost numberOfMessages (costs).
	c.Query.LatestChats = func(child int, numberOfChats, _ *int) int {
		return sizedCost(child, numberOfChats, defaultLatestChats)
	}
	c.Query.ChatList = func(child int, _ *model.ChatFilter, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.StoredMessages = func(child int, _ *model.StoredMessageFilter, limit, _ *int) int {
		return pageCost(child, limit, nil)
	}
	c.Query.ContactList = func(child int, _, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.NewsletterList = func(child int, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.CommonGroups = func(child int, _ string, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.ChatParticipants = func(child int, _ string, _ *string, limit, _ *int) int {
		return sizedCost(child, limit, defaultParticipants)
	}
	c.Query.PinnedMessages = func(child int, _ string) int { return listCost(child, maxPinnedMessages) }
	c.Query.MessageAcks = func(child int, keys []string, _ *string) int { return listCost(child, len(keys)) }
	c.Query.GroupList = func(child int, _ *string, _ *bool, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.GroupJoinRequests = func(child int, _ string, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	// Engines, keys, music.
	c.Query.EngineList = func(child int, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.APIKeyList = func(child int, _ *string, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.MusicClipList = func(child int, limit, _ *int) int { return pageCost(child, limit, nil) }
	c.Query.Statuses = func(child int, _, _ *string, _, _ *bool, limit, _ *int) int { return pageCost(child, limit, nil) }
}

// pageCost is the cost of a page of first (or last) items, each costing child;
// defaultPageLimit items when both are omitted.
func pageCost(child int, first, last *int) int {
	if first == nil {
		first = last
	}
	return sizedCost(child, first, defaultPageLimit)
}

// sizedCost is the cost of a page of n items (def when n is nil), each costing
// child.
func sizedCost(child int, n *int, def int) int {
	if n != nil {
		def = *n
	}
	return listCost(child, def)
}

// listCost is the cost of a list of n items, each costing child: 1 + n*child,
// saturating rather than wrapping round, so that pages nested deep enough to
// overflow can never come out cheap.
func listCost(child, n int) int {
	n = min(max(n, 1), 1<<20)
	child = max(child, 0)
	if child > (math.MaxInt-1)/n {
		return math.MaxInt
	}
	return 1 + child*n
}

// maxLoggedError bounds how much of an unexpected error is logged: the text of a
// transport error can hold the whole request body.
const maxLoggedError = 1 << 10

// presentError renders application errors with their code and details as
// extensions and hides the text of unexpected ones. Errors of the request itself
// (a body that is not JSON, a query that does not parse) are invalid_request, and
// their text never carries the body.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	var appErr *switchboard.Error
	var parseErr *gqlerror.Error
	switch {
	case errors.As(err, &appErr):
		gerr.Message = appErr.Message
		gerr.Extensions = map[string]any{"code": appErr.Code}
		if len(appErr.Details) > 0 {
			gerr.Extensions["details"] = appErr.Details
		}
	case errors.As(err, &parseErr) && parseErr.Rule != "":
		// A query validation error: its text is meant for the caller.
	case errors.As(err, &parseErr) && parseErr.Unwrap() == nil && len(parseErr.Path) == 0:
		// An error of the request (transport, parse): never echo or log the body.
		msg, _, _ := strings.Cut(parseErr.Message, " body:")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		gerr.Message = strings.ToValidUTF8(msg, "?")
		gerr.Extensions = map[string]any{"code": switchboard.EINVALID}
	default:
		if gerr.Extensions == nil || gerr.Extensions["code"] == nil {
			text := err.Error()
			if len(text) > maxLoggedError {
				text = text[:maxLoggedError] + "…"
			}
			slog.Error("graphql internal error", "err", text, "at", time.Now().UTC())
			gerr.Message = switchboard.ErrorMessage(err)
			gerr.Extensions = map[string]any{"code": switchboard.ErrorCode(err)}
		}
	}
	if code, ok := gerr.Extensions["code"].(string); ok && foreignCodes[code] != "" {
		gerr.Extensions["code"] = foreignCodes[code]
	}
	return gerr
}

// foreignCodes are the codes the libraries set on their errors (gqlgen's query
// validation and parsing, entgql's node lookup), in the application's one
// vocabulary (switchboard.E*, docs/errors.md).
var foreignCodes = map[string]string{
	errcode.ValidationFailed: switchboard.EINVALID,
	errcode.ParseFailed:      switchboard.EINVALID,
	"NOT_FOUND":              switchboard.ENOTFOUND,
}
