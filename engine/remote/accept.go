package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
)

// Accepting an engine: the upgrade, the limits on sockets that have not said
// hello yet, authentication and the welcome.

// Handler serves the protocol's WebSocket endpoint. A token sent in the
// Authorization header is checked before the upgrade (reject answers a bad
// one); without it the hello frame must carry it, and the upgrade takes one of
// its address's pending slots until the welcome (see admit): one past them is
// answered 429 rate_limited. client names the address a request comes from (the
// one behind a trusted proxy); nil takes the connecting address.
func (h *Hub) Handler(reject func(w http.ResponseWriter, r *http.Request, err error), client func(*http.Request) string) http.Handler {
	if client == nil {
		client = func(r *http.Request) string { return remoteHost(r.RemoteAddr) }
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var row *ent.Engine
		release := func() {}
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			var err error
			if row, err = h.authenticate(r.Context(), strings.TrimSpace(bearer)); err != nil {
				reject(w, r, err)
				return
			}
		} else {
			addr := client(r)
			if release, ok = h.admit(addr); !ok {
				h.log().Warn("engine upgrade refused: too many pending hellos", "addr", addr)
				w.Header().Set("Retry-After", strconv.Itoa(int(helloTimeout/time.Second)))
				reject(w, r, switchboard.Errorf(switchboard.ERATELIMIT,
					"Too many engine connections from this address are waiting for their hello; retry later."))
				return
			}
		}
		defer release() // by then serve has released it, or the upgrade failed
		rec := &hijackRecorder{ResponseWriter: w}
		ws, err := websocket.Accept(rec, r, &websocket.AcceptOptions{
			// Engines authenticate by token, never by cookie: any origin (a
			// browser extension's) may connect.
			InsecureSkipVerify: true,
		})
		if err != nil {
			return // Accept answered the request
		}
		h.serve(context.WithoutCancel(r.Context()), ws, rec.conn, row, release)
	})
}

// admit takes a pending slot for a socket of addr that has not said hello yet;
// release gives it back (once, whatever the number of calls). ok is false when
// the address holds MaxPendingPerAddress of them already, or the replica
// MaxPending.
func (h *Hub) admit(addr string) (release func(), ok bool) {
	perAddress, total := h.MaxPendingPerAddress, h.MaxPending
	if perAddress <= 0 {
		perAddress = DefaultMaxPendingPerAddress
	}
	if total <= 0 {
		total = DefaultMaxPending
	}
	h.pendingMu.Lock()
	defer h.pendingMu.Unlock()
	if h.pending[addr] >= perAddress || h.pendingN >= total {
		return nil, false
	}
	h.pending[addr]++
	h.pendingN++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.pendingMu.Lock()
			defer h.pendingMu.Unlock()
			if h.pending[addr]--; h.pending[addr] <= 0 {
				delete(h.pending, addr)
			}
			h.pendingN--
		})
	}, true
}

