package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/viewer"
)

// Defaults of a Hub.
const (
	// DefaultMaxFrame bounds one frame an engine sends: 16 MiB, room for a media
	// download or a page of history.
	DefaultMaxFrame = 16 << 20
	// DefaultCommandTimeout bounds a command whose context has no deadline.
	DefaultCommandTimeout = 30 * time.Second
	// DefaultMaxPendingPerAddress bounds the sockets one client address may
	// hold open before their welcome without a token in the upgrade's header
	// (see Hub.MaxPendingPerAddress).
	DefaultMaxPendingPerAddress = 8
	// DefaultMaxPending bounds such sockets on one replica, whatever their
	// addresses: with HelloMaxFrame, at most 32 MiB of hellos in flight.
	DefaultMaxPending = 512
	// DefaultEventsQueue bounds the events frames of one connection read and
	// not yet stored (see Hub.EventsQueue).
	DefaultEventsQueue = 4
	// DefaultMaxInFlight bounds the commands in flight to one connection (see
	// Hub.MaxInFlight).
	DefaultMaxInFlight = 64
	// helloTimeout is how long a new connection has to say hello.
	helloTimeout = 10 * time.Second
)

// Redis names. A command for an engine whose socket another replica holds is
// published on that replica's command channel; the reply comes back on the
// asking replica's reply channel. Every replica listens on the control channel.
const (
	routePrefix    = "switchboard:engine-route:" // + engine id: JSON route, PX = presence TTL
	commandChannel = "switchboard:engine-cmd:"   // + replica id
	replyChannel   = "switchboard:engine-reply:" // + replica id
	controlChannel = "switchboard:engine-control"
)

// route is where an engine's socket is, as Redis holds it.
type route struct {
	Replica      string   `json:"replica"`
	WorkspaceID  string   `json:"workspaceId"`
	Kind         string   `json:"kind"`
	Capabilities []string `json:"capabilities"`
	// Features are the protocol features the engine announced (FeatureMediaRefs).
	Features []string `json:"features,omitempty"`
	// Restriction is why the network restricts the engine's account now (an
	// engine.Restrictor's answer at its last refresh); empty when it does not.
	Restriction string `json:"restriction,omitempty"`
	// QR is the pairing QR a remote engine last reported while pairing.
	QR string `json:"qr,omitempty"`
}

// routed is a command or a reply on its way between replicas.
type routed struct {
	EngineID string `json:"engineId"`
	ReplyTo  string `json:"replyTo,omitempty"`
	Frame    Frame  `json:"frame"`
}

// control is a message to every replica: end an engine's session (Op "end",
// Reason logged_out or deleted), or drop an older socket of an engine that
// connected again elsewhere (Op "replace").
type control struct {
	Op          string `json:"op"`
	WorkspaceID string `json:"workspaceId"`
	EngineID    string `json:"engineId"`
	Reason      string `json:"reason,omitempty"`
	Replica     string `json:"replica"`
	Conn        string `json:"conn,omitempty"`
	// At is when the connection of a "replace" was attached (unix nanos): an
	// older connection than it is dropped, a newer one stays.
	At int64 `json:"at,omitempty"`
}

