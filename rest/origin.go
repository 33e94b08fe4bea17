package rest

import (
	"net/http"
	"net/url"

	"github.com/switchboardhq/switchboard"
)

// originCheck refuses a state-changing request that a browser sent from another
// origin: the cross-site request forgery a cookie, or Basic credentials the
// browser replays by itself, would otherwise carry out. GET, HEAD and OPTIONS
// always pass. For the others it follows net/http's CrossOriginProtection
// (Sec-Fetch-Site, else Origin against Host or the public URL); a request with
// neither header is judged by its Referer, and when it has none either it is
// refused if it comes with the session cookie (a browser always sends one of
// the three on a same-origin call) and taken otherwise (curl, scripts).
type originCheck struct {
	cop *http.CrossOriginProtection
	// public is the origin of the public URL (scheme://host), also the server's own
	// when a proxy rewrites Host.
	public string
}

// newOriginCheck returns the check of a server whose public URL is publicURL
// (optional).
func newOriginCheck(publicURL string) *originCheck {
	o := &originCheck{cop: http.NewCrossOriginProtection()}
	if u, err := url.Parse(publicURL); err == nil && u.Scheme != "" && u.Host != "" {
		o.public = u.Scheme + "://" + u.Host
		_ = o.cop.AddTrustedOrigin(o.public)
	}
	return o
}

// check answers nil when r may change state; cookie says whether r is
// authenticated by the dashboard's session cookie.
func (o *originCheck) check(r *http.Request, cookie bool) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if err := o.cop.Check(r); err != nil {
		return errCrossOrigin
	}
	if r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != "" {
		return nil // judged same-origin by the headers above
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		u, err := url.Parse(ref)
		if err == nil && u.Host != "" && (u.Host == r.Host || u.Scheme+"://"+u.Host == o.public) {
			return nil
		}
		return errCrossOrigin
	}
	if cookie {
		return errCrossOrigin
	}
	return nil
}

// errCrossOrigin refuses a state-changing call from another origin.
var errCrossOrigin = &switchboard.Error{Code: switchboard.ECSRF,
	Message: "This call changes state and must come from this server's own pages: it came from another origin, or (with the session cookie) without an Origin, Sec-Fetch-Site or Referer header.",
	Details: []switchboard.Detail{{Path: "Origin", Code: "cross_origin", Message: "not this server's origin"}}}

// notFramable marks every answer of next as not to be shown in a frame
// (clickjacking): X-Frame-Options for older browsers, and CSP frame-ancestors
// unless next sets a policy of its own (which must then say it).
func notFramable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}
