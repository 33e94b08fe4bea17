package gateway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// The gateway out of process: `switchboard engine gateway` runs one gateway
// engine behind the engine protocol's client, its device store and its own
// tables in a database of its own (see docs/gateway.md, "Running the gateway
// out of process"). Where the host keeps an engine's device on the engine's
// row, such an engine keeps it in gateway_remote_devices, by engine id.

// opener opens an engine (Open; tests open one over the whatsmeow fake).
type opener func(ctx context.Context, cfg Config) (*Engine, error)

// ServeRemote runs a gateway engine out of process: behind the protocol client
// c, which announces every capability the gateway serves, until c.Run returns
// (the server ended the engine for good, or ctx ended); the engine is closed
// then. cfg is the engine's configuration but for what the server's welcome
// says (WorkspaceID, EngineID) and Sink (c); its DB (or Store) holds the
// device store and the device each engine id paired, so that the engine
// reopens its device when the process starts again. c.Phone, when empty, is
// the number of the device the store remembers, when it remembers one.
func ServeRemote(ctx context.Context, c *remote.Client, cfg Config) error {
	return serveRemote(ctx, c, cfg, Open)
}

func serveRemote(ctx context.Context, c *remote.Client, cfg Config, open opener) error {
	st := cfg.Store
	if st == nil {
		if cfg.DB == nil {
			return errors.New("gateway: ServeRemote needs a Store or a DB")
		}
		var err error
		if st, err = OpenStore(ctx, cfg.DB, cfg.Dialect); err != nil {
			return err
		}
		cfg.Store = st
	}
	c.Capabilities = engine.CapabilitiesOf((*Engine)(nil))
	if c.Kind == "" {
		c.Kind = engine.KindGateway
	}
	if c.Phone == "" {
		c.Phone = st.rememberedPhone(ctx)
	}
	var (
		mu  sync.Mutex
		eng *Engine
	)
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if eng != nil {
			_ = eng.Close()
		}
	}()
	log := slogOr(cfg.Logger)
	return c.Run(ctx, func(sctx context.Context, w remote.Welcome, sink engine.BatchSink) (engine.Engine, error) {
		ecfg := cfg
		ecfg.WorkspaceID, ecfg.EngineID, ecfg.Sink = w.WorkspaceID, w.EngineID, sink
		// The server records the session (connected, gone) from the protocol
		// connection itself and refuses such events from an engine.
		ecfg.SessionEvents = false
		jid, err := st.remoteDevice(sctx, w.EngineID)
		if err != nil {
			return nil, err
		}
		ecfg.DeviceJID = jid
		last := jid
		report := stateReporter(sctx, c, log, w.EngineID)
		ecfg.OnState = func(s State) {
			report(s)
			if s.DeviceJID != last && s.Status != StatusClosed {
				if err := st.rememberDevice(context.WithoutCancel(sctx), w.EngineID, s.DeviceJID); err != nil {
					log.Warn("gateway: the paired device was not remembered", "engine", w.EngineID, "err", err)
				} else {
					last = s.DeviceJID
				}
			}
			log.Info("gateway engine state", "engine", w.EngineID, "status", s.Status, "connected", s.Connected,
				"me", s.Me, "error", s.LastError)
			if cfg.OnState != nil {
				cfg.OnState(s)
			}
		}
		e, err := open(sctx, ecfg)
		if errors.Is(err, ErrNoDevice) {
			// The device went from the store (deleted by hand): pair afresh.
			log.Warn("gateway: the engine's device is not in the store any more; it waits to be paired", "engine", w.EngineID, "device", jid)
			if err := st.rememberDevice(sctx, w.EngineID, ""); err != nil {
				return nil, err
			}
			ecfg.DeviceJID, last = "", ""
			e, err = open(sctx, ecfg)
		}
		if err != nil {
			return nil, err
		}
		mu.Lock()
		eng = e
		mu.Unlock()
		log.Info("gateway engine open", "engine", w.EngineID, "workspace", w.WorkspaceID, "device", jid)
		return e, nil
	})
}

// remoteDevice is the device engineID paired, "" for none.
func (s *Store) remoteDevice(ctx context.Context, engineID string) (string, error) {
	var jid string
	err := s.db.QueryRowContext(ctx, `SELECT device_jid FROM gateway_remote_devices WHERE engine_id = $1`, engineID).Scan(&jid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("gateway: read the engine's device: %w", err)
	}
	return jid, nil
}

// rememberDevice records the device engineID paired; "" forgets it (a logout).
func (s *Store) rememberDevice(ctx context.Context, engineID, jid string) error {
	if jid == "" {
		_, err := s.db.ExecContext(ctx, `DELETE FROM gateway_remote_devices WHERE engine_id = $1`, engineID)
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO gateway_remote_devices (engine_id, device_jid) VALUES ($1, $2)
		ON CONFLICT (engine_id) DO UPDATE SET device_jid = excluded.device_jid`, engineID, jid)
	return err
}

// rememberedPhone is the number (E.164) of the one device the store
// remembers for an engine, "" when it remembers none or several.
func (s *Store) rememberedPhone(ctx context.Context) string {
	rows, err := s.db.QueryContext(ctx, `SELECT device_jid FROM gateway_remote_devices LIMIT 2`)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var jids []string
	for rows.Next() {
		var j string
		if rows.Scan(&j) == nil {
			jids = append(jids, j)
		}
	}
	if len(jids) != 1 {
		return ""
	}
	j, err := types.ParseJID(jids[0])
	if err != nil || j.Server != types.DefaultUserServer || j.User == "" {
		return ""
	}
	phone := "+" + strings.TrimPrefix(j.User, "+")
	if !remote.ValidPhone(phone) {
		return ""
	}
	return phone
}

// stateReporter reports the engine's session states to the server in state
// frames (docs/engines.md, "State reporting"), in order, from a goroutine of
// its own so that the session never waits on the server: a state that comes
// while one is on its way replaces any still waiting. It ends with ctx.
func stateReporter(ctx context.Context, c *remote.Client, log *slog.Logger, engineID string) func(State) {
	next := make(chan remote.State, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case rs := <-next:
				if err := c.ReportState(ctx, rs); err != nil && ctx.Err() == nil {
					log.Warn("gateway: the session state was not reported", "engine", engineID, "status", rs.Status, "err", err)
				}
			}
		}
	}()
	return func(s State) {
		if s.Status == StatusClosed {
			return // the process is ending the engine: the socket's end tells the server
		}
		rs := remote.State{Status: string(s.Status), HasSynced: s.HasSynced, BannedUntil: s.BannedUntil, BanReason: s.BanReason,
			ReachoutTimelockedUntil: s.ReachoutTimelockedUntil, LastError: s.LastError}
		for {
			select {
			case next <- rs:
				return
			default:
				select { // drop the older state still waiting
				case <-next:
				default:
				}
			}
		}
	}
}
