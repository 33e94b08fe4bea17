package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/engine/remote"
)

// runChecks runs every check in order and records each in the report. A
// failed handshake leaves nothing else to check.
func (k *kit) runChecks(ctx context.Context) {
	k.add(k.checkHandshake(ctx))
	if !k.welcomed {
		for _, name := range []string{"heartbeats", "unknown frame type", "unknown method", "malformed params", "commands", "send through the API", "events", "resend after an ack error", "reconnect", "final close", "frames"} {
			k.add(Check{Name: name, Status: Skip, Detail: "no welcomed connection"})
		}
		return
	}
	k.add(k.checkHeartbeats(ctx))
	k.add(k.checkUnknownFrame(ctx))
	k.add(k.checkUnknownMethod(ctx))
	k.add(k.checkMalformedParams(ctx))
	k.checkCommands(ctx)
	k.add(k.checkSendThroughAPI(ctx))
	resend := k.failEvents(ctx)
	k.add(k.checkReconnect(ctx))
	if k.announced("restart") {
		k.add(k.checkRestart(ctx))
	}
	k.add(resend())
	k.add(k.checkEvents())
	k.add(k.checkState())
	k.add(k.checkFinalClose(ctx))
	k.add(k.checkFrames())
}

// add records a check; when it left the engine's connection closed (a failed
// check may), the next checks use the engine's next welcomed connection.
func (k *kit) add(c Check) {
	k.report.Checks = append(k.report.Checks, c)
	if k.welcomed && k.j.has(closedLink(k.link)) {
		wctx, cancel := k.within(context.Background())
		defer cancel()
		if e, _, err := k.j.wait(wctx, 0, func(e entry) bool {
			return e.link > k.link && serverFrame(e.link, remote.FrameWelcome)(e) && !k.j.hasLocked(closedLink(e.link))
		}); err == nil {
			k.link = e.link
		}
	}
}

func pass(name, format string, args ...any) Check {
	return Check{Name: name, Status: Pass, Detail: fmt.Sprintf(format, args...)}
}

func fail(name, format string, args ...any) Check {
	return Check{Name: name, Status: Fail, Detail: fmt.Sprintf(format, args...)}
}

func (k *kit) announced(capability string) bool { return slices.Contains(k.capabilities, capability) }

// within is ctx bounded by the kit's wait (or d when given).
func (k *kit) within(ctx context.Context, d ...time.Duration) (context.Context, context.CancelFunc) {
	wait := k.o.Wait
	if len(d) > 0 {
		wait = d[0]
	}
	return context.WithTimeout(ctx, wait)
}

// checkHandshake: the engine connects, its first frame is a valid hello, and
// the server welcomes it.
func (k *kit) checkHandshake(ctx context.Context) Check {
	const name = "handshake"
	wctx, cancel := k.within(ctx, 2*k.o.Wait)
	defer cancel()
	open, from, err := k.j.wait(wctx, 0, opened)
	if err != nil {
		return fail(name, "the engine did not connect within %s", 2*k.o.Wait)
	}
	first, _, err := k.j.wait(wctx, from, func(e entry) bool {
		return e.link == open.link && (e.kind == entryClose || (e.kind == entryFrame && e.toServer))
	})
	switch {
	case err != nil:
		return fail(name, "no hello within %s of connecting", 2*k.o.Wait)
	case first.kind == entryClose:
		return fail(name, "the connection closed before a hello (code %d by the %s)", first.code, first.by)
	case first.head.Type != remote.FrameHello:
		return fail(name, "the first frame is %q, not a hello", first.head.Type)
	}
	if err := k.v.Frame(first.raw); err != nil {
		return fail(name, "the hello does not validate: %s", oneLine(err))
	}
	welcome, _, err := k.j.wait(wctx, from, func(e entry) bool {
		return e.link == open.link && (e.kind == entryClose || (e.kind == entryFrame && !e.toServer && e.head.Type == remote.FrameWelcome))
	})
	if err != nil || welcome.kind == entryClose {
		return fail(name, "the server did not welcome the engine (close code %d by the %s)", welcome.code, welcome.by)
	}
	k.link, k.welcomed = open.link, true
	k.capabilities = first.head.Capabilities
	k.heartbeat = time.Duration(welcome.head.HeartbeatMs) * time.Millisecond
	k.maxFrame, k.maxBatch = welcome.head.MaxFrame, welcome.head.MaxBatch
	versions := first.head.Versions
	if len(versions) == 0 {
		versions = []int{max(first.head.Version, 1)}
	}
	return pass(name, "hello (kind %s, versions %v, %d capabilities) welcomed at version %d after %s",
		first.head.Kind, versions, len(k.capabilities), welcome.head.Version, welcome.at.Sub(open.at).Round(time.Millisecond))
}