// Hub is one replica's side of the engine protocol: it accepts remote engines'
// sockets, keeps their presence while they heartbeat, stores the events they
// report, and carries commands to them, from this replica or, through Redis,
// from any other. It implements engine.Remote and engine.Sessions.
type Hub struct {
	rdb      redis.UniversalClient
	client   *ent.Client
	registry *engine.Registry
	sink     engine.BatchSink
	replica  string
	// MaxFrame bounds a frame an engine sends (DefaultMaxFrame when zero).
	MaxFrame int64
	// MaxBatch bounds the events of one events frame (DefaultMaxBatch when
	// zero); the welcome tells the engine.
	MaxBatch int
	// MaxPendingPerAddress bounds the upgrades without a token in the header
	// that one remote address may hold before their welcome
	// (DefaultMaxPendingPerAddress when zero); one more is answered 429.
	MaxPendingPerAddress int
	// MaxPending bounds such upgrades on this replica, whatever their address
	// (DefaultMaxPending when zero).
	MaxPending int
	// CommandTimeout bounds a command whose context has no deadline
	// (DefaultCommandTimeout when zero).
	CommandTimeout time.Duration
	// EventsQueue bounds the events frames of one connection waiting to be
	// stored (DefaultEventsQueue when zero): they are stored off the read loop,
	// so heartbeats and replies are read while a batch is stored, and a frame
	// that finds the queue full is acked with the retryable error rate_limited.
	EventsQueue int
	// MaxInFlight bounds the commands in flight to one connection
	// (DefaultMaxInFlight when zero); one more waits up to a second for a slot,
	// then fails engine_unavailable (503).
	MaxInFlight int
	// States applies the states remote engines report (state frames) to their
	// rows, webhooks and campaigns; nil only keeps them in the routes.
	States StateRecorder
	// Logger receives the hub's log (slog.Default when nil).
	Logger *slog.Logger
	// Media stores the bytes engines upload to upload slots and the pictures
	// handed to engines by URL; with PublicURL (the server's public URL, which
	// the store's URLs start with too) it lets engines that announce
	// FeatureMediaRefs move media by reference. Nil keeps media inline.
	Media     *media.Store
	PublicURL string

	mu      sync.Mutex
	conns   map[string]*conn       // by engine id: the sockets this replica holds
	held    map[string]*held       // by engine id: the engines this replica runs in process
	waiting map[string]chan *Frame // by command id: replies this replica waits for from others
	pubsub  *redis.PubSub

	pendingMu sync.Mutex
	pending   map[string]int // by remote address: sockets without a header token waiting for their welcome
	pendingN  int            // their sum
}

// NewHub returns the hub of this replica. Events go to sink; presence and
// sandbox sessions are the registry's.
func NewHub(rdb redis.UniversalClient, client *ent.Client, registry *engine.Registry, sink engine.BatchSink) *Hub {
	return &Hub{rdb: rdb, client: client, registry: registry, sink: sink, replica: switchboard.NewID("rep"),
		conns: map[string]*conn{}, held: map[string]*held{}, waiting: map[string]chan *Frame{}, pending: map[string]int{}}
}

// Replica is this replica's id, unique per process.
func (h *Hub) Replica() string { return h.replica }

func (h *Hub) log() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Hub) maxFrame() int64 {
	if h.MaxFrame > 0 {
		return h.MaxFrame
	}
	return DefaultMaxFrame
}

func (h *Hub) maxBatch() int {
	if h.MaxBatch > 0 {
		return h.MaxBatch
	}
	return DefaultMaxBatch
}

func (h *Hub) eventsQueue() int {
	if h.EventsQueue > 0 {
		return h.EventsQueue
	}
	return DefaultEventsQueue
}

func (h *Hub) maxInFlight() int {
	if h.MaxInFlight > 0 {
		return h.MaxInFlight
	}
	return DefaultMaxInFlight
}

// commandTimeout bounds a command whose context has no deadline.
func (h *Hub) commandTimeout() time.Duration {
	if h.CommandTimeout > 0 {
		return h.CommandTimeout
	}
	return DefaultCommandTimeout
}

func (h *Hub) ttl() time.Duration { return h.registry.Presence().TTL() }

// Start subscribes to this replica's Redis channels and serves them until ctx
// ends; commands can be routed once it returned.
func (h *Hub) Start(ctx context.Context) error {
	ps := h.rdb.Subscribe(ctx, commandChannel+h.replica, replyChannel+h.replica, controlChannel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return fmt.Errorf("remote: subscribe: %w", err)
	}
	h.mu.Lock()
	h.pubsub = ps
	h.mu.Unlock()
	go func() {
		<-ctx.Done()
		_ = ps.Close()
		h.closeAll()
	}()
	go h.refreshHeld(ctx)
	go func() {
		for msg := range ps.Channel() {
			switch {
			case msg.Channel == controlChannel:
				var c control
				if json.Unmarshal([]byte(msg.Payload), &c) == nil {
					h.onControl(context.WithoutCancel(ctx), c)
				}
			case strings.HasPrefix(msg.Channel, commandChannel):
				var r routed
				if json.Unmarshal([]byte(msg.Payload), &r) == nil {
					go h.serveRouted(context.WithoutCancel(ctx), r)
				}
			case strings.HasPrefix(msg.Channel, replyChannel):
				var r routed
				if json.Unmarshal([]byte(msg.Payload), &r) == nil {
					h.mu.Lock()
					ch := h.waiting[r.Frame.ID]
					delete(h.waiting, r.Frame.ID)
					h.mu.Unlock()
					if ch != nil {
						ch <- &r.Frame
					}
				}
			}
		}
	}()
	return nil
}

