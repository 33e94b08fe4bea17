// Package host runs the workspaces' gateway engines (server-side WhatsApp
// sessions), each on one replica at a time, spread evenly over the replicas.
//
// A replica takes an engine under a Redis lease that it renews, opens it with
// the device stored on the engine's row, keeps the row in step with the
// engine's state, and holds it in the hub so that every replica's commands
// reach it. A replica that cannot renew a lease closes the engine before the
// lease can expire (fencing), so that no two replicas ever run one number. Each
// replica registers itself, and takes an engine only while it runs fewer than
// its fair share (plus a slack); an over-full replica hands its surplus off a
// few at a time. Replicas learn of new engines through Redis pub/sub and a rare
// paged resync, not by re-reading every row.
package host

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/viewer"
)

// DefaultLeaseTTL is how long a replica's claim on an engine lasts unrenewed:
// how long a dead replica's engines stay offline before another takes them.
const DefaultLeaseTTL = 30 * time.Second

// DefaultResync is how often a replica re-reads the list of gateway engines
// (ids only, a page at a time) besides what pub/sub tells it.
const DefaultResync = 5 * time.Minute

// Gateway is a gateway engine as the host runs it: *gateway.Engine, or a fake
// in tests.
type Gateway interface {
	engine.Engine
	State() gateway.State
}

// Opener opens a gateway engine for cfg (gateway.Open in production).
type Opener func(ctx context.Context, cfg gateway.Config) (Gateway, error)

// OpenGateway is the production Opener.
func OpenGateway(ctx context.Context, cfg gateway.Config) (Gateway, error) {
	return gateway.Open(ctx, cfg)
}

// Host runs gateway engines on this replica. Its zero value is not usable: set
// Client, Redis, Hub, Base and Open.
type Host struct {
	// Client reads and updates the engine rows.
	Client *ent.Client
	// Redis holds the leases, the replicas' registrations and the notices of
	// new engines.
	Redis redis.UniversalClient
	// Hub makes the engines reachable from every replica.
	Hub *remote.Hub
	// Base is the configuration every engine opens with (its store or database,
	// its sink, its media); the host fills in the engine's own fields.
	Base gateway.Config
	// Open opens an engine.
	Open Opener
	// LeaseTTL is DefaultLeaseTTL when zero. Leases are renewed every sixth of
	// it; an engine whose lease went unrenewed for two thirds of it is closed.
	LeaseTTL time.Duration
	// Slack is how many engines over its fair share (ceil(engines/replicas)) a
	// replica may run; 1 when zero.
	Slack int
	// Handoff is how many surplus engines an over-full replica hands off per
	// renewal; 10 when zero.
	Handoff int
	// Resync is DefaultResync when zero.
	Resync time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Lifted, when set, is told that the restriction of an engine this
	// replica runs ended (the campaigns it paused may resume).
	Lifted func(ctx context.Context, engineID string)

	mu      sync.Mutex
	running map[string]*hosted // by engine id
	// stopping holds the engines being stopped here: none is started again
	// until its hub hold and lease are given up, so that a stop never releases
	// the hold or drops the lease of the engine's next start.
	stopping map[string]bool
	known    map[string]time.Time // the gateway engines' ids this replica knows of, and since when
	synced   time.Time            // when known was last read whole from the database
}

type hosted struct {
	eng Gateway
	// token is this hold's lease value: the replica's id and a random part, so
	// that renewing or giving up an earlier hold never touches a later one.
	token       string
	workspaceID string
	paired      bool
	started     time.Time
	validUntil  time.Time // the lease's last renewal began before validUntil-TTL
}

func (h *Host) log() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Host) ttl() time.Duration {
	if h.LeaseTTL > 0 {
		return h.LeaseTTL
	}
	return DefaultLeaseTTL
}

// Run registers this replica, listens for new engines, and every sixth of the
// lease TTL takes up engines no replica runs (up to its share) or hands
// surplus ones off, until ctx ends; then it closes the engines it runs and
// gives their leases up. Beside it, and never waiting for it, one loop renews
// the leases at the same pace and the fence closes any engine whose lease went
// unrenewed too long, whatever Redis does.
func (h *Host) Run(ctx context.Context) {
	go h.listen(ctx, h.subscribe(ctx))
	go h.fence(ctx)
	renewing := make(chan struct{})
	go func() { defer close(renewing); h.renewEvery(ctx) }()
	t := time.NewTicker(h.ttl() / 6)
	defer t.Stop()
	for {
		if err := h.place(ctx); err != nil && ctx.Err() == nil {
			h.log().Warn("gateway engines not placed", "err", err)
		}
		select {
		case <-ctx.Done():
			<-renewing
			h.stopAll()
			h.unregister()
			return
		case <-t.C:
		}
	}
}