// checkHeartbeats: three heartbeats come within four intervals, none more
// than an interval and a half after the one before.
func (k *kit) checkHeartbeats(ctx context.Context) Check {
	const name = "heartbeats"
	start := k.j.len()
	began := time.Now()
	wctx, cancel := k.within(ctx, 4*k.heartbeat+time.Second)
	defer cancel()
	var beats []time.Time
	for from := start; len(beats) < 3; from++ {
		e, at, err := k.j.wait(wctx, from, func(e entry) bool {
			return closedLink(k.link)(e) || engineFrame(k.link, remote.FrameHeartbeat)(e)
		})
		if err != nil {
			return fail(name, "%d heartbeats in %s; the welcome asked for one every %s", len(beats), time.Since(began).Round(time.Millisecond), k.heartbeat)
		}
		if e.kind == entryClose {
			return fail(name, "the connection closed (code %d by the %s)", e.code, e.by)
		}
		beats = append(beats, e.at)
		from = at
	}
	gap := beats[1].Sub(beats[0])
	if g := beats[2].Sub(beats[1]); g > gap {
		gap = g
	}
	if gap > k.heartbeat*3/2 {
		return fail(name, "heartbeats %s apart; the welcome asked for one every %s", gap.Round(time.Millisecond), k.heartbeat)
	}
	return pass(name, "one every %s or less (asked: %s); the welcome carried an unknown field", gap.Round(time.Millisecond), k.heartbeat)
}

var probeSeq atomic.Int64

// kitID is a fresh id for a frame of the kit's.
func kitID(what string) string { return fmt.Sprintf("%s%s-%d", kitPrefix, what, probeSeq.Add(1)) }

// checkUnknownFrame: a frame of a type the engine does not know (a later
// version's) neither closes the connection nor stops its heartbeats.
func (k *kit) checkUnknownFrame(ctx context.Context) Check {
	const name = "unknown frame type"
	id := kitID("probe")
	from := k.j.len()
	if err := k.proxy.send(ctx, k.link, map[string]any{"type": "conformanceProbe", "id": id, "probe": map[string]any{"later": true}}); err != nil {
		return fail(name, "could not send: %v", err)
	}
	wctx, cancel := k.within(ctx, 2*k.heartbeat+time.Second)
	defer cancel()
	answered := false
	for {
		e, at, err := k.j.wait(wctx, from, func(e entry) bool {
			return closedLink(k.link)(e) || engineFrame(k.link, remote.FrameHeartbeat)(e) ||
				(engineFrame(k.link, remote.FrameUnsupported)(e) && e.head.ID == id)
		})
		switch {
		case err != nil:
			return fail(name, "no heartbeat within %s after it", 2*k.heartbeat+time.Second)
		case e.kind == entryClose:
			return fail(name, "the engine closed the connection (code %d)", e.code)
		case e.head.Type == remote.FrameUnsupported:
			answered, from = true, at+1
			continue
		}
		if answered {
			return pass(name, "answered unsupported; the connection stayed")
		}
		return pass(name, "ignored; the connection stayed")
	}
}

// command sends the engine a command of the kit's (with an unknown field) and
// waits for its reply until the command's deadline.
func (k *kit) command(ctx context.Context, method string, params any) (entry, error) {
	id := kitID(method)
	deadline := time.Now().Add(k.o.Wait).UTC()
	from := k.j.len()
	frame := map[string]any{"type": remote.FrameCommand, "id": id, "method": method, "params": params,
		"deadline": deadline.Format(time.RFC3339Nano), futureField: true}
	if err := k.proxy.send(ctx, k.link, frame); err != nil {
		return entry{}, err
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	e, _, err := k.j.wait(wctx, from, func(e entry) bool { return replyTo(id)(e) || closedLink(k.link)(e) })
	switch {
	case err != nil:
		return entry{}, fmt.Errorf("no reply before its deadline (%s)", k.o.Wait)
	case e.kind == entryClose:
		return entry{}, fmt.Errorf("the connection closed (code %d by the %s)", e.code, e.by)
	}
	return e, nil
}

// checkUnknownMethod: a command the engine does not serve is answered
// unsupported.
func (k *kit) checkUnknownMethod(ctx context.Context) Check {
	const name = "unknown method"
	e, err := k.command(ctx, "ConformanceProbe", []any{})
	switch {
	case err != nil:
		return fail(name, "ConformanceProbe: %v", err)
	case e.head.Error == nil:
		return fail(name, "ConformanceProbe was answered with a result, not an unsupported error")
	case e.head.Error.Code != "unsupported":
		return fail(name, "ConformanceProbe was answered %q, not unsupported", e.head.Error.Code)
	}
	return pass(name, "answered unsupported")
}

// checkMalformedParams: a command whose params are of the wrong types is
// answered with an error, and the connection stays.
func (k *kit) checkMalformedParams(ctx context.Context) Check {
	const name = "malformed params"
	method := ""
	for _, m := range commandOrder {
		if k.announced(remote.MethodCapability(m)) {
			method = m
			break
		}
	}
	if method == "" {
		return Check{Name: name, Status: Skip, Detail: "no command announced"}
	}
	e, err := k.command(ctx, method, []any{42, map[string]any{"conformance": "wrong"}, []any{true}})
	switch {
	case err != nil:
		return fail(name, "%s with wrong params: %v", method, err)
	case e.head.Error == nil:
		return fail(name, "%s with wrong params was answered with a result, not an error", method)
	}
	return pass(name, "%s with wrong params answered %s", method, e.head.Error.Code)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