// remoteHost is the host of a request's remote address (its IP).
func remoteHost(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

func (h *Hub) authenticate(ctx context.Context, token string) (*ent.Engine, error) {
	row, err := auth.AuthenticateEngine(ctx, h.client, token)
	if err == nil && row.Kind != entengine.KindRemote {
		err = switchboard.Errorf(switchboard.EUNAUTHORIZED, "The token is not a remote engine's.")
	}
	return row, err
}

// hello is a hello frame as the hub reads it: the token first, alone; the rest
// only once the token is good.
type hello struct {
	Type  string `json:"type"`
	Token string `json:"token"`
}

// helloBody is the rest of a hello.
type helloBody struct {
	Kind         string            `json:"kind"`
	Capabilities []json.RawMessage `json:"capabilities"`
	Features     []json.RawMessage `json:"features"`
	Phone        string            `json:"phone"`
	Version      int               `json:"version"`
	Versions     []int             `json:"versions"`
}

// negotiate is the version a hello is served at: the highest one both the
// engine (versions, else version, else 1) and the server speak; ok is false
// when there is none.
func negotiate(b helloBody) (version int, ok bool) {
	theirs := b.Versions
	if len(theirs) == 0 {
		theirs = []int{max(b.Version, 1)}
	}
	for _, v := range theirs {
		if slices.Contains(Versions, v) && v > version {
			version = v
		}
	}
	return version, version > 0
}

// serve runs one engine connection, over raw, until it ends. Until its welcome
// the socket reads at most HelloMaxFrame a frame; release gives back its
// pending slot once the hello is answered.
func (h *Hub) serve(ctx context.Context, ws *websocket.Conn, raw net.Conn, row *ent.Engine, release func()) {
	ws.SetReadLimit(HelloMaxFrame)
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	data, err := readText(hctx, ws)
	cancel()
	if err != nil {
		release()
		closeFor(ws, raw, err)
		return
	}
	var hi hello
	if json.Unmarshal(data, &hi) != nil || hi.Type == "" {
		release()
		_ = ws.Close(websocket.StatusPolicyViolation, "malformed frame")
		return
	}
	if hi.Type != FrameHello {
		release()
		_ = ws.Close(websocket.StatusPolicyViolation, "the first frame must be a hello")
		return
	}
	if row == nil {
		if row, err = h.authenticate(ctx, hi.Token); err != nil {
			release()
			_ = ws.Close(CloseUnauthorized, truncate(switchboard.ErrorMessage(err)))
			return
		}
	}
	release()
	var body helloBody
	if err := json.Unmarshal(data, &body); err != nil {
		_ = ws.Close(websocket.StatusPolicyViolation, "malformed hello")
		return
	}
	version, ok := negotiate(body)
	if !ok {
		_ = ws.Close(CloseUnsupportedVersion, truncate(fmt.Sprintf("unsupported_version: the server speaks protocol versions %v", Versions)))
		return
	}
	if body.Kind != engine.KindGateway && body.Kind != engine.KindRegular {
		_ = ws.Close(websocket.StatusPolicyViolation, "kind must be gateway or regular")
		return
	}
	if body.Phone != "" && !ValidPhone(body.Phone) {
		_ = ws.Close(websocket.StatusPolicyViolation, "phone must be an E.164 number such as +15550001111")
		return
	}
	if len(body.Capabilities) > MaxCapabilities {
		_ = ws.Close(websocket.StatusPolicyViolation, fmt.Sprintf("a hello announces at most %d capabilities", MaxCapabilities))
		return
	}
	if len(body.Features) > MaxFeatures {
		_ = ws.Close(websocket.StatusPolicyViolation, fmt.Sprintf("a hello announces at most %d features", MaxFeatures))
		return
	}
	var features []string
	for _, raw := range body.Features {
		var f string
		if json.Unmarshal(raw, &f) == nil && slices.Contains(Features, f) && !slices.Contains(features, f) {
			features = append(features, f)
		}
	}
	var caps []string
	for _, raw := range body.Capabilities {
		var c string
		if json.Unmarshal(raw, &c) == nil && engine.KnownCapability(c) && !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	c := &conn{hub: h, ws: ws, raw: raw, id: switchboard.NewID("con"), engineID: row.ID, workspaceID: row.WorkspaceID,
		kind: body.Kind, caps: caps, features: features, phone: body.Phone, version: version, pending: map[string]chan *Frame{}, done: make(chan struct{}),
		batches: make(chan *inbound, h.eventsQueue()), slots: make(chan struct{}, h.maxInFlight())}
	c.lastBeat.Store(time.Now().UnixNano())
	// The welcome goes first: once attached, commands may reach the engine, and
	// the engine takes none before its welcome.
	ttl := h.ttl()
	welcome := Frame{Type: FrameWelcome, EngineID: row.ID, WorkspaceID: row.WorkspaceID, Version: version,
		Versions: Versions, Deprecated: slices.Contains(DeprecatedVersions, version),
		HeartbeatMs: (ttl / 3).Milliseconds(), TTLMs: ttl.Milliseconds(), MaxFrame: h.maxFrame(), MaxBatch: h.maxBatch(),
		Features: h.served(features)}
	if err := c.write(ctx, welcome); err != nil {
		_ = ws.CloseNow()
		return
	}
	ws.SetReadLimit(h.maxFrame())
	if err := h.attach(ctx, c, row); err != nil {
		h.log().Warn("remote engine not attached", "engine", row.ID, "err", err)
		c.close(websocket.StatusTryAgainLater, "the server cannot take the engine now")
		h.forget(c)
		return
	}
	defer h.detach(c)
	go c.watch(ttl)
	go c.storeLoop(ctx)
	c.read(ctx)
}
