// Package host runs the workspaces' gateway engines (server-side WhatsApp
// sessions), each on one replica at a time. A replica takes an engine under a
// Redis lease that it renews, opens it with the device stored on the engine's
// row, keeps the row in step with the engine's state, and holds it in the hub so
// that every replica's commands reach it. A replica that stops (or loses Redis)
// lets its leases lapse, and another takes the engines over within a lease TTL.
package host

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/viewer"
)

// DefaultLeaseTTL is how long a replica's claim on an engine lasts unrenewed:
// how long a dead replica's engines stay offline before another takes them.
const DefaultLeaseTTL = 30 * time.Second

// leasePrefix + engine id holds the id of the replica running the engine.
const leasePrefix = "switchboard:engine-lease:"

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
// every field but Logger and LeaseTTL.
type Host struct {
	// Client reads and updates the engine rows.
	Client *ent.Client
	// Redis holds the leases.
	Redis redis.UniversalClient
	// Hub makes the engines reachable from every replica.
	Hub *remote.Hub
	// Base is the configuration every engine opens with (its store or database,
	// its sink, its media); the host fills in the engine's own fields.
	Base gateway.Config
	// Open opens an engine.
	Open Opener
	// LeaseTTL is DefaultLeaseTTL when zero.
	LeaseTTL time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Lifted, when set, is told that the restriction of an engine this
	// replica runs ended (the campaigns it paused may resume).
	Lifted func(ctx context.Context, engineID string)

	mu      sync.Mutex
	running map[string]*hosted // by engine id
}

