package rest

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/ent"
)

// operatorOnly guards the operators' pages, which see every workspace (the
// queue dashboard, the metrics): the operator token (Config.OperatorToken)
// opens full, the read-write monitor; a key that holds the operator scope
// opens ro, the read-only one; anything else, "*" keys included, is refused. The credential comes as a Bearer token or as the password of HTTP
// Basic authentication, which a browser asks for by itself.
func operatorOnly(client *ent.Client, token string, full, ro http.Handler) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		cred := bearer(r)
		if _, pass, ok := r.BasicAuth(); ok {
			cred = pass
		}
		if token != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(token)) == 1 {
			full.ServeHTTP(w, r)
			return nil
		}
		if !strings.HasPrefix(cred, auth.KeyPrefix) {
			w.Header().Set("WWW-Authenticate", `Basic realm="switchboard operators"`)
			return switchboard.Errorf(switchboard.EUNAUTHORIZED, "This page is for operators: it needs the operator token or an operator key.")
		}
		v, err := auth.Authenticate(r.Context(), client, cred)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="switchboard operators"`)
			return err
		}
		if !v.Can(switchboard.ScopeOperator) {
			return &switchboard.Error{Code: switchboard.EFORBIDDEN,
				Message: "This page is for operators: the API key lacks the required scope " + switchboard.ScopeOperator + " (no workspace key holds it, not even *).",
				Details: []switchboard.Detail{{Path: "scope", Code: "missing_scope", Message: switchboard.ScopeOperator}}}
		}
		ro.ServeHTTP(w, r)
		return nil
	})
}
