package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// The checks of what the engine reports: a send through the API and its acks, resending
// after an ack error, the events and state frames, and every frame against the schema.

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
