package gateway

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

var _ engine.Restarter = (*Engine)(nil)

// Restart implements engine.Restarter: it drops the session's connection and
// connects again on the same device, which stays paired. It recovers a session
// another client replaced (StatusReplaced; its automatic retries start afresh)
// and one stuck offline or in a long backoff. It waits up to RestartWait for
// the network to log the session in and returns nil whether it did or not
// (State says how it goes; the engine keeps trying with backoff). A temporary
// ban is waited out all the same. ErrNotPaired without a device, ErrClosed
// once closed.
func (e *Engine) Restart(ctx context.Context) error {
	e.mu.Lock()
	closed, cl := e.closed, e.cl
	e.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case cl.OwnID().IsEmpty():
		return ErrNotPaired
	}
	e.log.Info("gateway: restarting the session")
	e.resetReplaced()
	e.reconnect()
	t := time.NewTimer(e.cfg.RestartWait)
	defer t.Stop()
	for {
		e.mu.Lock()
		s, changed := e.state, e.changed
		e.mu.Unlock()
		if s.Connected || !restarting(s.Status) {
			return nil
		}
		select {
		case <-changed:
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// restarting says whether a restarted session is still on its way.
func restarting(s Status) bool {
	return s == StatusConnecting || s == StatusDisconnected
}
