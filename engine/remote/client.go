package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// Welcome is what the server tells a remote engine when it connects.
type Welcome struct {
	EngineID    string
	WorkspaceID string
	Heartbeat   time.Duration
	TTL         time.Duration
	MaxFrame    int64
	// MaxBatch bounds the events of one events frame (0: the server said none).
	MaxBatch int
	// Version is the protocol version the server chose; Deprecated says it will
	// stop being served (upgrade the engine).
	Version    int
	Deprecated bool
}

// Start makes the engine a Client serves, once, at its first welcome. sink is
// where the engine reports what it observes: the Client, which carries events
// to the server.
type Start func(ctx context.Context, w Welcome, sink engine.BatchSink) (engine.Engine, error)

// Client is the reference client of the protocol: it connects a remote engine
// to a Switchboard server, says hello, heartbeats, serves the server's commands
// with the engine's methods and carries the engine's events to the server. It
// reconnects with backoff until the server ends the engine for good.
type Client struct {
	// URL is the server's base URL (http(s)://host) or the endpoint's (ws(s)://host/v1/engines/connect).
	URL string
	// Token is the engine token the server gave when the engine was created.
	Token string
	// Kind is gateway or regular (engine.KindGateway when empty).
	Kind string
	// Capabilities are announced in the hello: Capabilities of the engine's
	// type, for one (nil announces send only).
	Capabilities []string
	// Phone is the account's own number (E.164, +digits), announced in the
	// hello; empty announces none.
	Phone string
	// InlineMedia leaves FeatureMediaRefs out of the hello, like an engine
	// built before it: media then travels base64 inside the frames.
	InlineMedia bool
	// NoReconnect makes Run return when the connection ends.
	NoReconnect bool
	// Logger receives the client's log (slog.Default when nil).
	Logger *slog.Logger
	// HTTPClient dials the server (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Refused is told of each event the server refused for good, and why (see
	// Rejected); such an event is not reported again. Nil logs them.
	Refused func(ev engine.Event, reason string)

	// Rand draws the jitter of reconnect delays, in [0, 1) (math/rand/v2's
	// Float64 when nil; tests inject their own).
	Rand func() float64

	paused atomic.Bool // heartbeats held back (tests of heartbeat loss)

	mu      sync.Mutex
	eng     engine.Engine
	cur     *clientConn
	changed chan struct{} // closed and replaced when cur changes
}

// clientConn is one connection of a Client.
type clientConn struct {
	ws       *websocket.Conn
	welcome  Welcome
	mu       sync.Mutex
	acks     map[string]chan *Frame
	done     chan struct{}
	doneOnce sync.Once
}

func (c *Client) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// PauseHeartbeat holds heartbeats back (true) or resumes them, to test how the
// server treats an engine that stops heartbeating.
func (c *Client) PauseHeartbeat(paused bool) { c.paused.Store(paused) }

// Connected reports whether the client holds a welcomed connection.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur != nil
}

// CloseError is how the server ended a connection.
type CloseError struct {
	Code   int
	Reason string
}

// Error implements error.
func (e *CloseError) Error() string {
	return fmt.Sprintf("remote: the server closed the connection (%d %s)", e.Code, e.Reason)
}

