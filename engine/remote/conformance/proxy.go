package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// kitPrefix starts the id of every frame the kit sends the engine itself: the
// engine's answers to them are the kit's, never forwarded to the server.
const kitPrefix = "conformance-"

// futureField is added to every frame the server sends the engine: a field of
// a later protocol revision, which an engine must ignore.
const futureField = "conformanceFutureField"

// proxy stands between the engine under test and the server: it forwards
// every frame both ways (adding futureField to the server's), records each in
// the journal, answers the kit's own commands' replies itself, and lets the
// kit inject frames and close the connection.
type proxy struct {
	upstream string // ws:// URL of the server's engine endpoint
	j        *journal

	mu    sync.Mutex
	links map[int]*link
	next  int
	// failEvents, when set, makes the proxy answer the next events frame
	// itself with an events_ack error instead of forwarding it.
	failEvents bool
}

// link is one connection of the engine, and its twin to the server.
type link struct {
	n        int
	down, up *websocket.Conn
	// kitCode is the code the kit closed the connection with (0 while open).
	kitCode websocket.StatusCode
}

func newProxy(upstream string, j *journal) *proxy {
	return &proxy{upstream: upstream, j: j, links: map[int]*link{}}
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := http.Header{}
	if a := r.Header.Get("Authorization"); a != "" {
		hdr.Set("Authorization", a)
	}
	up, resp, err := websocket.Dial(r.Context(), p.upstream, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		code := http.StatusBadGateway
		if resp != nil {
			code = resp.StatusCode
		}
		http.Error(w, err.Error(), code)
		return
	}
	down, err := websocket.Accept(w, r, nil)
	if err != nil {
		up.CloseNow()
		return
	}
	up.SetReadLimit(-1)
	down.SetReadLimit(-1)
	p.mu.Lock()
	p.next++
	l := &link{n: p.next, down: down, up: up}
	p.links[l.n] = l
	p.mu.Unlock()
	p.j.add(entry{kind: entryOpen, link: l.n})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	closed := func(code int, by string) {
		once.Do(func() { p.j.add(entry{kind: entryClose, link: l.n, code: code, by: by}) })
	}
	go func() {
		defer cancel()
		p.pump(ctx, l, true, closed)
	}()
	p.pump(ctx, l, false, closed)
	p.mu.Lock()
	delete(p.links, l.n)
	p.mu.Unlock()
}

// pump forwards the frames of one direction until the connection ends.
func (p *proxy) pump(ctx context.Context, l *link, toServer bool, closed func(int, string)) {
	src, dst, by := l.up, l.down, "server"
	if toServer {
		src, dst, by = l.down, l.up, "engine"
	}
	for {
		typ, raw, err := src.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			switch {
			case p.kitCode(l) != 0:
				closed(int(p.kitCode(l)), "kit")
				dst.CloseNow()
			case errors.As(err, &ce) && ce.Code != websocket.StatusNoStatusRcvd && ce.Code != websocket.StatusAbnormalClosure:
				closed(int(ce.Code), by)
				_ = dst.Close(ce.Code, ce.Reason)
			case ctx.Err() == nil:
				closed(0, by)
				dst.CloseNow()
			}
			return
		}
		if typ != websocket.MessageText {
			p.j.add(entry{kind: entryFrame, link: l.n, toServer: toServer, raw: raw, head: head{Type: "(binary)"}})
			_ = dst.Write(ctx, typ, raw)
			continue
		}
		e := entry{kind: entryFrame, link: l.n, toServer: toServer, raw: raw}
		_ = json.Unmarshal(raw, &e.head)
		p.j.add(e)
		if toServer && p.intercept(ctx, l, e.head) {
			continue
		}
		if !toServer {
			raw = withFutureField(raw)
		}
		if err := dst.Write(ctx, typ, raw); err != nil {
			src.CloseNow()
			return
		}
	}
}

// intercept reports whether an engine's frame is the kit's to answer rather
// than the server's: a reply or an unsupported frame answering the kit, or the
// events frame the kit fails on purpose.
func (p *proxy) intercept(ctx context.Context, l *link, h head) bool {
	if strings.HasPrefix(h.ID, kitPrefix) && (h.Type == "reply" || h.Type == "unsupported") {
		return true
	}
	if h.Type != "events" {
		return false
	}
	p.mu.Lock()
	fail := p.failEvents
	p.failEvents = false
	p.mu.Unlock()
	if !fail {
		return false
	}
	ack, _ := json.Marshal(map[string]any{"type": "events_ack", "id": h.ID,
		"error": map[string]string{"code": "unavailable", "message": "conformance kit: not stored, send these events again"}})
	e := entry{kind: entryFrame, link: l.n, raw: ack}
	_ = json.Unmarshal(ack, &e.head)
	p.j.add(e)
	_ = l.down.Write(ctx, websocket.MessageText, ack)
	return true
}

// withFutureField adds futureField to a frame object.
func withFutureField(raw []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	m[futureField] = json.RawMessage(`{"note":"a field of a later revision: ignore it"}`)
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

func (p *proxy) kitCode(l *link) websocket.StatusCode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.kitCode
}

// current is the newest open connection, or nil.
func (p *proxy) current() *link {
	p.mu.Lock()
	defer p.mu.Unlock()
	var newest *link
	for _, l := range p.links {
		if newest == nil || l.n > newest.n {
			newest = l
		}
	}
	return newest
}

// send writes a frame of the kit's to the engine on link n (and records it).
func (p *proxy) send(ctx context.Context, n int, frame any) error {
	p.mu.Lock()
	l := p.links[n]
	p.mu.Unlock()
	if l == nil {
		return errors.New("the connection is closed")
	}
	raw, err := json.Marshal(frame)
	if err != nil {
		return err
	}
	e := entry{kind: entryFrame, link: n, raw: raw}
	_ = json.Unmarshal(raw, &e.head)
	p.j.add(e)
	return l.down.Write(ctx, websocket.MessageText, raw)
}

// closeLink closes link n towards the engine with code, and its twin towards
// the server as a normal close.
func (p *proxy) closeLink(n int, code websocket.StatusCode, reason string) {
	p.mu.Lock()
	l := p.links[n]
	if l != nil {
		l.kitCode = code
	}
	p.mu.Unlock()
	if l == nil {
		return
	}
	_ = l.down.Close(code, reason)
	_ = l.up.Close(websocket.StatusNormalClosure, "")
}

// failNextEvents makes the proxy fail the next events frame with an
// events_ack error.
func (p *proxy) failNextEvents() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failEvents = true
}

// isOpen reports whether link n is open.
func (p *proxy) isOpen(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.links[n] != nil
}