// Start runs the gateway engine of row on this replica, unless this or another
// replica runs it already, and tells the other replicas the engine exists.
func (h *Host) Start(ctx context.Context, row *ent.Engine) error {
	h.learn(row.ID)
	h.announce(ctx, row.ID)
	return h.start(ctx, row)
}

// start runs the gateway engine of row here unless a replica runs it already.
func (h *Host) start(ctx context.Context, row *ent.Engine) error {
	h.mu.Lock()
	_, mine := h.running[row.ID]
	busy := mine || h.stopping[row.ID]
	h.mu.Unlock()
	if busy {
		return nil
	}
	began := time.Now()
	token := h.Hub.Replica() + "/" + switchboard.RandomToken(6)
	took, err := h.Redis.SetNX(ctx, leasePrefix+row.ID, token, h.ttl()).Result()
	if err != nil || !took {
		return err
	}
	cfg := h.config(row)
	var eng Gateway
	cfg.OnState = func(s gateway.State) {
		if s.DeviceJID != "" {
			h.markPaired(row.ID)
		}
		if eng != nil {
			h.apply(context.WithoutCancel(ctx), row.ID, s)
		}
	}
	eng, err = h.Open(ctx, cfg)
	if err != nil {
		h.giveUp(ctx, row.ID, token)
		return err
	}
	h.mu.Lock()
	if h.running == nil {
		h.running = map[string]*hosted{}
	}
	h.running[row.ID] = &hosted{eng: eng, token: token, workspaceID: row.WorkspaceID, paired: row.DeviceJid != "",
		started: time.Now(), validUntil: began.Add(h.ttl())}
	h.mu.Unlock()
	if err := h.Hub.Hold(ctx, row.WorkspaceID, eng, func(reason string) { h.ended(row.ID, reason) }); err != nil {
		h.stop(ctx, row.ID)
		return err
	}
	h.log().Info("gateway engine started", "engine", row.ID, "workspace", row.WorkspaceID, "paired", row.DeviceJid != "")
	h.apply(ctx, row.ID, eng.State())
	return nil
}

// config is the configuration the engine of row opens with.
func (h *Host) config(row *ent.Engine) gateway.Config {
	cfg := h.Base
	cfg.WorkspaceID, cfg.EngineID, cfg.DeviceJID = row.WorkspaceID, row.ID, row.DeviceJid
	cfg.SessionEvents = false // the hub records sessions from presence
	if cfg.PollOptions == nil {
		cfg.PollOptions = h.pollOptions(row.WorkspaceID)
	}
	if cfg.OldestMessage == nil {
		cfg.OldestMessage = h.oldestMessage(row.WorkspaceID)
	}
	if cfg.UnreadMessages == nil {
		cfg.UnreadMessages = h.unreadMessages(row.WorkspaceID, row.ID)
	}
	return cfg
}

// markPaired notes that a running engine has a device: only such engines are
// handed off (an unpaired one is showing its QR code to someone).
func (h *Host) markPaired(engineID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.running[engineID]; r != nil {
		r.paired = true
	}
}

// ended is the hub's word that an engine's session was ended from some replica:
// a deleted engine stops; a logged-out one stays open to be paired again.
func (h *Host) ended(engineID, reason string) {
	if reason != engine.EndDeleted {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.forget(engineID)
	h.announceGone(ctx, engineID)
	h.stop(ctx, engineID)
}

// take removes an engine from those this replica runs, marking it stopping,
// and returns it (nil when it runs no such engine); stopped ends the stop.
func (h *Host) take(engineID string) *hosted {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.running[engineID]
	delete(h.running, engineID)
	if r != nil {
		if h.stopping == nil {
			h.stopping = map[string]bool{}
		}
		h.stopping[engineID] = true
	}
	return r
}

// stopped says a stop that take began is over: the engine may start again.
func (h *Host) stopped(engineID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.stopping, engineID)
}

