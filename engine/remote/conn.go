package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
	features    []string     // the protocol features the hello announced that the server knows
	phone       string       // the account's own number the hello announced, or ""
	version     int          // the protocol version the welcome chose
	lastBeat    atomic.Int64 // unix nanos
	replaced    atomic.Bool  // set before close when the engine connected again
	attachedAt  int64        // unix nanos; set under hub.mu when it became the engine's socket

	// batches are the events frames read and not yet stored: the read loop
	// hands them to storeLoop and goes on reading (heartbeats, replies); a
	// frame that finds the queue full is refused with a retryable ack.
	batches chan *inbound
	// slots bounds the commands in flight on this connection (Hub.MaxInFlight).
	slots chan struct{}

	mu       sync.Mutex
	reported reported               // the last state frame's, for the route
	pending  map[string]chan *Frame // by command id
	done     chan struct{}
	once     sync.Once
}

// readText reads one text frame.
func readText(ctx context.Context, ws *websocket.Conn) ([]byte, error) {
	typ, data, err := ws.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errMalformed
	}
	return data, nil
}

// readFrame reads one text frame and decodes it.
func readFrame(ctx context.Context, ws *websocket.Conn) (*Frame, error) {
	data, err := readText(ctx, ws)
	if err != nil {
		return nil, err
	}
	var f Frame
	if err := json.Unmarshal(data, &f); err != nil || f.Type == "" {
		return nil, errMalformed
	}
	return &f, nil
}

// inbound is a frame an engine sent, as the hub reads it: the events of an
// events frame stay raw, to be counted before any is decoded, and then decoded
// and checked one by one.
type inbound struct {
	Frame
	Events []json.RawMessage `json:"events,omitempty"`
}

// readInbound reads one text frame of an engine and decodes it.
func readInbound(ctx context.Context, ws *websocket.Conn) (*inbound, error) {
	data, err := readText(ctx, ws)
	if err != nil {
		return nil, err
	}
	var f inbound
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

// end marks the connection ended, at once, without closing its socket: the read
// loop that failed closes it itself (closeFor), which may wait for the close
// handshake, and meanwhile no command may pick the connection.
func (c *conn) end() {
	c.once.Do(func() { close(c.done) })
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
		f, err := readInbound(ctx, c.ws)
		if err != nil {
			c.end()
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
				ch <- &f.Frame
			}
		case FrameEvents, FrameState:
			select {
			case c.batches <- f:
			default:
				c.hub.log().Warn("remote engine events frame refused: its queue is full", "engine", c.engineID, "queue", cap(c.batches))
				typ := FrameEventsAck
				if f.Type == FrameState {
					typ = FrameStateAck
				}
				ack := Frame{Type: typ, ID: f.ID, Error: &WireError{Code: switchboard.ERATELIMIT, Message: fmt.Sprintf(
					"%d frames of this engine are waiting to be stored; this one was not: send it again once an earlier one is acked.", cap(c.batches))}}
				if err := c.write(ctx, ack); err != nil {
					return // detach closes the socket
				}
			}
		default:
			// A newer version's frame: answered, never a close, so that the
			// protocol can grow additively.
			c.hub.log().Debug("remote engine frame of an unknown type ignored", "engine", c.engineID, "type", f.Type)
			if err := c.write(ctx, Frame{Type: FrameUnsupported, ID: f.ID, FrameType: truncate(f.Type)}); err != nil {
				return
			}
		}
	}
}

// storeLoop stores the queued events frames, in the order they came, and
// answers each one's ack, until the connection ends.
func (c *conn) storeLoop(ctx context.Context) {
	for {
		select {
		case <-c.done:
			return
		case f := <-c.batches:
			var ack Frame
			if f.Type == FrameState {
				ack = c.applyState(ctx, f)
			} else {
				ack = c.store(ctx, f.ID, f.Events)
			}
			if err := c.write(ctx, ack); err != nil {
				return // the read loop sees the socket end
			}
		}
	}
}