// Run connects and serves until ctx ends, the server ends the engine for good
// (a *CloseError with a terminal code), or, with NoReconnect, the connection
// ends.
func (c *Client) Run(ctx context.Context, start Start) error {
	attempt := 0
	for {
		welcomed, err := c.session(ctx, start)
		var ce *CloseError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ce) && Terminal(ce.Code):
			return err
		case c.NoReconnect:
			return err
		}
		if welcomed {
			attempt = 0
		}
		backoff := c.Backoff(attempt)
		attempt++
		c.log().Warn("remote engine connection ended; reconnecting", "in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// Reconnect delays: the ceiling doubles from BackoffBase per failed attempt up
// to BackoffMax; the delay is drawn between half the ceiling and the ceiling
// ("equal jitter"), so that engines a server restart disconnected together do
// not all reconnect at the same instant.
const (
	BackoffBase = 500 * time.Millisecond
	BackoffMax  = 30 * time.Second
)

// Backoff is the delay before reconnect attempt n (0 for the first after a
// welcomed connection ended): a random point of [ceiling/2, ceiling), ceiling =
// min(BackoffBase·2ⁿ, BackoffMax).
func (c *Client) Backoff(n int) time.Duration {
	ceiling := BackoffMax
	if n < 16 {
		ceiling = min(BackoffBase<<n, BackoffMax)
	}
	r := c.Rand
	if r == nil {
		r = rand.Float64
	}
	return ceiling/2 + time.Duration(r()*float64(ceiling/2))
}

func (c *Client) endpoint() string {
	u := strings.TrimSuffix(c.URL, "/")
	if strings.HasPrefix(u, "http://") {
		u = "ws://" + strings.TrimPrefix(u, "http://")
	} else if strings.HasPrefix(u, "https://") {
		u = "wss://" + strings.TrimPrefix(u, "https://")
	}
	if !strings.HasSuffix(u, Path) {
		u += Path
	}
	return u
}

// session runs one connection.
func (c *Client) session(ctx context.Context, start Start) (welcomed bool, err error) {
	hdr := http.Header{}
	hdr.Set("Authorization", "Bearer "+c.Token)
	ws, resp, err := websocket.Dial(ctx, c.endpoint(), &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: c.HTTPClient})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			return false, &CloseError{Code: CloseUnauthorized, Reason: "the server refused the engine token"}
		}
		return false, err
	}
	defer ws.CloseNow()
	kind := c.Kind
	if kind == "" {
		kind = engine.KindGateway
	}
	caps := c.caps()
	hello, _ := json.Marshal(Frame{Type: FrameHello, Kind: kind, Capabilities: caps, Features: c.features(), Phone: c.Phone, Version: Version, Versions: Versions})
	if err := ws.Write(ctx, websocket.MessageText, hello); err != nil {
		return false, closeErr(err)
	}
	f, err := readFrame(ctx, ws)
	if err != nil {
		return false, closeErr(err)
	}
	if f.Type != FrameWelcome {
		return false, fmt.Errorf("remote: expected a welcome, got %q", f.Type)
	}
	w := Welcome{EngineID: f.EngineID, WorkspaceID: f.WorkspaceID, Heartbeat: time.Duration(f.HeartbeatMs) * time.Millisecond,
		TTL: time.Duration(f.TTLMs) * time.Millisecond, MaxFrame: f.MaxFrame, MaxBatch: f.MaxBatch,
		Version: max(f.Version, 1), Deprecated: f.Deprecated}
	if w.Deprecated {
		c.log().Warn("the server will stop serving this protocol version; upgrade the engine", "version", w.Version, "served", f.Versions)
	}
	if w.Heartbeat <= 0 {
		w.Heartbeat = 10 * time.Second
	}
	ws.SetReadLimit(max(w.MaxFrame, DefaultMaxFrame))
	cc := &clientConn{ws: ws, welcome: w, acks: map[string]chan *Frame{}, done: make(chan struct{})}
	defer cc.doneOnce.Do(func() { close(cc.done) })

	c.mu.Lock()
	eng := c.eng
	c.mu.Unlock()
	if eng == nil {
		if eng, err = start(ctx, w, c); err != nil {
			_ = ws.Close(websocket.StatusGoingAway, "the engine did not start")
			return true, err
		}
		c.mu.Lock()
		c.eng = eng
		c.mu.Unlock()
	}
	c.setCurrent(cc)
	defer c.setCurrent(nil)
	c.log().Info("remote engine connected", "engine", w.EngineID, "workspace", w.WorkspaceID)

	go c.heartbeat(ctx, cc)
	for {
		f, err := readFrame(ctx, ws)
		if err != nil {
			return true, closeErr(err)
		}
		switch f.Type {
		case FrameCommand:
			go c.serveCommand(ctx, cc, eng, f)
		case FrameEventsAck, FrameStateAck:
			cc.mu.Lock()
			ch := cc.acks[f.ID]
			delete(cc.acks, f.ID)
			cc.mu.Unlock()
			if ch != nil {
				ch <- f
			}
		default:
			// unsupported answers and a newer server's frames: ignored
			if f.Type == FrameUnsupported {
				c.log().Debug("the server does not know a frame type the client sent", "type", f.FrameType)
			}
		}
	}
}

