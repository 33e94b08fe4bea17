package app

import (
	"net/http"
	"sync"

	"github.com/hibiken/asynqmon"
)

// monitor is the operators' queue dashboard (asynqmon), built on its first
// request: building it compiles a router of regular expressions and opens a
// Redis pool of its own, which a server nobody monitors need not hold.
type monitor struct {
	opts asynqmon.Options

	mu sync.Mutex
	h  *asynqmon.HTTPHandler
}

func (m *monitor) handler() *asynqmon.HTTPHandler {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		m.h = asynqmon.New(m.opts)
	}
	return m.h
}

// ServeHTTP serves the dashboard, building it first if this is its first request.
func (m *monitor) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler().ServeHTTP(w, r) }

// Close closes the dashboard's Redis pool if it was ever built.
func (m *monitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h != nil {
		_ = m.h.Close()
		m.h = nil
	}
}
