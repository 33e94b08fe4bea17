// Package dashboard is the web dashboard's server side: the embedded pages (they
// speak only GraphQL) and the sessions that stand for a credential in a browser.
// A session is a random token in an HttpOnly, SameSite=Strict cookie; Redis keeps,
// under the token's hash, the hash of the credential it was opened with (never
// the credential), so the credential never reaches browser storage, a revoked key
// ends its sessions on every replica, and so does a rotated operator token.
// Package rest serves both over HTTP.
package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/viewer"
)

// CookieName is the session cookie.
const CookieName = "switchboard_session"

// CSRFHeader carries the session's CSRF token on every request the pages make
// with the cookie; a request with the cookie and without the header is refused.
const CSRFHeader = "X-Switchboard-CSRF"

// DefaultTTL is how long a session lasts from sign-in.
const DefaultTTL = 12 * time.Hour

// keyPrefix names the sessions in Redis.
const keyPrefix = "switchboard:dashboard-session:"

// Session is a signed-in browser: the credential it stands for and its CSRF token.
type Session struct {
	// KeyHash is auth.Hash of the API key signed in with; empty for the operator.
	KeyHash string `json:"key_hash,omitempty"`
	// Operator is true when signed in with the operator token: the read-write
	// queue monitor, and no workspace.
	Operator bool `json:"operator,omitempty"`
	// OperatorHash is operatorHash of the operator token signed in with: the
	// session lasts only while the server holds that token.
	OperatorHash string `json:"operator_hash,omitempty"`
	// Prefix is the shown part of the key (auth.Redact), for the page and the log.
	Prefix string `json:"prefix"`
	// CSRF must come back in CSRFHeader.
	CSRF string `json:"csrf"`
	// Expires is when the session ends.
	Expires time.Time `json:"expires"`
}

// Sessions opens, finds and closes sessions in Redis, shared by every replica.
type Sessions struct {
	// Redis keeps the sessions.
	Redis redis.UniversalClient
	// Keys authenticates the API keys sessions stand for.
	Keys *auth.Keys
	// OperatorToken, when set, signs in as the operator.
	OperatorToken string
	// TTL is the life of a session; DefaultTTL when zero.
	TTL time.Duration
}

func (s *Sessions) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return DefaultTTL
}

// errSignedOut is the answer to a missing, unknown or expired session.
var errSignedOut = switchboard.Errorf(switchboard.EUNAUTHORIZED, "Not signed in to the dashboard, or the session ended: sign in again.")

// Open checks a credential (an API key or the operator token) and opens a session
// for it: the token for the cookie, and the session.
func (s *Sessions) Open(ctx context.Context, credential string) (string, Session, error) {
	credential = strings.TrimSpace(credential)
	sess := Session{CSRF: switchboard.RandomToken(24), Expires: time.Now().Add(s.ttl()).UTC().Truncate(time.Second)}
	switch {
	case s.OperatorToken != "" && subtle.ConstantTimeCompare([]byte(credential), []byte(s.OperatorToken)) == 1:
		sess.Operator, sess.OperatorHash, sess.Prefix = true, operatorHash(s.OperatorToken), "operator"
	default:
		if _, err := s.Keys.Authenticate(ctx, credential); err != nil {
			return "", Session{}, err
		}
		sess.KeyHash, sess.Prefix = auth.Hash(credential), auth.Redact(credential)
	}
	token := switchboard.RandomToken(32)
	raw, err := json.Marshal(sess)
	if err != nil {
		return "", Session{}, err
	}
	if err := s.Redis.Set(ctx, redisKey(token), raw, s.ttl()).Err(); err != nil {
		return "", Session{}, fmt.Errorf("%w: dashboard session: %v", switchboard.ErrUnavailable, err)
	}
	return token, sess, nil
}

// Find returns the session of token and the viewer it stands for: the key's, or
// for the operator a viewer of no workspace. A session whose key was revoked is
// ended. It answers EUNAUTHORIZED when there is no such session.
func (s *Sessions) Find(ctx context.Context, token string) (Session, viewer.Viewer, error) {
	if token == "" || len(token) > 128 {
		return Session{}, viewer.Viewer{}, errSignedOut
	}
	raw, err := s.Redis.Get(ctx, redisKey(token)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Session{}, viewer.Viewer{}, errSignedOut
	} else if err != nil {
		return Session{}, viewer.Viewer{}, fmt.Errorf("%w: dashboard session: %v", switchboard.ErrUnavailable, err)
	}
	var sess Session
	if err := json.Unmarshal(raw, &sess); err != nil {
		return Session{}, viewer.Viewer{}, fmt.Errorf("dashboard: session record: %w", err)
	}
	if sess.Operator {
		// The token was taken away or rotated since (or the session predates
		// the binding): the session ends with the token it was opened with. It
		// is refused, not deleted: while replicas roll from one token to the
		// next, a replica that still holds the old token must not end the
		// sessions of the new one.
		if s.OperatorToken == "" || sess.OperatorHash == "" ||
			subtle.ConstantTimeCompare([]byte(sess.OperatorHash), []byte(operatorHash(s.OperatorToken))) != 1 {
			return Session{}, viewer.Viewer{}, errSignedOut
		}
		return sess, viewer.Viewer{Scopes: []string{switchboard.ScopeOperator}}, nil
	}
	v, err := s.Keys.AuthenticateHash(ctx, sess.KeyHash)
	if err != nil {
		if switchboard.ErrorCode(err) == switchboard.EUNAUTHORIZED {
			_ = s.Close(ctx, token) // revoked: the session ends with its key
		}
		return Session{}, viewer.Viewer{}, err
	}
	return sess, v, nil
}

// Close ends the session of token.
func (s *Sessions) Close(ctx context.Context, token string) error {
	if err := s.Redis.Del(ctx, redisKey(token)).Err(); err != nil {
		return fmt.Errorf("%w: dashboard session: %v", switchboard.ErrUnavailable, err)
	}
	return nil
}

// CheckCSRF reports whether got is the session's CSRF token.
func (sess Session) CheckCSRF(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) == 1
}

// operatorHash is what a session keeps of the operator token: its SHA-256,
// under a label of its own so that it is never the hash of an API key.
func operatorHash(token string) string {
	sum := sha256.Sum256([]byte("switchboard operator session\x00" + token))
	return hex.EncodeToString(sum[:])
}

func redisKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return keyPrefix + hex.EncodeToString(sum[:])
}
