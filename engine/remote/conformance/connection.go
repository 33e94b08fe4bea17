package conformance

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// The checks of the connection's life: reconnecting, Restart, and the final close.

// checkReconnect: after the connection drops (the kit closes it as a server
// restarting would), the engine connects again, says hello and heartbeats.
func (k *kit) checkReconnect(ctx context.Context) Check {
	const name = "reconnect"
	from := k.j.len()
	dropped := time.Now()
	k.proxy.closeLink(k.link, websocket.StatusServiceRestart, "conformance kit: reconnect")
	wctx, cancel := k.within(ctx, 2*k.o.Wait)
	defer cancel()
	open, at, err := k.j.wait(wctx, from, opened)
	if err != nil {
		return fail(name, "no new connection within %s of a 1012 close", 2*k.o.Wait)
	}
	if _, _, err := k.j.wait(wctx, at, serverFrame(open.link, remote.FrameWelcome)); err != nil {
		return fail(name, "the new connection was not welcomed")
	}
	k.link = open.link
	if _, _, err := k.j.wait(wctx, at, engineFrame(open.link, remote.FrameHeartbeat)); err != nil {
		return fail(name, "no heartbeat on the new connection")
	}
	var rec struct {
		Connected bool   `json:"connected"`
		State     string `json:"state"`
	}
	if _, err := k.api(ctx, http.MethodGet, "/v1/engines/"+k.engineID, nil, &rec); err != nil {
		return fail(name, "%v", err)
	}
	return pass(name, "connected again after %s; the API says connected=%t, state %s", open.at.Sub(dropped).Round(time.Millisecond), rec.Connected, rec.State)
}

// checkRestart: Restart is answered, and the engine is connected after it
// (on the same connection or a new one).
func (k *kit) checkRestart(ctx context.Context) Check {
	const name = "command Restart"
	from := k.j.len()
	e, err := k.command(ctx, "Restart", []any{})
	if err != nil {
		return fail(name, "%v", err)
	}
	if e.head.Error != nil {
		return pass(name, "answered error %s", e.head.Error.Code)
	}
	wctx, cancel := k.within(ctx, 2*k.o.Wait)
	defer cancel()
	beat, _, err := k.j.wait(wctx, from, func(e entry) bool {
		return e.kind == entryFrame && e.toServer && e.head.Type == remote.FrameHeartbeat && k.proxy.isOpen(e.link)
	})
	if err != nil {
		return fail(name, "no heartbeat on an open connection after the restart")
	}
	k.link = beat.link
	return pass(name, "answered; heartbeating after it")
}

// checkFinalClose: after a final close (4000 through the API's logout, or
// 4002 as when the engine is deleted) the engine does not connect again.
func (k *kit) checkFinalClose(ctx context.Context) Check {
	from := k.j.len()
	code := remote.CloseDeleted
	if k.announced("logout") {
		code = remote.CloseLoggedOut
		if _, err := k.api(ctx, http.MethodPost, "/v1/engines/"+k.engineID+"/logout", nil, nil); err != nil {
			return fail("final close", "logout through the API: %v", err)
		}
	} else {
		k.proxy.closeLink(k.link, websocket.StatusCode(code), "conformance kit: engine deleted")
	}
	name := fmt.Sprintf("no reconnect after %d", code)
	wctx, cancel := k.within(ctx)
	defer cancel()
	closed, at, err := k.j.wait(wctx, from, closedLink(k.link))
	if err != nil {
		return fail(name, "the connection did not close")
	}
	if closed.code != code {
		return fail(name, "the connection closed with %d (by the %s), not %d", closed.code, closed.by, code)
	}
	quiet := min(5*time.Second, k.o.Wait)
	qctx, cancel := context.WithTimeout(ctx, quiet)
	defer cancel()
	if again, _, err := k.j.wait(qctx, at, opened); err == nil {
		return fail(name, "the engine connected again %s after it", again.at.Sub(closed.at).Round(time.Millisecond))
	}
	return pass(name, "no new connection within %s", quiet)
}