// store hands the events of an events frame to the sink, as this engine's and
// this workspace's whatever the frame says, and answers the frame's ack. A frame
// of more than maxBatch events is refused whole; an event that can never be
// applied (not an event, not valid UTF-8, a session event, one that
// engine.Event.Validate refuses) is refused alone, in the ack's rejected list,
// and the others are stored.
func (c *conn) store(ctx context.Context, id string, raws []json.RawMessage) Frame {
	ack := Frame{Type: FrameEventsAck, ID: id}
	if n, most := len(raws), c.hub.maxBatch(); n > most {
		c.hub.log().Warn("remote engine events frame refused: over maxBatch", "engine", c.engineID, "events", n, "maxBatch", most)
		ack.Error = &WireError{Code: switchboard.ETOOLARGE, Message: fmt.Sprintf(
			"An events frame carries at most %d events (the welcome's maxBatch); this one carried %d. None was stored: send them in smaller frames.", most, n)}
		return ack
	}
	out := make([]engine.Event, 0, len(raws))
	for i, raw := range raws {
		ev, err := decodeEvent(raw)
		if err != nil {
			r := Rejected{Index: i, Reason: truncate(strings.TrimPrefix(err.Error(), engine.ErrInvalidEvent.Error()+": "))}
			if len(ev.ID) <= engine.MaxIDLen {
				r.ID = ev.ID
			}
			ack.Rejected = append(ack.Rejected, r)
			continue
		}
		// The socket's token says whose events these are; the inbox keeps one
		// engine's ids apart from another's (inbox.dedupeKey).
		ev.WorkspaceID, ev.EngineID = c.workspaceID, c.engineID
		if ev.At.IsZero() {
			ev.At = time.Now()
		}
		out = append(out, ev)
	}
	if len(ack.Rejected) > 0 {
		c.hub.log().Warn("remote engine events refused", "engine", c.engineID, "refused", len(ack.Rejected),
			"of", len(raws), "first", ack.Rejected[0].Reason)
	}
	if err := c.hub.sink.HandleEvents(ctx, out); err != nil {
		c.hub.log().Warn("remote engine events not stored", "engine", c.engineID, "err", err)
		ack.Error = &WireError{Code: switchboard.ErrorCode(err), Message: switchboard.ErrorMessage(err)}
	}
	return ack
}

// decodeEvent decodes and checks one event of an events frame; the event is
// returned with what could be decoded of it (its id) when it is refused.
func decodeEvent(raw json.RawMessage) (engine.Event, error) {
	var ev engine.Event
	if !utf8.Valid(raw) {
		var id struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &id)
		return engine.Event{ID: id.ID}, fmt.Errorf("%w: the event is not valid UTF-8", engine.ErrInvalidEvent)
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		var id struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &id)
		return engine.Event{ID: id.ID}, fmt.Errorf("%w: not an event: %s", engine.ErrInvalidEvent, jsonError(err))
	}
	if ev.Type == engine.EventConnected || ev.Type == engine.EventGone {
		return ev, fmt.Errorf("%w: type %s: session events are the server's to tell", engine.ErrInvalidEvent, ev.Type)
	}
	// The server stamps these; what the engine said of them is not checked.
	ev.WorkspaceID, ev.EngineID = "", ""
	return ev, ev.Validate()
}

// jsonError is a decoding error without Go's type names.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return te.Field + " has the wrong type (" + te.Value + ")"
		}
		return "the event is not an object"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "malformed JSON"
	}
	return "a field has a bad value"
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
	if werr := c.acquire(ctx); werr != nil {
		return nil, werr
	}
	defer func() { <-c.slots }()
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

// inFlightWait is how long a command waits for one of its engine's in-flight
// slots before it fails engine_unavailable.
const inFlightWait = time.Second

// acquire takes one of the connection's in-flight slots, waiting at most
// inFlightWait (or until ctx or the connection ends).
func (c *conn) acquire(ctx context.Context) *WireError {
	select {
	case c.slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(inFlightWait)
	defer t.Stop()
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-c.done:
		return EncodeError(engine.ErrDisconnected)
	case <-ctx.Done():
		return EncodeError(engine.ErrTimeout)
	case <-t.C:
		return &WireError{Code: switchboard.ENOENGINE, Message: fmt.Sprintf(
			"The engine has %d commands in flight, its limit; retry shortly.", cap(c.slots))}
	}
}