// closeAll closes every socket this replica holds (the process is stopping).
func (h *Hub) closeAll() {
	h.mu.Lock()
	all := make([]*conn, 0, len(h.conns))
	for _, c := range h.conns {
		all = append(all, c)
	}
	h.mu.Unlock()
	for _, c := range all {
		c.close(websocket.StatusGoingAway, "server shutting down")
	}
}

// Lookup implements engine.Remote: a remote engine of the workspace that is
// live in presence and connected to some replica.
func (h *Hub) Lookup(ctx context.Context, workspaceID string) (engine.Engine, error) {
	conns, err := h.registry.Presence().List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, c := range conns {
		if he := h.heldEngine(c.ID); he != nil && he.workspaceID == workspaceID {
			return he.eng, nil
		}
		local := h.local(c.ID)
		if local != nil && local.workspaceID == workspaceID {
			return h.proxy(c.ID, local.route(h.replica)), nil
		}
		if strings.HasPrefix(c.ID, "eng_") {
			keys = append(keys, routePrefix+c.ID)
		}
	}
	if len(keys) == 0 {
		return nil, engine.ErrNoEngine
	}
	vals, err := h.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		s, ok := v.(string)
		var rt route
		if !ok || json.Unmarshal([]byte(s), &rt) != nil || rt.WorkspaceID != workspaceID || rt.Replica == h.replica {
			continue // a route of this replica without a live socket here is stale
		}
		return h.proxy(strings.TrimPrefix(keys[i], routePrefix), rt), nil
	}
	return nil, engine.ErrNoEngine
}

// Get implements engine.Remote.
func (h *Hub) Get(ctx context.Context, workspaceID, engineID string) (engine.Engine, error) {
	if he := h.heldEngine(engineID); he != nil {
		if he.workspaceID != workspaceID {
			return nil, engine.ErrDisconnected
		}
		return he.eng, nil
	}
	if local := h.local(engineID); local != nil && local.workspaceID == workspaceID {
		return h.proxy(engineID, local.route(h.replica)), nil
	}
	rt, err := h.route(ctx, engineID)
	if err != nil {
		return nil, err
	}
	if rt == nil || rt.WorkspaceID != workspaceID || rt.Replica == h.replica {
		return nil, engine.ErrDisconnected
	}
	return h.proxy(engineID, *rt), nil
}

// local returns the live socket this replica holds for engineID, or nil.
func (h *Hub) local(engineID string) *conn {
	h.mu.Lock()
	c := h.conns[engineID]
	h.mu.Unlock()
	if c == nil || c.closed() {
		return nil
	}
	return c
}

func (h *Hub) route(ctx context.Context, engineID string) (*route, error) {
	s, err := h.rdb.Get(ctx, routePrefix+engineID).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var rt route
	if err := json.Unmarshal([]byte(s), &rt); err != nil {
		return nil, nil
	}
	return &rt, nil
}

func (h *Hub) proxy(engineID string, rt route) *Engine {
	return &Engine{hub: h, id: engineID, workspaceID: rt.WorkspaceID, kind: rt.Kind, caps: rt.Capabilities, features: rt.Features,
		restriction: rt.Restriction, qr: rt.QR}
}

// End implements engine.Sessions: every replica ends the engine's session (a
// sandbox it serves, a socket it holds).
func (h *Hub) End(ctx context.Context, workspaceID, engineID, reason string) error {
	c := control{Op: "end", WorkspaceID: workspaceID, EngineID: engineID, Reason: reason, Replica: h.replica}
	h.onControl(ctx, c)
	raw, _ := json.Marshal(c)
	return h.rdb.Publish(ctx, controlChannel, raw).Err()
}

