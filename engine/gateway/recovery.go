package gateway

import (
	"fmt"
	"sync"
	"time"
)

// Recovery. Three things bring a session back without unlinking its device:
//
//   - Redelivery: an incoming event the sink refused is not acknowledged, and
//     the network delivers an unacknowledged event again only on the next
//     connection. So the engine reconnects (at once the first time, then no
//     sooner than RedeliverMin after the last such reconnection, the spacing
//     doubling up to RedeliverMax while the sink keeps refusing).
//   - A replaced session (another client connected with the device: stream
//     replaced) is retried after each wait of ReplacedRetry, then stays
//     replaced until Restart: two clients that took the session from each
//     other on every retry would fight forever.
//   - Restart (restart.go), asked by the API.

// Defaults of the recovery settings of Config.
const (
	DefaultRedeliverMin   = 30 * time.Second
	DefaultRedeliverMax   = 10 * time.Minute
	DefaultReplacedStable = time.Hour
	DefaultRestartWait    = 10 * time.Second
)

// DefaultReplacedRetry is the wait before each automatic retry of a replaced
// session: three retries, further apart each time.
var DefaultReplacedRetry = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}

// recovery is the engine's memory of its reconnections.
type recovery struct {
	mu sync.Mutex
	// redelivery
	pending bool          // a redelivery reconnection is scheduled
	last    time.Time     // the last redelivery reconnection
	gap     time.Duration // the least spacing to the next one
	count   int           // redelivery reconnections made
	// replaced sessions
	retries int         // automatic retries of the current replacement streak
	timer   *time.Timer // the scheduled retry, if any
}

func recoveryDefaults(cfg Config) Config {
	if cfg.RedeliverMin <= 0 {
		cfg.RedeliverMin = DefaultRedeliverMin
	}
	if cfg.RedeliverMax < cfg.RedeliverMin {
		cfg.RedeliverMax = max(DefaultRedeliverMax, cfg.RedeliverMin)
	}
	if cfg.ReplacedRetry == nil {
		cfg.ReplacedRetry = DefaultReplacedRetry
	}
	if cfg.ReplacedStable <= 0 {
		cfg.ReplacedStable = DefaultReplacedStable
	}
	if cfg.RestartWait <= 0 {
		cfg.RestartWait = DefaultRestartWait
	}
	return cfg
}

// sinkRefused schedules a reconnection so that the network redelivers an event
// the sink refused (left unacknowledged). A refusal while one is scheduled
// changes nothing; after a quiet spell (twice the current spacing) the spacing
// starts again at RedeliverMin.
func (e *Engine) sinkRefused() {
	r := &e.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	now := time.Now()
	quiet := r.last.IsZero() || now.Sub(r.last) > 2*r.gap
	if quiet {
		r.gap = e.cfg.RedeliverMin
	}
	wait := max(r.last.Add(r.gap).Sub(now), 0)
	if !quiet {
		r.gap = min(2*r.gap, e.cfg.RedeliverMax)
	}
	r.pending = true
	time.AfterFunc(wait, e.redeliver)
}

// redeliver is the scheduled reconnection of sinkRefused.
func (e *Engine) redeliver() {
	r := &e.rec
	r.mu.Lock()
	r.pending, r.last = false, time.Now()
	r.count++
	n := r.count
	r.mu.Unlock()
	if e.State().Status == StatusReplaced {
		return // another client holds the session: not ours to take back here
	}
	e.log.Warn("gateway: reconnecting so that the network redelivers what the sink refused", "reconnections", n)
	e.reconnect()
}

// Redeliveries is how many times the engine reconnected to have the network
// redeliver events the sink refused.
func (e *Engine) Redeliveries() int {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	return e.rec.count
}

// reconnect drops the connection and connects again on the same device, in the
// background (the connection loop, with its backoff). Whatsmeow's Disconnect
// reports nothing, so the engine records the session offline itself. A closed
// engine, or one without a device, is left alone.
func (e *Engine) reconnect() {
	e.mu.Lock()
	cl, closed := e.cl, e.closed
	e.mu.Unlock()
	if closed || cl.OwnID().IsEmpty() {
		return
	}
	cl.Disconnect()
	e.setState(func(s *State) {
		s.Connected = false
		switch s.Status {
		case StatusConnected, StatusDisconnected, StatusReplaced, StatusConnecting:
			s.Status = StatusConnecting
		}
	})
	e.startConnecting()
	select { // wake a loop that waits out its backoff
	case e.connWake <- struct{}{}:
	default:
	}
}

// onReplaced records a session another client took and schedules its next
// automatic retry, if any is left. A session that had stayed connected for
// ReplacedStable starts a new streak of retries; a retry that is replaced
// again soon counts in the same streak, so two clients cannot take the session
// from each other forever.
func (e *Engine) onReplaced() {
	before := e.State()
	r := &e.rec
	r.mu.Lock()
	if before.Status == StatusConnected && time.Since(before.Since) >= e.cfg.ReplacedStable {
		r.retries = 0
	}
	why := "another client connected with this device (stream replaced)"
	if r.retries < len(e.cfg.ReplacedRetry) {
		wait := e.cfg.ReplacedRetry[r.retries]
		r.retries++
		why += fmt.Sprintf("; retry %d of %d at %s", r.retries, len(e.cfg.ReplacedRetry), time.Now().Add(wait).UTC().Format(time.RFC3339))
		if r.timer != nil {
			r.timer.Stop()
		}
		r.timer = time.AfterFunc(wait, e.retryReplaced)
	} else {
		why += "; no retry left: restart the engine"
	}
	r.mu.Unlock()
	e.log.Warn("gateway: session replaced", "why", why)
	e.setState(func(s *State) {
		s.Status, s.Connected, s.LastError = StatusReplaced, false, why
	})
}

// retryReplaced is a scheduled retry of a replaced session: it connects again
// unless the session is no longer replaced (restarted or logged out since).
func (e *Engine) retryReplaced() {
	if e.State().Status != StatusReplaced {
		return
	}
	e.log.Info("gateway: retrying a replaced session")
	e.reconnect()
}

// resetReplaced forgets the replacement streak and cancels a scheduled retry.
func (e *Engine) resetReplaced() {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	e.rec.retries = 0
	if e.rec.timer != nil {
		e.rec.timer.Stop()
		e.rec.timer = nil
	}
}
