package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboardhq/switchboard/engine"
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

// errorCode is the form of an error code: a known wire code or a Switchboard
// error code, lower-case words joined by underscores.
var errorCode = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// checkCommands sends every command of the announced capabilities and checks
// each reply's shape; a skipped capability is one check.
func (k *kit) checkCommands(ctx context.Context) {
	var l learned
	var skipped []string
	for _, method := range k.methods() {
		capability := remote.MethodCapability(method)
		if !k.announced(capability) {
			skipped = append(skipped, method)
			continue
		}
		k.add(k.checkCommand(ctx, method, &l))
		if method == "Send" && l.key.ID != "" {
			k.add(k.checkIdempotentSend(ctx, l.key))
		}
	}
	if len(skipped) > 0 {
		k.add(Check{Name: "commands not announced", Status: Skip, Detail: strings.Join(skipped, ", ")})
	}
}

// methods are the commands the kit sends in order: commandOrder, then any
// the kit has no place for (a newer server's), but Logout and Restart.
func (k *kit) methods() []string {
	out := slices.Clone(commandOrder)
	for _, m := range remote.Methods() {
		if !slices.Contains(out, m) && m != "Logout" && m != "Restart" {
			out = append(out, m)
		}
	}
	return out
}

// checkCommand sends one command and checks its reply: a result that
// validates against result.<method>, or an error with a code. Send must
// succeed, with the wire id as the key's id.
func (k *kit) checkCommand(ctx context.Context, method string, l *learned) Check {
	name := "command " + method
	params := k.params(method, l)
	if params == nil {
		return Check{Name: name, Status: Skip, Detail: "the kit has no params for it"}
	}
	e, err := k.command(ctx, method, params)
	if err != nil {
		return fail(name, "%v", err)
	}
	if err := k.v.Frame(e.raw); err != nil {
		return fail(name, "the reply does not validate: %s", oneLine(err))
	}
	if e.head.Error != nil {
		switch code := e.head.Error.Code; {
		case code == "unsupported":
			return fail(name, "answered unsupported, but the hello announced %s", remote.MethodCapability(method))
		case !errorCode.MatchString(code):
			return fail(name, "answered an error whose code %q is not a code", code)
		case method == "Send":
			return fail(name, "a text to %s was answered %s: %s (is --to on the engine's network?)", k.o.To, code, e.head.Error.Message)
		}
		return pass(name, "answered error %s", e.head.Error.Code)
	}
	if e.head.Result == nil {
		return fail(name, "the reply has neither result nor error")
	}
	if err := k.v.Def("result."+method, e.head.Result); err != nil {
		return fail(name, "the result does not validate: %s", oneLine(err))
	}
	if msg := l.learn(method, e.head.Result); msg != "" {
		return fail(name, "%s", msg)
	}
	return pass(name, "result %s", clip(string(e.head.Result), 80))
}

// learn keeps what a result gives later commands, and says what is wrong with
// a Send's.
func (l *learned) learn(method string, result json.RawMessage) string {
	switch method {
	case "Send":
		var r []engine.Key
		if json.Unmarshal(result, &r) != nil || len(r) == 0 || r[0].ID == "" {
			return "Send answered no key"
		}
		if r[0].ID != sendWireID {
			return fmt.Sprintf("Send answered key id %q, not the command's wireId %q", r[0].ID, sendWireID)
		}
		l.key = r[0]
	case "CreateGroup":
		var r []json.RawMessage
		if json.Unmarshal(result, &r) == nil && len(r) > 0 {
			_ = json.Unmarshal(r[0], &l.group)
		}
	case "CreateNewsletter":
		var r []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(result, &r) == nil && len(r) > 0 {
			l.newsletter = r[0].ID
		}
	case "PostStatus":
		var r []engine.Key
		if json.Unmarshal(result, &r) == nil && len(r) > 0 {
			l.status = r[0].ID
		}
	}
	return ""
}

// checkIdempotentSend: a Send of a wire id already sent answers the same key.
func (k *kit) checkIdempotentSend(ctx context.Context, first engine.Key) Check {
	const name = "idempotent Send"
	e, err := k.command(ctx, "Send", k.params("Send", &learned{}))
	if err != nil {
		return fail(name, "%v", err)
	}
	var r []engine.Key
	if e.head.Error != nil || json.Unmarshal(e.head.Result, &r) != nil || len(r) == 0 {
		return fail(name, "the same wireId again was not answered with a key: %s", clip(string(e.raw), 120))
	}
	if r[0] != first {
		return fail(name, "the same wireId again answered %+v, first %+v", r[0], first)
	}
	return pass(name, "the same wireId answered the same key")
}