func (h *Hub) onControl(ctx context.Context, c control) {
	h.mu.Lock()
	local := h.conns[c.EngineID]
	h.mu.Unlock()
	switch c.Op {
	case "end":
		if he := h.heldEngine(c.EngineID); he != nil && he.workspaceID == c.WorkspaceID && he.onEnd != nil {
			he.onEnd(c.Reason)
		}
		if h.registry.Held(c.WorkspaceID, c.EngineID) {
			h.registry.Detach(ctx, c.WorkspaceID, c.EngineID)
		}
		if local != nil && local.workspaceID == c.WorkspaceID {
			code := websocket.StatusCode(CloseDeleted)
			if c.Reason == engine.EndLoggedOut {
				code = CloseLoggedOut
			}
			local.close(code, c.Reason)
		}
	case "replace":
		// This replica replaced its own socket when it attached the new one; and
		// the announcement of a connection may arrive after a newer one attached.
		if c.Replica == h.replica {
			return
		}
		if local != nil && local.id != c.Conn && (c.At == 0 || local.attachedAt < c.At) {
			local.replaced.Store(true)
			local.close(CloseReplaced, "the engine connected again")
		}
	}
}

// command carries a command to an engine wherever its socket is, and returns
// the reply's result or its error.
func (h *Hub) command(ctx context.Context, engineID, method string, params json.RawMessage) (json.RawMessage, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.commandTimeout())
		defer cancel()
	}
	if he := h.heldEngine(engineID); he != nil { // held here since the caller found it
		res, err := dispatch(ctx, he.eng, he.caps, method, params)
		if err != nil {
			return nil, EncodeError(err).Err()
		}
		return res, nil
	}
	if local := h.local(engineID); local != nil {
		res, werr := local.call(ctx, method, params)
		if werr != nil {
			return nil, werr.Err()
		}
		return res, nil
	}
	rt, err := h.route(ctx, engineID)
	if err != nil {
		return nil, err
	}
	if rt == nil || rt.Replica == h.replica {
		return nil, engine.ErrDisconnected
	}
	deadline, _ := ctx.Deadline()
	id := switchboard.NewID("cmd")
	ch := make(chan *Frame, 1)
	h.mu.Lock()
	h.waiting[id] = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.waiting, id)
		h.mu.Unlock()
	}()
	raw, _ := json.Marshal(routed{EngineID: engineID, ReplyTo: h.replica,
		Frame: Frame{Type: FrameCommand, ID: id, Method: method, Params: params, Deadline: &deadline}})
	n, err := h.rdb.Publish(ctx, commandChannel+rt.Replica, raw).Result()
	if err != nil {
		return nil, err
	}
	if n == 0 { // the replica that held the socket is gone
		return nil, engine.ErrDisconnected
	}
	select {
	case f := <-ch:
		if f.Error != nil {
			return nil, f.Error.Err()
		}
		return f.Result, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, engine.ErrTimeout
		}
		return nil, ctx.Err()
	}
}

// serveRouted carries a command another replica routed here, to a socket or an
// engine this replica runs, and publishes the reply.
func (h *Hub) serveRouted(ctx context.Context, r routed) {
	f := Frame{Type: FrameReply, ID: r.Frame.ID}
	cctx, cancel := context.WithTimeout(ctx, DefaultCommandTimeout)
	if r.Frame.Deadline != nil {
		cancel()
		cctx, cancel = context.WithDeadline(ctx, *r.Frame.Deadline)
	}
	defer cancel()
	if he := h.heldEngine(r.EngineID); he != nil {
		var err error
		f.Result, err = dispatch(cctx, he.eng, he.caps, r.Frame.Method, r.Frame.Params)
		f.Error = EncodeError(err)
	} else if local := h.local(r.EngineID); local == nil {
		f.Error = EncodeError(engine.ErrDisconnected)
	} else {
		f.Result, f.Error = local.call(cctx, r.Frame.Method, r.Frame.Params)
	}
	raw, _ := json.Marshal(routed{EngineID: r.EngineID, Frame: f})
	if err := h.rdb.Publish(ctx, replyChannel+r.ReplyTo, raw).Err(); err != nil {
		h.log().Warn("engine reply not routed", "engine", r.EngineID, "command", f.ID, "err", err)
	}
}