func (c *Client) caps() []string {
	if c.Capabilities == nil {
		return []string{"send"}
	}
	return c.Capabilities
}

// closeErr turns a read or write failure into the server's close, if it was one.
func closeErr(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: int(ce.Code), Reason: ce.Reason}
	}
	return err
}

func (c *Client) setCurrent(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc == nil && c.cur != nil {
		c.cur.doneOnce.Do(func() { close(c.cur.done) })
	}
	c.cur = cc
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
}

func (c *Client) heartbeat(ctx context.Context, cc *clientConn) {
	t := time.NewTicker(cc.welcome.Heartbeat)
	defer t.Stop()
	raw, _ := json.Marshal(Frame{Type: FrameHeartbeat})
	for {
		select {
		case <-ctx.Done():
			return
		case <-cc.done:
			return
		case <-t.C:
			if c.paused.Load() {
				continue
			}
			wctx, cancel := context.WithTimeout(ctx, cc.welcome.Heartbeat)
			err := cc.ws.Write(wctx, websocket.MessageText, raw)
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// serveCommand runs one command with the engine and writes the reply.
func (c *Client) serveCommand(ctx context.Context, cc *clientConn, eng engine.Engine, f *Frame) {
	cctx, cancel := context.WithCancel(ctx)
	if f.Deadline != nil {
		cancel()
		cctx, cancel = context.WithDeadline(ctx, *f.Deadline)
	}
	defer cancel()
	res, err := c.serveMedia(cctx, eng, f.Method, f.Params)
	reply := Frame{Type: FrameReply, ID: f.ID, Result: res, Error: EncodeError(err)}
	raw, merr := json.Marshal(reply)
	if merr != nil {
		raw, _ = json.Marshal(Frame{Type: FrameReply, ID: f.ID, Error: &WireError{Code: codeEngineError, Message: merr.Error()}})
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	_ = cc.ws.Write(wctx, websocket.MessageText, raw)
}

// HandleEvent implements engine.Sink.
func (c *Client) HandleEvent(ctx context.Context, ev engine.Event) error {
	return c.HandleEvents(ctx, []engine.Event{ev})
}

// HandleEvents implements engine.BatchSink: it carries the events to the server
// and returns once the server stored them, or an error after which the engine
// reports them again (the server stores an event once per id). Events that do
// not fit one frame (the welcome's maxFrame bytes, maxBatch events) go in
// several. An event the server refuses for good (it can never be applied) is
// told to Refused and counts as carried: reporting it again cannot help.
func (c *Client) HandleEvents(ctx context.Context, evs []engine.Event) error {
	if len(evs) == 0 {
		return nil
	}
	c.mu.Lock()
	cc := c.cur
	c.mu.Unlock()
	if cc == nil {
		return errors.New("remote: not connected to the server")
	}
	if most := cc.welcome.MaxBatch; most > 0 && len(evs) > most {
		for start := 0; start < len(evs); start += most {
			if err := c.HandleEvents(ctx, evs[start:min(start+most, len(evs))]); err != nil {
				return err
			}
		}
		return nil
	}
	id := switchboard.NewID("evb")
	raw, err := json.Marshal(Frame{Type: FrameEvents, ID: id, Events: evs})
	if err != nil {
		return err
	}
	if cc.welcome.MaxFrame > 0 && int64(len(raw)) > cc.welcome.MaxFrame {
		if len(evs) == 1 {
			return fmt.Errorf("remote: a %s event of %d bytes exceeds the server's frame limit", evs[0].Type, len(raw))
		}
		return c.split(ctx, evs)
	}
	ch := make(chan *Frame, 1)
	cc.mu.Lock()
	cc.acks[id] = ch
	cc.mu.Unlock()
	defer func() {
		cc.mu.Lock()
		delete(cc.acks, id)
		cc.mu.Unlock()
	}()
	wctx, cancel := context.WithTimeout(ctx, DefaultCommandTimeout)
	defer cancel()
	if err := cc.ws.Write(wctx, websocket.MessageText, raw); err != nil {
		return err
	}
	select {
	case f := <-ch:
		switch {
		case f.Error != nil && f.Error.Code == switchboard.ETOOLARGE && len(evs) > 1:
			return c.split(ctx, evs) // a server whose maxBatch the welcome did not tell
		case f.Error != nil && f.Error.Code == switchboard.ERATELIMIT:
			// The connection's queue of frames to store was full: send it again
			// once the earlier frames had time to be stored.
			select {
			case <-time.After(busyRetry):
				return c.HandleEvents(ctx, evs)
			case <-cc.done:
				return errors.New("remote: the connection ended before the server stored the events")
			case <-ctx.Done():
				return ctx.Err()
			}
		case f.Error != nil:
			return fmt.Errorf("remote: the server did not store the events: %s", f.Error.Message)
		}
		c.refused(evs, f.Rejected)
		return nil
	case <-cc.done:
		return errors.New("remote: the connection ended before the server stored the events")
	case <-wctx.Done():
		return wctx.Err()
	}
}

// ReportState tells the server the engine's session state (pairing with its
// QR, logged out, banned, ...; see State) and returns once the server applied
// it. Report each change; a state replaces the last one whole. Reports after a
// reconnect are the engine's to repeat.
func (c *Client) ReportState(ctx context.Context, s State) error {
	c.mu.Lock()
	cc := c.cur
	c.mu.Unlock()
	if cc == nil {
		return errors.New("remote: not connected to the server")
	}
	id := switchboard.NewID("st")
	raw, err := json.Marshal(Frame{Type: FrameState, ID: id, State: &s})
	if err != nil {
		return err
	}
	ch := make(chan *Frame, 1)
	cc.mu.Lock()
	cc.acks[id] = ch
	cc.mu.Unlock()
	defer func() {
		cc.mu.Lock()
		delete(cc.acks, id)
		cc.mu.Unlock()
	}()
	wctx, cancel := context.WithTimeout(ctx, DefaultCommandTimeout)
	defer cancel()
	if err := cc.ws.Write(wctx, websocket.MessageText, raw); err != nil {
		return err
	}
	select {
	case f := <-ch:
		if f.Error != nil && f.Error.Code == switchboard.ERATELIMIT {
			select {
			case <-time.After(busyRetry):
				return c.ReportState(ctx, s)
			case <-wctx.Done():
				return wctx.Err()
			}
		}
		if f.Error != nil {
			return fmt.Errorf("remote: the server did not apply the state: %s", f.Error.Message)
		}
		return nil
	case <-cc.done:
		return errors.New("remote: the connection ended before the server applied the state")
	case <-wctx.Done():
		return wctx.Err()
	}
}

// busyRetry is how long the client waits before it sends again an events frame
// the server refused because the connection's queue was full.
const busyRetry = 200 * time.Millisecond

// split carries evs in two halves.
func (c *Client) split(ctx context.Context, evs []engine.Event) error {
	if err := c.HandleEvents(ctx, evs[:len(evs)/2]); err != nil {
		return err
	}
	return c.HandleEvents(ctx, evs[len(evs)/2:])
}

// refused tells of the events of a frame that the server refused.
func (c *Client) refused(evs []engine.Event, rejected []Rejected) {
	for i, r := range rejected {
		if r.Index < 0 || r.Index >= len(evs) {
			continue
		}
		if c.Refused != nil {
			c.Refused(evs[r.Index], r.Reason)
		} else if i < 5 { // a few are enough to tell what is wrong
			c.log().Warn("the server refused an event for good", "event", evs[r.Index].ID, "type", evs[r.Index].Type,
				"reason", r.Reason, "refused", len(rejected))
		}
	}
}
