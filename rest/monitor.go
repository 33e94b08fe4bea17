package rest

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/dashboard"
	"github.com/switchboardhq/switchboard/ent"
)

// operatorOnly guards the operators' pages, which see every workspace (the
// queue dashboard, the metrics): the operator token (Config.OperatorToken)
// opens full, the read-write monitor; a key that holds the operator scope
// opens ro, the read-only one; anything else, "*" keys included, is refused. The
// credential comes as a Bearer token, as the password of HTTP Basic
// authentication, which a browser asks for by itself, or as a dashboard session
// opened with either. Every answer is not framable, a call that changes state
// must pass origin, whatever its credential, and a presented credential is
// refused outright once its address has spent its failures.
func operatorOnly(client *ent.Client, sessions *dashboard.Sessions, token string, origin *originCheck, fails *failures, full, ro http.Handler) http.Handler {
	return notFramable(handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		cred := bearer(r)
		if _, pass, ok := r.BasicAuth(); ok {
			cred = pass
		}
		c, cerr := r.Cookie(dashboard.CookieName)
		byCookie := cred == "" && cerr == nil && sessions != nil
		if err := origin.check(r, byCookie); err != nil {
			return err
		}
		if byCookie {
			sess, v, err := sessions.Find(r.Context(), c.Value)
			switch {
			case err != nil:
				return err
			case sess.Operator:
				full.ServeHTTP(w, r)
			case v.Can(switchboard.ScopeOperator):
				ro.ServeHTTP(w, r)
			default:
				return errNotOperator
			}
			return nil
		}
		if cred != "" {
			if err := fails.blocked(w, r, operatorFailures); err != nil {
				return err
			}
		}
		if token != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(token)) == 1 {
			full.ServeHTTP(w, r)
			return nil
		}
		if !strings.HasPrefix(cred, auth.KeyPrefix) {
			w.Header().Set("WWW-Authenticate", `Basic realm="switchboard operators"`)
			err := switchboard.Errorf(switchboard.EUNAUTHORIZED, "This page is for operators: it needs the operator token or an operator key.")
			if cred == "" {
				return err // asked for, not failed: the browser's prompt comes next
			}
			return fails.failed(w, r, operatorFailures, err)
		}
		v, err := auth.Authenticate(r.Context(), client, cred)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="switchboard operators"`)
			return fails.failed(w, r, operatorFailures, err)
		}
		if !v.Can(switchboard.ScopeOperator) {
			return errNotOperator
		}
		ro.ServeHTTP(w, r)
		return nil
	}))
}

// errNotOperator refuses a workspace's key on the operators' pages.
var errNotOperator = &switchboard.Error{Code: switchboard.EFORBIDDEN,
	Message: "This page is for operators: the API key lacks the required scope " + switchboard.ScopeOperator + " (no workspace key holds it, not even *).",
	Details: []switchboard.Detail{{Path: "scope", Code: "missing_scope", Message: switchboard.ScopeOperator}}}
