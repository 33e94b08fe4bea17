package rest

import (
	"bytes"
	"crypto/subtle"
	"fmt"
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

// monitorErrors gives the queue monitor's (asynqmon's) server errors the status
// they mean, in the error envelope. asynqmon answers 500, with the text of
// asynq's error, alike for a queue or task that does not exist (404 here), for a
// queue already paused, not paused or not empty (409), and for Redis failing
// (503, logged). Its other answers pass as they are.
func monitorErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw := &monitorErrorWriter{ResponseWriter: w}
		h.ServeHTTP(mw, r)
		if mw.status == 0 {
			return
		}
		msg := strings.TrimSpace(strings.TrimPrefix(mw.body.String(), "asynq: "))
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		code := switchboard.EINTERNAL
		switch {
		case strings.Contains(msg, "NOT_FOUND") || strings.Contains(msg, "does not exist") || strings.Contains(msg, "not found"):
			code = switchboard.ENOTFOUND
		case strings.Contains(msg, "FAILED_PRECONDITION") || strings.Contains(msg, "ALREADY_EXISTS") ||
			strings.Contains(msg, "already paused") || strings.Contains(msg, "not paused"):
			code = switchboard.ECONFLICT
		}
		h := w.Header()
		h.Del("Content-Type")
		h.Del("X-Content-Type-Options")
		if code == switchboard.EINTERNAL {
			// Redis refused or is gone, or a fault of the monitor's: logged whole
			// under the request id by writeError.
			writeError(w, r, fmt.Errorf("%w: queue monitor: %s", switchboard.ErrUnavailable, msg))
			return
		}
		writeError(w, r, switchboard.Errorf(code, "Queue monitor: %s.", strings.TrimSuffix(msg, ".")))
	})
}

// monitorErrorWriter holds back an answer of status 500 or more, and its body,
// for monitorErrors to rewrite.
type monitorErrorWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *monitorErrorWriter) WriteHeader(code int) {
	if code >= 500 && !w.wrote && w.status == 0 {
		w.status = code
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *monitorErrorWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		if room := 4<<10 - w.body.Len(); room > 0 {
			w.body.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *monitorErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
