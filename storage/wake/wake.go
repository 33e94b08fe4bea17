// Package wake wakes the worker loops when another connection (this process,
// or another replica) stores work for them: on PostgreSQL one dedicated
// connection LISTENs on storage.WakeChannel, which the triggers storage.Migrate
// installs notify with the name of the table written, and each notification is
// passed to the loops of that table as a non-blocking signal.
package wake

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/storage"
)

// Reconnect backoff: the first retry after a dropped connection waits
// retryMin, each further failure doubles the wait up to retryMax.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
)

// Listener holds the LISTEN connection and the loops' signals. Give it the
// loops' channels (Notify) before Run.
type Listener struct {
	cfg *pgx.ConnConfig

	mu      sync.Mutex
	signals map[string][]chan<- struct{} // by table

	pid    atomic.Uint32 // the listening connection's backend, 0 while none
	sweeps atomic.Int64  // connections made, each followed by a sweep
}

// New returns a listener for the PostgreSQL database at rawURL.
func New(rawURL string) (*Listener, error) {
	cfg, err := pgx.ParseConfig(rawURL) // its errors leave the password out
	if err != nil {
		return nil, fmt.Errorf("wake: bad postgres URL: %w", err)
	}
	return &Listener{cfg: cfg, signals: map[string][]chan<- struct{}{}}, nil
}

// Notify makes the listener signal ch (without blocking: one pending signal
// is enough) whenever a write to table commits anywhere, and after every
// (re)connection. Call it before Run.
func (l *Listener) Notify(table string, ch chan<- struct{}) {
	l.mu.Lock()
	l.signals[table] = append(l.signals[table], ch)
	l.mu.Unlock()
}

// PID is the backend process id of the listening connection, 0 while there is
// none.
func (l *Listener) PID() uint32 { return l.pid.Load() }

// Sweeps is how many times the listener connected and signalled every loop.
func (l *Listener) Sweeps() int64 { return l.sweeps.Load() }

// Run listens until ctx is done, connecting again with backoff whenever the
// connection fails. After each connection it signals every loop once: what was
// notified while it was away is lost, so the loops look for themselves.
func (l *Listener) Run(ctx context.Context) {
	wait := retryMin
	for ctx.Err() == nil {
		connected, err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			wait = retryMin
		}
		slog.Warn("wake: no listening connection; loops wait for their safety sweep until it is back", "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}

// listen connects, LISTENs, sweeps and passes notifications on until the
// connection fails or ctx ends. connected reports whether it got as far as
// listening.
func (l *Listener) listen(ctx context.Context) (connected bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return false, err
	}
	defer func() {
		l.pid.Store(0)
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{storage.WakeChannel}.Sanitize()); err != nil {
		return false, err
	}
	l.pid.Store(conn.PgConn().PID())
	l.sweeps.Add(1)
	l.signalAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		l.signal(n.Payload)
	}
}

// signal wakes the loops of table, without waiting for any.
func (l *Listener) signal(table string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range l.signals[table] {
		poke(ch)
	}
}

// signalAll wakes every loop.
func (l *Listener) signalAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, chans := range l.signals {
		for _, ch := range chans {
			poke(ch)
		}
	}
}

// poke signals ch unless a signal is already pending.
func poke(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
