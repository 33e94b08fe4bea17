package gateway

import (
	"errors"
	"math/rand/v2"
	"time"

	"go.mau.fi/whatsmeow"
)

// startConnecting runs the connection loop unless it runs already: Connect,
// and on failure again after a backoff (ReconnectMin doubling to ReconnectMax,
// with jitter), until connected, closed, logged out or replaced. Once connected,
// whatsmeow's own auto-reconnect takes over drops of the websocket.
func (e *Engine) startConnecting() {
	e.mu.Lock()
	if e.looping || e.closed {
		e.again = e.looping // a loop that is ending looks once more
		e.mu.Unlock()
		return
	}
	e.looping = true
	e.mu.Unlock()
	go e.connectLoop()
}

func (e *Engine) connectLoop() {
	defer func() {
		e.mu.Lock()
		e.looping = false
		again := e.again
		e.again = false
		e.mu.Unlock()
		if again {
			e.startConnecting()
		}
	}()
	wait := e.cfg.ReconnectMin
	for {
		e.mu.Lock()
		cl, closed, st := e.cl, e.closed, e.state
		e.mu.Unlock()
		if closed || st.Status == StatusLoggedOut || st.Status == StatusReplaced {
			return
		}
		if st.BannedUntil != nil && time.Now().Before(*st.BannedUntil) {
			if !e.sleep(time.Until(*st.BannedUntil)) {
				return
			}
			continue
		}
		if cl.IsConnected() {
			return
		}
		err := cl.Connect()
		if err == nil || errors.Is(err, whatsmeow.ErrAlreadyConnected) {
			return
		}
		e.log.Warn("gateway: connect failed; retrying", "err", err, "in", wait)
		e.mu.Lock()
		e.failures++
		e.mu.Unlock()
		e.setState(func(s *State) {
			s.LastError = err.Error()
			if s.Status == StatusConnecting || s.Status == StatusConnected {
				s.Status = StatusDisconnected
			}
		})
		jitter := time.Duration(rand.Int64N(int64(wait)/4 + 1))
		if !e.sleep(wait + jitter) {
			return
		}
		wait = min(wait*2, e.cfg.ReconnectMax)
	}
}

// sleep waits d, or less when woken by connWake; false once the engine closed.
func (e *Engine) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-e.stop:
		return false
	case <-t.C:
	case <-e.connWake:
	}
	return true
}