// delivered are the statuses of a message the network took.
var delivered = []string{"confirmed", "delivered", "received", "read", "played"}

// checkSendThroughAPI: a message queued through the API reaches the engine,
// which sends it and reports acks the server applies.
func (k *kit) checkSendThroughAPI(ctx context.Context) Check {
	const name = "send through the API"
	if !k.announced("send") {
		return Check{Name: name, Status: Skip, Detail: "send not announced"}
	}
	id, status, err := k.sendThroughAPI(ctx, "conformance kit: through the API")
	if err != nil {
		return fail(name, "%v", err)
	}
	wctx, cancel := k.within(ctx)
	defer cancel()
	wire := engine.WireID(id)
	if _, _, err := k.j.wait(wctx, 0, func(e entry) bool {
		if e.kind != entryFrame || !e.toServer || e.head.Type != remote.FrameEvents {
			return false
		}
		return slices.ContainsFunc(e.head.Events, func(ev eventHead) bool { return ev.Type == "ack" && ev.Key.ID == wire })
	}); err != nil {
		return fail(name, "the message is %s but no ack event for key id %s came", status, wire)
	}
	return pass(name, "message %s became %s; ack events reported", id, status)
}

// sendThroughAPI queues a text to the kit's peer and waits until the network
// took it; it returns the message's id and status.
func (k *kit) sendThroughAPI(ctx context.Context, text string) (string, string, error) {
	var m struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if _, err := k.api(ctx, http.MethodPost, "/v1/scheduled-messages/"+k.chatPath(), map[string]any{"type": "text", "text": text}, &m); err != nil {
		return "", "", err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	wctx, cancel := k.within(ctx)
	defer cancel()
	for !slices.Contains(delivered, m.Status) {
		if m.Status == "failed" || m.Status == "error" {
			return m.ID, m.Status, fmt.Errorf("message %s %s", m.ID, m.Status)
		}
		select {
		case <-wctx.Done():
			return m.ID, m.Status, fmt.Errorf("message %s still %s after %s", m.ID, m.Status, k.o.Wait)
		case <-tick.C:
		}
		if _, err := k.api(ctx, http.MethodGet, "/v1/scheduled-messages/"+m.ID, nil, &m); err != nil {
			return m.ID, m.Status, err
		}
	}
	return m.ID, m.Status, nil
}

// failEvents answers the engine's next events frame with an events_ack error
// (nothing stored) and returns the check, run later, that the engine sent
// those events again, with the same ids.
func (k *kit) failEvents(ctx context.Context) func() Check {
	const name = "resend after an ack error"
	if !k.announced("send") {
		return func() Check {
			return Check{Name: name, Status: Skip, Detail: "send not announced: no events to provoke"}
		}
	}
	from := k.j.len()
	k.proxy.failNextEvents()
	k.bg.Add(1)
	go func() {
		defer k.bg.Done()
		_, _, _ = k.sendThroughAPI(ctx, "conformance kit: an ack error")
	}()
	wctx, cancel := k.within(ctx)
	defer cancel()
	failed, at, err := k.j.wait(wctx, from, func(e entry) bool {
		return e.kind == entryFrame && !e.toServer && e.head.Type == remote.FrameEventsAck && e.head.Error != nil && e.head.Error.Code == "unavailable"
	})
	if err != nil {
		return func() Check { return fail(name, "the engine reported no events to fail within %s", k.o.Wait) }
	}
	var ids []string
	for _, e := range k.j.snapshot()[:at] {
		if e.toServer && e.head.Type == remote.FrameEvents && e.head.ID == failed.head.ID {
			for _, ev := range e.head.Events {
				ids = append(ids, ev.ID)
			}
		}
	}
	return func() Check {
		if len(ids) == 0 {
			return fail(name, "the failed events frame %s carried no event ids", failed.head.ID)
		}
		wctx, cancel := k.within(ctx)
		defer cancel()
		again, _, err := k.j.wait(wctx, at, func(e entry) bool {
			return e.toServer && e.head.Type == remote.FrameEvents && slices.ContainsFunc(e.head.Events, func(ev eventHead) bool { return ev.ID == ids[0] })
		})
		if err != nil {
			return fail(name, "event %s of the frame acked with an error was not sent again", ids[0])
		}
		return pass(name, "event %s sent again %s later", ids[0], again.at.Sub(failed.at).Round(time.Millisecond))
	}
}

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

// checkEvents: every events frame is within maxBatch and was stored whole:
// acked without rejected events.
func (k *kit) checkEvents() Check {
	const name = "events"
	frames, events := 0, 0
	acked := map[string]entry{}
	for _, e := range k.j.snapshot() {
		if e.kind == entryFrame && !e.toServer && e.head.Type == remote.FrameEventsAck {
			acked[fmt.Sprint(e.link, e.head.ID)] = e
		}
	}
	for _, e := range k.j.snapshot() {
		if e.kind != entryFrame || !e.toServer || e.head.Type != remote.FrameEvents {
			continue
		}
		frames++
		events += len(e.head.Events)
		if k.maxBatch > 0 && len(e.head.Events) > k.maxBatch {
			return fail(name, "frame %s carries %d events; maxBatch is %d", e.head.ID, len(e.head.Events), k.maxBatch)
		}
		ack, ok := acked[fmt.Sprint(e.link, e.head.ID)]
		if !ok {
			continue // still in flight, or its connection ended first
		}
		if len(ack.head.Rejected) > 0 {
			r := ack.head.Rejected[0]
			return fail(name, "frame %s: %d events refused, the first (index %d): %s", e.head.ID, len(ack.head.Rejected), r.Index, r.Reason)
		}
		if ack.head.Error != nil && ack.head.Error.Code != "unavailable" {
			return fail(name, "frame %s was not stored: %s %s", e.head.ID, ack.head.Error.Code, ack.head.Error.Message)
		}
	}
	if frames == 0 {
		return Check{Name: name, Status: Skip, Detail: "the engine reported no events"}
	}
	return pass(name, "%d events in %d frames, every one stored", events, frames)
}

// checkState: state frames the engine sent were applied.
func (k *kit) checkState() Check {
	const name = "state"
	n := 0
	for _, e := range k.j.snapshot() {
		if e.kind != entryFrame {
			continue
		}
		if e.toServer && e.head.Type == remote.FrameState {
			n++
		}
		if !e.toServer && e.head.Type == remote.FrameStateAck && e.head.Error != nil {
			return fail(name, "state %s was not applied: %s %s", e.head.ID, e.head.Error.Code, e.head.Error.Message)
		}
	}
	if n == 0 {
		return Check{Name: name, Status: Skip, Detail: "the engine reported no state"}
	}
	return pass(name, "%d state frames, every one applied", n)
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

// checkFrames: every frame the engine sent validates against the schema, its
// replies' results against result.<method>, and none is over maxFrame.
func (k *kit) checkFrames() Check {
	const name = "frames"
	methods := map[string]string{}
	n := 0
	var bad []string
	for _, e := range k.j.snapshot() {
		if e.kind != entryFrame {
			continue
		}
		if !e.toServer {
			if e.head.Type == remote.FrameCommand {
				methods[e.head.ID] = e.head.Method
			}
			continue
		}
		n++
		if k.maxFrame > 0 && int64(len(e.raw)) > k.maxFrame {
			bad = append(bad, fmt.Sprintf("a %s frame of %d bytes (maxFrame %d)", e.head.Type, len(e.raw), k.maxFrame))
		}
		if err := k.v.Frame(e.raw); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", clip(string(e.raw), 100), oneLine(err)))
			continue
		}
		if m := methods[e.head.ID]; e.head.Type == remote.FrameReply && remote.MethodCapability(m) != "" && e.head.Result != nil {
			if err := k.v.Def("result."+m, e.head.Result); err != nil {
				bad = append(bad, fmt.Sprintf("result of %s %s: %v", m, clip(string(e.head.Result), 80), oneLine(err)))
			}
		}
	}
	if len(bad) > 0 {
		return fail(name, "%d of %d frames off the schema; first: %s", len(bad), n, bad[0])
	}
	return pass(name, "%d frames from the engine, every one valid", n)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
