//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// outcome is what the network does with a message, by the recipient's number.
type outcome int

const (
	outRead     outcome = iota // any other number
	outReceived                // ...1111: never read
	outFailed                  // ...0000: not on the network
	outReplied                 // ...2222: read, then reactions and a reply
)

// sent is a message the server accepted.
type sent struct {
	id       string
	outcome  outcome
	deferred bool
}

// load sends n messages through the given API processes with concurrency
// workers, each message under its own Idempotency-Key and retried until the
// server accepts it, the way a careful client does.
type load struct {
	h         *harness
	accepted  atomic.Int64
	errors500 atomic.Int64
	mu        sync.Mutex
	msgs      []sent
	done      chan struct{}
}

var loadSeq atomic.Int64

func (h *harness) startLoad(n int, targets []*proc, workers int) *load {
	l := &load{h: h, done: make(chan struct{})}
	next := make(chan int)
	go func() {
		for i := 0; i < n; i++ {
			next <- int(loadSeq.Add(1))
		}
		close(next)
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				l.send(i, targets)
				time.Sleep(25 * time.Millisecond) // a steady load, not a burst
			}
		}()
	}
	go func() { wg.Wait(); close(l.done) }()
	return l
}

func (l *load) send(i int, targets []*proc) {
	out, suffix := outRead, fmt.Sprintf("%04d", 5000+i%4000)
	switch i % 25 {
	case 0:
		out, suffix = outFailed, "0000"
	case 1:
		out, suffix = outReceived, "1111"
	case 2:
		out, suffix = outReplied, "2222"
	}
	body := map[string]any{"type": "text", "text": fmt.Sprintf("fault run message %d", i), "secret": "faults"}
	deferred := i%10 == 7
	if deferred {
		body["sendAt"] = time.Now().Add(60 * time.Second).UTC().Format(time.RFC3339)
	}
	raw, _ := json.Marshal(body)
	path := fmt.Sprintf("/v1/scheduled-messages/+1555%03d%s", i%1000, suffix)
	key := fmt.Sprintf("faults-%d", i)
	deadline := time.Now().Add(3 * time.Minute)
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		status, resp := l.h.call(targets[(i+attempt)%len(targets)], "POST", path, raw, "Idempotency-Key", key)
		if status == 500 {
			l.errors500.Add(1)
			l.h.t.Errorf("500 for message %d: %s", i, resp)
		}
		if status == 200 || status == 201 {
			var env struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			_ = json.Unmarshal(resp, &env)
			l.mu.Lock()
			l.msgs = append(l.msgs, sent{id: env.Data.ID, outcome: out, deferred: deferred})
			l.mu.Unlock()
			l.accepted.Add(1)
			return
		}
		if status != 0 && status != 503 && status != 500 {
			l.h.t.Errorf("message %d answered %d: %s", i, status, resp)
			return
		}
		time.Sleep(100 * time.Millisecond) // the server is down or restarting: try again
	}
	l.h.t.Errorf("message %d was never accepted", i)
}

func (l *load) waitAccepted(n int) {
	for l.accepted.Load() < int64(n) {
		select {
		case <-l.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (l *load) wait() { <-l.done }

func (l *load) sent() []sent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sent(nil), l.msgs...)
}

// proxy forwards TCP connections to the database and can cut them all off.
type proxy struct {
	addr   string
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) serve(c net.Conn) {
	p.mu.Lock()
	down := p.down
	if !down {
		p.conns[c] = true
	}
	p.mu.Unlock()
	if down {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[up] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// cut closes every connection and refuses new ones for d.
func (p *proxy) cut(d time.Duration) {
	p.mu.Lock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	time.Sleep(d) // the outage itself
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// receiver is the webhook endpoint: it records every delivery and now and then
// answers oddly (a body whose 4 KiB cut splits a character, a NUL byte, a 500).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]delivery // by envelope id
	n    int
}

type delivery struct {
	typ       string
	messageID string
	ok        bool
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{seen: map[string]delivery{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&env)
		rc.mu.Lock()
		rc.n++
		n := rc.n
		status := 200
		if n%31 == 0 {
			status = 500
		}
		prev := rc.seen[env.ID]
		rc.seen[env.ID] = delivery{typ: env.Type, messageID: env.Data.ID, ok: prev.ok || status == 200}
		rc.mu.Unlock()
		w.WriteHeader(status)
		switch {
		case n%17 == 0:
			_, _ = io.WriteString(w, strings.Repeat("a", 4095)+"é")
		case n%19 == 0:
			_, _ = io.WriteString(w, "nul\x00byte")
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) snapshot() map[string]delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]delivery, len(rc.seen))
	for k, v := range rc.seen {
		out[k] = v
	}
	return out
}
