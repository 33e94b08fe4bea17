package graph

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/switchboardhq/switchboard"
)

// NewHandler returns the GraphQL endpoint over r: POST (JSON or multipart uploads)
// and GET queries.
func NewHandler(r *Resolver) http.Handler {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: r}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: 64 << 20, MaxMemory: 16 << 20})
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(500))
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		slog.Error("graphql resolver panic", "panic", p)
		return errors.New("internal error")
	})
	return srv
}

// NewIDE returns the GraphiQL page for a browser. It holds no data: the queries it
// sends carry the API key set in its headers panel.
func NewIDE(endpoint string) http.Handler {
	return playground.Handler("Switchboard GraphQL", endpoint)
}

// presentError renders application errors with their code and details as
// extensions and hides the text of unexpected ones.
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
	default:
		if gerr.Extensions == nil || gerr.Extensions["code"] == nil {
			slog.Error("graphql internal error", "err", err, "at", time.Now().UTC())
			gerr.Message = switchboard.ErrorMessage(err)
			gerr.Extensions = map[string]any{"code": switchboard.ErrorCode(err)}
		}
	}
	return gerr
}