type hosted struct {
	eng         Gateway
	workspaceID string
	started     time.Time
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

// Run takes up the gateway engines no replica runs and renews this replica's
// leases, every third of the lease TTL, until ctx ends; then it closes the
// engines it runs and gives their leases up.
func (h *Host) Run(ctx context.Context) {
	t := time.NewTicker(h.ttl() / 3)
	defer t.Stop()
	for {
		h.renew(ctx)
		if err := h.adopt(ctx); err != nil && ctx.Err() == nil {
			h.log().Warn("gateway engines not taken up", "err", err)
		}
		select {
		case <-ctx.Done():
			h.stopAll()
			return
		case <-t.C:
		}
	}
}

// adopt pages through the gateway engines (in id order, a page at a time),
// starts those no replica runs, and stops those this replica runs whose row is
// gone (deleted while its session was starting here).
func (h *Host) adopt(ctx context.Context) error {
	began := time.Now()
	sys := viewer.SystemContext(ctx)
	seen := map[string]bool{}
	after := ""
	for {
		rows, err := h.Client.Engine.Query().
			Where(entengine.KindEQ(entengine.KindGateway), entengine.IDGT(after)).
			Order(ent.Asc(entengine.FieldID)).Limit(100).All(sys)
		if err != nil {
			return err
		}
		for _, row := range rows {
			seen[row.ID] = true
			if err := h.Start(ctx, row); err != nil {
				h.log().Warn("gateway engine not started", "engine", row.ID, "err", err)
			}
		}
		if len(rows) < 100 {
			break
		}
		after = rows[len(rows)-1].ID
	}
	h.mu.Lock()
	var gone []string
	for id, r := range h.running {
		if !seen[id] && r.started.Before(began) {
			gone = append(gone, id)
		}
	}
	h.mu.Unlock()
	for _, id := range gone {
		h.stop(ctx, id)
	}
	return nil
}

// Start runs the gateway engine of row on this replica, unless this or another
// replica runs it already.
func (h *Host) Start(ctx context.Context, row *ent.Engine) error {
	h.mu.Lock()
	_, mine := h.running[row.ID]
	h.mu.Unlock()
	if mine {
		return nil
	}
	took, err := h.Redis.SetNX(ctx, leasePrefix+row.ID, h.Hub.Replica(), h.ttl()).Result()
	if err != nil || !took {
		return err
	}
	cfg := h.Base
	cfg.WorkspaceID, cfg.EngineID, cfg.DeviceJID = row.WorkspaceID, row.ID, row.DeviceJid
	cfg.SessionEvents = false // the hub records sessions from presence
	if cfg.PollOptions == nil {
		cfg.PollOptions = h.pollOptions(row.WorkspaceID)
	}
	if cfg.OldestMessage == nil {
		cfg.OldestMessage = h.oldestMessage(row.WorkspaceID)
	}
	var eng Gateway
	cfg.OnState = func(s gateway.State) {
		if eng != nil {
			h.apply(context.WithoutCancel(ctx), row.ID, s)
		}
	}
	eng, err = h.Open(ctx, cfg)
	if err != nil {
		h.giveUp(ctx, row.ID)
		return err
	}
	h.mu.Lock()
	if h.running == nil {
		h.running = map[string]*hosted{}
	}
	h.running[row.ID] = &hosted{eng: eng, workspaceID: row.WorkspaceID, started: time.Now()}
	h.mu.Unlock()
	if err := h.Hub.Hold(ctx, row.WorkspaceID, eng, func(reason string) { h.ended(row.ID, reason) }); err != nil {
		h.stop(ctx, row.ID)
		return err
	}
	h.log().Info("gateway engine started", "engine", row.ID, "workspace", row.WorkspaceID, "paired", row.DeviceJid != "")
	h.apply(ctx, row.ID, eng.State())
	return nil
}

// pollOptions reads the options of a poll from the workspace's messages, to
// name the options of a decrypted vote on a poll this process did not see.
func (h *Host) pollOptions(workspaceID string) func(context.Context, engine.Key) ([]string, error) {
	return func(ctx context.Context, key engine.Key) ([]string, error) {
		m, err := h.Client.Message.Query().Where(message.WaSerialized(key.Serialized())).
			First(viewer.WorkspaceContext(ctx, workspaceID))
		if ent.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return m.PollOptions, nil
	}
}

// oldestMessage finds the oldest stored message of a chat sent before before:
// the anchor of an on-demand request for older history.
func (h *Host) oldestMessage(workspaceID string) func(context.Context, string, time.Time) (engine.Key, time.Time, bool, error) {
	return func(ctx context.Context, chat string, before time.Time) (engine.Key, time.Time, bool, error) {
		m, err := h.Client.Message.Query().
			Where(message.To(chat), message.CreatedAtLT(before), message.WaIDNEQ("")).
			Order(ent.Asc(message.FieldCreatedAt)).First(viewer.WorkspaceContext(ctx, workspaceID))
		if ent.IsNotFound(err) {
			return engine.Key{}, time.Time{}, false, nil
		}
		if err != nil {
			return engine.Key{}, time.Time{}, false, err
		}
		return engine.Key{FromMe: m.FromMe, Remote: chat, ID: m.WaID, Participant: m.WaParticipant}, m.CreatedAt, true, nil
	}
}

// renewLease extends a lease that still names this replica; 0 when it does not.
var renewLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
return 0`)

// dropLease deletes a lease that still names this replica.
var dropLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)

// renew extends this replica's leases; an engine whose lease was lost (Redis
// lost it, or another replica took it after a long pause) is stopped here.
func (h *Host) renew(ctx context.Context) {
	for _, id := range h.ids() {
		n, err := renewLease.Run(ctx, h.Redis, []string{leasePrefix + id}, h.Hub.Replica(), h.ttl().Milliseconds()).Int()
		switch {
		case err != nil:
			h.log().Warn("gateway lease not renewed", "engine", id, "err", err)
		case n == 0:
			h.log().Warn("gateway lease lost: stopping the engine here", "engine", id)
			h.stop(ctx, id)
		}
	}
}

func (h *Host) ids() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.running))
	for id := range h.running {
		out = append(out, id)
	}
	return out
}

// ended is the hub's word that an engine's session was ended from some replica:
// a deleted engine stops; a logged-out one stays open to be paired again.
func (h *Host) ended(engineID, reason string) {
	if reason != engine.EndDeleted {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.stop(ctx, engineID)
}

// stop closes an engine this replica runs and gives its lease up.
func (h *Host) stop(ctx context.Context, engineID string) {
	h.mu.Lock()
	r := h.running[engineID]
	delete(h.running, engineID)
	h.mu.Unlock()
	if r == nil {
		return
	}
	h.Hub.Release(ctx, engineID)
	if err := r.eng.Close(); err != nil {
		h.log().Warn("gateway engine close failed", "engine", engineID, "err", err)
	}
	h.giveUp(ctx, engineID)
	h.log().Info("gateway engine stopped", "engine", engineID)
}

func (h *Host) giveUp(ctx context.Context, engineID string) {
	if err := dropLease.Run(context.WithoutCancel(ctx), h.Redis, []string{leasePrefix + engineID}, h.Hub.Replica()).Err(); err != nil {
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
	u := h.Client.Engine.UpdateOneID(engineID).
		SetState(string(RowState(s))).SetStream(stream(s)).SetHasSynced(s.HasSynced).SetDeviceJid(s.DeviceJID)
	err := u.Exec(viewer.SystemContext(ctx))
	if err != nil && !ent.IsNotFound(err) { // a deleted engine has no row to update
		h.log().Warn("gateway state not stored", "engine", engineID, "err", err)
	}
	h.recordRestriction(ctx, engineID, s) // restriction.go
	h.log().Info("gateway engine state", "engine", engineID, "status", s.Status, "connected", s.Connected,
		"error", s.LastError)
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