// attach makes c the engine's socket: this replica's, the route's, presence's.
// The engine's type is stored first, so whoever finds it in presence reads it.
func (h *Hub) attach(ctx context.Context, c *conn, row *ent.Engine) error {
	if row.Type != c.kind || row.Phone != c.phone {
		err := h.client.Engine.UpdateOneID(row.ID).SetType(c.kind).SetPhone(c.phone).Exec(viewer.SystemContext(ctx))
		if err != nil {
			return fmt.Errorf("store the engine's type and phone: %w", err)
		}
	}
	h.mu.Lock()
	old := h.conns[c.engineID]
	h.conns[c.engineID] = c
	c.attachedAt = time.Now().UnixNano()
	h.mu.Unlock()
	if old != nil {
		old.replaced.Store(true)
		old.close(CloseReplaced, "the engine connected again")
	}
	raw, _ := json.Marshal(control{Op: "replace", WorkspaceID: c.workspaceID, EngineID: c.engineID, Replica: h.replica, Conn: c.id, At: c.attachedAt})
	if err := h.rdb.Publish(ctx, controlChannel, raw).Err(); err != nil {
		return err
	}
	return h.refresh(ctx, c)
}

// forget drops c from this replica's sockets if it is still the engine's.
func (h *Hub) forget(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns[c.engineID] != c {
		return false
	}
	delete(h.conns, c.engineID)
	return true
}

// refresh renews the engine's route and presence for another TTL.
func (h *Hub) refresh(ctx context.Context, c *conn) error {
	raw, _ := json.Marshal(c.route(h.replica))
	if err := h.rdb.Set(ctx, routePrefix+c.engineID, raw, h.ttl()).Err(); err != nil {
		return err
	}
	return h.beat(ctx, c.workspaceID, c.engineID, c.kind)
}

// beat renews an engine's presence; a presence that had lapsed (or never was)
// is a new session.
func (h *Hub) beat(ctx context.Context, workspaceID, engineID, kind string) error {
	fresh, err := h.registry.Presence().Beat(ctx, workspaceID, engine.Connection{ID: engineID, Kind: kind})
	if err != nil {
		return err
	}
	if fresh {
		h.log().Info("engine connected", "engine", engineID, "workspace", workspaceID, "kind", kind)
		h.emit(ctx, engine.Event{Type: engine.EventConnected, WorkspaceID: workspaceID, EngineID: engineID, At: time.Now()})
	}
	return nil
}

// leave takes an engine out of presence: its session ended.
func (h *Hub) leave(ctx context.Context, workspaceID, engineID, kind string) error {
	err := h.registry.Presence().Leave(ctx, workspaceID, engine.Connection{ID: engineID, Kind: kind})
	h.log().Info("engine disconnected", "engine", engineID, "workspace", workspaceID, "kind", kind)
	h.emit(ctx, engine.Event{Type: engine.EventGone, WorkspaceID: workspaceID, EngineID: engineID, At: time.Now()})
	return err
}

// dropRoute deletes the engine's route if it still names this replica.
var dropRoute = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v and string.find(v, ARGV[1], 1, true) then return redis.call("DEL", KEYS[1]) end
return 0`)

// detach forgets a connection that ended: its pending commands fail, and unless
// the engine connected again, it leaves presence and the session ends.
func (h *Hub) detach(c *conn) {
	c.close(websocket.StatusNormalClosure, "")
	if !h.forget(c) || c.replaced.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := dropRoute.Run(ctx, h.rdb, []string{routePrefix + c.engineID}, `"replica":"`+h.replica+`"`).Err(); err != nil {
		h.log().Warn("remote engine route not dropped", "engine", c.engineID, "err", err)
	}
	if err := h.leave(ctx, c.workspaceID, c.engineID, c.kind); err != nil {
		h.log().Warn("remote engine presence leave failed", "engine", c.engineID, "err", err)
	}
}

func (h *Hub) emit(ctx context.Context, ev engine.Event) {
	if err := h.sink.HandleEvent(ctx, ev); err != nil {
		h.log().Warn("engine event not recorded", "type", ev.Type, "engine", ev.EngineID, "err", err)
	}
}

func truncate(s string) string {
	if len(s) > 120 { // a close reason fits in 123 bytes
		return s[:120]
	}
	return s
}
