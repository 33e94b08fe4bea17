package inbox

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// CallHandler decides, as an incoming call arrives and before it is stored,
// what to do with it: it may reject the call (and answer the caller) and sets
// the event's Call.Rejected when it did. A call is worth rejecting only while it
// rings, so the handler runs once, on arrival, and is not retried.
type CallHandler func(ctx context.Context, ev *engine.Event)

// callTimeout bounds what a CallHandler may take of an engine's event handler.
const callTimeout = 10 * time.Second

// answerCalls runs h on the call events of evs, on a copy of evs when there
// is one (the caller's slice is left as it is).
func answerCalls(ctx context.Context, h CallHandler, evs []engine.Event) []engine.Event {
	if h == nil {
		return evs
	}
	copied := false
	for i := range evs {
		if evs[i].Type != engine.EventCall || evs[i].Call == nil {
			continue
		}
		if !copied {
			evs, copied = slices.Clone(evs), true
		}
		c := *evs[i].Call
		evs[i].Call = &c
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		h(cctx, &evs[i])
		if cctx.Err() != nil {
			slog.Warn("inbox: answering a call took too long", "engine", evs[i].EngineID, "call", evs[i].Call.ID)
		}
		cancel()
	}
	return evs
}

// CallPayload is the data of a call.received event (docs/calls.md).
func CallPayload(ev engine.Event) map[string]any {
	c := ev.Call
	out := map[string]any{"id": c.ID, "engineId": ev.EngineID, "from": c.From, "video": c.Video,
		"group": c.Group, "rejected": c.Rejected, "at": ev.At.UTC()}
	if c.GroupID != "" {
		out["groupId"] = c.GroupID
	}
	return out
}