// close closes an engine taken from those this replica runs.
func (h *Host) close(engineID string, r *hosted) {
	if err := r.eng.Close(); err != nil {
		h.log().Warn("gateway engine close failed", "engine", engineID, "err", err)
	}
}

// stop closes an engine this replica runs and gives its lease up.
func (h *Host) stop(ctx context.Context, engineID string) {
	r := h.take(engineID)
	if r == nil {
		return
	}
	defer h.stopped(engineID)
	h.Hub.Release(ctx, engineID)
	h.close(engineID, r)
	h.giveUp(ctx, engineID, r.token)
	h.log().Info("gateway engine stopped", "engine", engineID)
}

// giveUp drops the lease of an engine if it still holds token.
func (h *Host) giveUp(ctx context.Context, engineID, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.ttl()/6)
	defer cancel()
	if err := dropLease.Run(ctx, h.Redis, []string{leasePrefix + engineID}, token).Err(); err != nil {
		h.log().Warn("gateway lease not given up", "engine", engineID, "err", err)
	}
}

func (h *Host) stopAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range h.ids() {
		h.stop(ctx, id)
	}
}

// apply records an engine's state: in presence (a connected engine takes sends)
// and on its row, for the API. Presence goes first: its session event marks the
// row connected or disconnected, and the row's finer state follows.
func (h *Host) apply(ctx context.Context, engineID string, s gateway.State) {
	if err := h.Hub.SetLive(ctx, engineID, s.Connected); err != nil {
		h.log().Warn("gateway presence not recorded", "engine", engineID, "err", err)
	}
	u := h.Client.Engine.UpdateOneID(engineID).SetDeviceJid(s.DeviceJID)
	if err := h.record(ctx, engineID, s, u); err != nil {
		h.log().Warn("gateway state not stored", "engine", engineID, "err", err)
	}
	h.log().Info("gateway engine state", "engine", engineID, "status", s.Status, "connected", s.Connected,
		"error", s.LastError)
}

// record stores a session's state on the engine's row (u, which may set more),
// its restriction (with its webhooks, and Lifted when one ended) and its last
// error: what a gateway this replica runs and a remote engine report alike.
func (h *Host) record(ctx context.Context, engineID string, s gateway.State, u *ent.EngineUpdateOne) error {
	err := u.SetState(string(RowState(s))).SetStream(stream(s)).SetHasSynced(s.HasSynced).Exec(viewer.SystemContext(ctx))
	if err != nil && !ent.IsNotFound(err) { // a deleted engine has no row to update
		return err
	}
	h.recordRestriction(ctx, engineID, s) // restriction.go
	h.recordLastError(ctx, engineID, s.LastError)
	return nil
}

// RemoteState implements remote.StateRecorder: a remote engine's reported
// state is recorded as a gateway's (record), and its restriction returned for
// the engine's route.
func (h *Host) RemoteState(ctx context.Context, _, engineID string, rs remote.State) (string, time.Time, error) {
	s := gateway.State{Status: gateway.Status(rs.Status), Connected: rs.Status == string(gateway.StatusConnected),
		HasSynced: rs.HasSynced, BannedUntil: rs.BannedUntil, BanReason: rs.BanReason,
		ReachoutTimelockedUntil: rs.ReachoutTimelockedUntil, LastError: rs.LastError}
	if err := h.record(ctx, engineID, s, h.Client.Engine.UpdateOneID(engineID)); err != nil {
		return "", time.Time{}, err
	}
	why, until, _ := s.Restriction(time.Now())
	return why, until, nil
}

// RowState is the state an engine row (and the API) shows for a gateway state.
func RowState(s gateway.State) engine.State {
	switch s.Status {
	case gateway.StatusConnected:
		return engine.StateConnected
	case gateway.StatusConnecting:
		return engine.StateOpening
	case gateway.StatusPairing:
		return engine.StatePairing
	case gateway.StatusUnpaired:
		return engine.StateUnpaired
	case gateway.StatusLoggedOut:
		return engine.StateLoggedOut
	case gateway.StatusBanned:
		return engine.StateBanned
	case gateway.StatusReplaced:
		return engine.StateConflict
	}
	return engine.StateDisconnected
}

func stream(s gateway.State) string {
	switch {
	case s.Connected:
		return "open"
	case s.Status == gateway.StatusConnecting || s.Status == gateway.StatusPairing:
		return "connecting"
	}
	return "closed"
}
