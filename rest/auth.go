package rest

import (
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/dashboard"
	"github.com/switchboardhq/switchboard/viewer"
)

// authenticate resolves the Bearer key into a viewer in the request context and
// answers 401 without calling next when the key is missing, unknown or revoked.
// Scopes are checked by the resolvers, per operation. With sessions (on /graphql
// only), a request without a key may come with a dashboard session instead. A
// wrong key counts against its address's failures (a missing one does not):
// past their limit it is answered 429, while right keys from the address still
// go through (a key is not guessed).
func authenticate(keys *auth.Keys, sessions *dashboard.Sessions, fails *failures) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := bearer(r)
			if key == "" {
				if v, prefix, ok, err := sessionViewer(sessions, r); ok {
					if err != nil {
						writeError(w, r, err)
						return
					}
					if lw, ok := w.(*logWriter); ok {
						lw.key = prefix + " (dashboard)"
					}
					next.ServeHTTP(w, r.WithContext(viewer.NewContext(r.Context(), v)))
					return
				}
			}
			v, err := keys.Authenticate(r.Context(), key)
			if err != nil {
				if key != "" {
					err = fails.failed(w, r, keyFailures, err)
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
				writeError(w, r, err)
				return
			}
			if lw, ok := w.(*logWriter); ok {
				lw.key = auth.Redact(key)
			}
			next.ServeHTTP(w, r.WithContext(viewer.NewContext(r.Context(), v)))
		})
	}
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}
