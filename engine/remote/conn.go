package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
)

// conn is one engine's socket on the replica that holds it.
type conn struct {
	hub         *Hub
	ws          *websocket.Conn
	raw         net.Conn // ws's TCP connection, for closeFor
	id          string   // of this connection, to tell it from a later one of the same engine
	engineID    string
	workspaceID string
	kind        string
	caps        []string
	lastBeat    atomic.Int64 // unix nanos
	replaced    atomic.Bool  // set before close when the engine connected again

	mu      sync.Mutex
	pending map[string]chan *Frame // by command id
	done    chan struct{}
	once    sync.Once
}

// readFrame reads one text frame and decodes it.
func readFrame(ctx context.Context, ws *websocket.Conn) (*Frame, error) {
	typ, data, err := ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errMalformed
	}
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil || f.Type == "" {
		return nil, errMalformed
	}
	return &f, nil
}

var errMalformed = errors.New("remote: malformed frame")

// closeFor closes a socket after a read failed: a malformed frame is a policy
// violation. For an oversized one the library has sent 1009 already; the close
// handshake then drains the rest of the frame, so the peer reads the 1009
// instead of a reset (closing with its bytes unread would make TCP send one).
// The library drains without a deadline, and a peer may declare a frame of any
// length and then stall, before it has even sent its token: raw, the socket's
// TCP connection, bounds the drain to drainGrace.
func closeFor(ws *websocket.Conn, raw net.Conn, err error) {
	switch {
	case errors.Is(err, errMalformed):
		_ = ws.Close(websocket.StatusPolicyViolation, "malformed frame")
	case errors.Is(err, websocket.ErrMessageTooBig) && raw != nil:
		_ = raw.SetReadDeadline(time.Now().Add(drainGrace))
		_ = ws.Close(websocket.StatusMessageTooBig, "frame too large")
	default:
		_ = ws.CloseNow()
	}
}

// drainGrace is how long the rest of an oversized frame is read before its
// socket closes (the library's own wait for a close handshake).
const drainGrace = 5 * time.Second

// hijackRecorder keeps the connection websocket.Accept hijacks, for closeFor.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

// Hijack hijacks the wrapped writer's connection and keeps it.
func (w *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	w.conn = c
	return c, rw, err
}

func (c *conn) write(ctx context.Context, f Frame) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.ws.Write(wctx, websocket.MessageText, raw)
}

// close ends the connection once, and fails its pending commands.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.done)
		go func() { _ = c.ws.Close(code, reason) }()
	})
}

// closed reports whether the connection ended (or is ending).
func (c *conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// read serves the engine's frames until the connection ends.
func (c *conn) read(ctx context.Context) {
	for {
		f, err := readFrame(ctx, c.ws)
		if err != nil {
			closeFor(c.ws, c.raw, err)
			return
		}
		switch f.Type {
		case FrameHeartbeat:
			c.lastBeat.Store(time.Now().UnixNano())
			if err := c.hub.refresh(ctx, c); err != nil {
				c.hub.log().Warn("remote engine heartbeat not recorded", "engine", c.engineID, "err", err)
			}
		case FrameReply:
			c.mu.Lock()
			ch := c.pending[f.ID]
			delete(c.pending, f.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- f
			}
		case FrameEvents:
			ack := Frame{Type: FrameEventsAck, ID: f.ID}
			if err := c.store(ctx, f.Events); err != nil {
				c.hub.log().Warn("remote engine events not stored", "engine", c.engineID, "err", err)
				ack.Error = &WireError{Code: switchboard.ErrorCode(err), Message: switchboard.ErrorMessage(err)}
			}
			if err := c.write(ctx, ack); err != nil {
				return
			}
		default:
			_ = c.ws.Close(websocket.StatusPolicyViolation, "unknown frame type")
			return
		}
	}
}

// store hands what the engine reported to the sink, as this engine's and this
// workspace's whatever the frame says. Session events are the server's to tell.
func (c *conn) store(ctx context.Context, evs []engine.Event) error {
	out := make([]engine.Event, 0, len(evs))
	for _, ev := range evs {
		if ev.Type == engine.EventConnected || ev.Type == engine.EventGone || ev.Type == "" {
			continue
		}
		if ev.ID != "" {
			ev.ID = c.engineID + ":" + ev.ID // an engine's ids cannot meet another's
		}
		ev.WorkspaceID, ev.EngineID = c.workspaceID, c.engineID
		if ev.At.IsZero() {
			ev.At = time.Now()
		}
		out = append(out, ev)
	}
	return c.hub.sink.HandleEvents(ctx, out)
}

// watch closes the connection once its heartbeat is older than ttl.
func (c *conn) watch(ttl time.Duration) {
	t := time.NewTicker(max(ttl/10, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if time.Since(time.Unix(0, c.lastBeat.Load())) > ttl {
				c.hub.log().Warn("remote engine stopped heartbeating", "engine", c.engineID)
				c.close(CloseHeartbeat, "no heartbeat within the presence TTL")
				return
			}
		}
	}
}

// call sends a command and waits for its reply, the context's end or the
// connection's.
func (c *conn) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *WireError) {
	id := switchboard.NewID("cmd")
	ch := make(chan *Frame, 1)
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return nil, EncodeError(engine.ErrDisconnected)
	default:
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	f := Frame{Type: FrameCommand, ID: id, Method: method, Params: params}
	if d, ok := ctx.Deadline(); ok {
		f.Deadline = &d
	}
	if err := c.write(ctx, f); err != nil {
		return nil, EncodeError(engine.ErrDisconnected)
	}
	select {
	case r := <-ch:
		return r.Result, r.Error
	case <-c.done:
		return nil, EncodeError(engine.ErrDisconnected)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, EncodeError(engine.ErrTimeout)
		}
		return nil, &WireError{Code: codeEngineError, Message: ctx.Err().Error()}
	}
}
