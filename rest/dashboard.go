package rest

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/dashboard"
	"github.com/switchboardhq/switchboard/viewer"
)

// dashboardPolicy is the Content-Security-Policy of the dashboard's pages: their
// own scripts and styles only; images and audio also from data: URLs (the QR
// code) and https (a music provider's files); no framing.
const dashboardPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"media-src 'self' https:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// sessionInfo is what the pages learn of their session: the CSRF token to send
// back, and who is signed in.
type sessionInfo struct {
	CSRF        string    `json:"csrf"`
	Prefix      string    `json:"prefix"`
	Operator    bool      `json:"operator"`
	WorkspaceID string    `json:"workspaceId,omitempty"`
	Scopes      []string  `json:"scopes"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

func newSessionInfo(sess dashboard.Session, v viewer.Viewer) sessionInfo {
	scopes := v.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return sessionInfo{CSRF: sess.CSRF, Prefix: sess.Prefix, Operator: sess.Operator,
		WorkspaceID: v.WorkspaceID, Scopes: scopes, ExpiresAt: sess.Expires}
}

// dashboardRoutes serves the dashboard: its session (POST to sign in with a
// credential, GET to learn it, DELETE to sign out) and its pages.
type dashboardRoutes struct {
	sessions *dashboard.Sessions
	// fails counts wrong credentials at sign-in, per address.
	fails *failures
	// signInLimit counts sign-ins per address.
	signInLimit func(http.Handler) http.Handler
	// secure marks the cookie Secure when the public URL is https.
	secure bool
	assets fs.FS
}

func (d *dashboardRoutes) mount(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(notFramable)
		r.With(d.signInLimit).Method(http.MethodPost, "/dashboard/session", handlerFunc(d.signIn))
		r.Method(http.MethodGet, "/dashboard/session", handlerFunc(d.session))
		r.Method(http.MethodDelete, "/dashboard/session", handlerFunc(d.signOut))
		for _, p := range []string{"/dashboard", "/dashboard/*"} {
			r.Method(http.MethodGet, p, handlerFunc(d.page))
			r.Method(http.MethodHead, p, handlerFunc(d.page))
		}
	})
	r.Method(http.MethodGet, "/", http.HandlerFunc(root))
	r.Method(http.MethodHead, "/", http.HandlerFunc(root))
}

// root answers GET / : a browser (its Accept names text/html) is sent to the
// dashboard; an API client gets the 404 envelope of any unknown path, which
// says where the dashboard and the API are.
func root(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	if acceptsHTML(r.Header.Values("Accept")) {
		http.Redirect(w, r, "/dashboard", http.StatusFound)
		return
	}
	writeError(w, r, switchboard.Errorf(switchboard.ENOTFOUND,
		"No route for %s %s: the API is under /v1 and /graphql, the dashboard at /dashboard.", r.Method, r.URL.Path))
}

// acceptsHTML reports whether an Accept header names text/html (as browsers'
// navigations do), with a quality above zero.
func acceptsHTML(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			media, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(media), "text/html") {
				continue
			}
			if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
				if f, err := strconv.ParseFloat(strings.SplitN(q, ";", 2)[0], 64); err == nil && f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

func (d *dashboardRoutes) signIn(w http.ResponseWriter, r *http.Request) error {
	if err := d.fails.blocked(w, r, operatorFailures); err != nil {
		return err
	}
	var body struct {
		Key string `json:"key"`
	}
	if err := decodeJSONUpTo(w, r, &body, false, 4<<10); err != nil {
		return err
	}
	if body.Key == "" {
		var p switchboard.Problems
		p.Add("key", "required", "key is required: an API key, or the operator token")
		return p.Err(switchboard.EVALIDATION)
	}
	token, sess, err := d.sessions.Open(r.Context(), body.Key)
	if err != nil {
		return d.fails.failed(w, r, operatorFailures, err)
	}
	_, v, err := d.sessions.Find(r.Context(), token)
	if err != nil {
		return err
	}
	http.SetCookie(w, d.cookie(r, token, sess.Expires))
	if lw, ok := w.(*logWriter); ok {
		lw.key = sess.Prefix
	}
	writeJSON(w, http.StatusCreated, newSessionInfo(sess, v))
	return nil
}

func (d *dashboardRoutes) session(w http.ResponseWriter, r *http.Request) error {
	sess, v, err := d.find(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newSessionInfo(sess, v))
	return nil
}

func (d *dashboardRoutes) signOut(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(dashboard.CookieName)
	if err != nil {
		return switchboard.Errorf(switchboard.EUNAUTHORIZED, "Not signed in to the dashboard.")
	}
	sess, _, err := d.sessions.Find(r.Context(), c.Value)
	if err != nil && switchboard.ErrorCode(err) != switchboard.EUNAUTHORIZED {
		return err // Redis is down: the session may live on, so the cookie stays
	}
	if err == nil && !sess.CheckCSRF(r.Header.Get(dashboard.CSRFHeader)) {
		return errCSRF
	}
	if err == nil {
		if err := d.sessions.Close(r.Context(), c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, d.cookie(r, "", time.Unix(0, 0))) // the cookie goes either way
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// find returns the session of the request's cookie.
func (d *dashboardRoutes) find(r *http.Request) (dashboard.Session, viewer.Viewer, error) {
	c, err := r.Cookie(dashboard.CookieName)
	if err != nil {
		return dashboard.Session{}, viewer.Viewer{}, switchboard.Errorf(switchboard.EUNAUTHORIZED, "Not signed in to the dashboard.")
	}
	return d.sessions.Find(r.Context(), c.Value)
}

func (d *dashboardRoutes) cookie(r *http.Request, token string, expires time.Time) *http.Cookie {
	return &http.Cookie{Name: dashboard.CookieName, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: d.secure || r.TLS != nil}
}

// page serves the dashboard's files under /dashboard/assets/ and index.html for
// every other path (the pages route in the browser).
func (d *dashboardRoutes) page(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	name, isAsset := strings.CutPrefix(r.URL.Path, "/dashboard/assets/")
	if !isAsset {
		name = "index.html"
	} else if name = path.Clean("/" + name)[1:]; name == "index.html" {
		name = "" // the page is served at page paths only
	}
	f, err := d.assets.Open(name)
	if err != nil {
		return switchboard.Errorf(switchboard.ENOTFOUND, "No such file of the dashboard.")
	}
	defer f.Close()
	info, err := f.Stat()
	content, seekable := f.(io.ReadSeeker)
	if err != nil || info.IsDir() || !seekable {
		return switchboard.Errorf(switchboard.ENOTFOUND, "No such file of the dashboard.")
	}
	h.Set("Cache-Control", "no-cache")
	// ServeContent, not ServeFileFS: the file is named here, whatever the path
	// held (ServeFileFS refuses a path with .. in it with a plain 400).
	http.ServeContent(w, r, info.Name(), info.ModTime(), content)
	return nil
}

// errCSRF refuses a request that carries the session cookie without its CSRF token.
var errCSRF = &switchboard.Error{Code: switchboard.ECSRF,
	Message: "A request with the dashboard's session cookie must carry the session's " + dashboard.CSRFHeader + " header.",
	Details: []switchboard.Detail{{Path: dashboard.CSRFHeader, Code: "csrf", Message: "missing or wrong CSRF token"}}}

// sessionViewer authenticates a request by its dashboard session cookie, for
// /graphql: the CSRF header must match, and the session must stand for an API
// key (the operator's has no workspace). ok is false when there is no cookie.
func sessionViewer(sessions *dashboard.Sessions, r *http.Request) (v viewer.Viewer, prefix string, ok bool, err error) {
	if sessions == nil {
		return viewer.Viewer{}, "", false, nil
	}
	c, cerr := r.Cookie(dashboard.CookieName)
	if errors.Is(cerr, http.ErrNoCookie) {
		return viewer.Viewer{}, "", false, nil
	}
	var sess dashboard.Session
	if cerr == nil {
		sess, v, err = sessions.Find(r.Context(), c.Value)
	} else {
		err = switchboard.Errorf(switchboard.EUNAUTHORIZED, "Malformed dashboard session cookie.")
	}
	switch {
	case err != nil:
	case !sess.CheckCSRF(r.Header.Get(dashboard.CSRFHeader)):
		err = errCSRF
	case sess.Operator:
		err = switchboard.Errorf(switchboard.EFORBIDDEN, "The operator's session has no workspace: sign in with an API key to use GraphQL.")
	}
	return v, sess.Prefix, true, err
}
