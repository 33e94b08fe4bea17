package graph

import (
	"context"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/viewer"
)

// maxCallReply bounds the message a rejected caller is answered with.
const maxCallReply = 4096

// callReplyTimeout bounds the send of the answer to a rejected caller.
const callReplyTimeout = time.Minute

// updateEngineCalls is the use case behind updateEngineCalls (PATCH
// /v1/engines/{id}/calls).
func (r *Resolver) updateEngineCalls(ctx context.Context, id string, in model.EngineCallsInput) (*model.Engine, error) {
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	if in.RejectCalls == nil && in.RejectCallsMessage == nil {
		p.Add("body", "too_small", "Give at least one of rejectCalls, rejectCallsMessage")
	}
	if m := in.RejectCallsMessage; m != nil && utf8.RuneCountInString(*m) > maxCallReply {
		p.Add("rejectCallsMessage", "too_big", "rejectCallsMessage must be at most %d characters", maxCallReply)
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	u := row.Update()
	if in.RejectCalls != nil {
		u.SetRejectCalls(*in.RejectCalls)
	}
	if in.RejectCallsMessage != nil {
		u.SetRejectCallsMessage(*in.RejectCallsMessage)
	}
	if _, err := u.Save(ctx); err != nil {
		return nil, err
	}
	return r.engineByID(ctx, row.ID)
}

// answeredCalls remembers the calls this process answered lately, so that a
// call reported twice (an engine retrying its report) is answered once.
var answeredCalls = struct {
	sync.Mutex
	ids map[string]bool
}{ids: map[string]bool{}}

// firstAnswer reports whether the call key was not answered before, and
// remembers it.
func firstAnswer(key string) bool {
	answeredCalls.Lock()
	defer answeredCalls.Unlock()
	if answeredCalls.ids[key] {
		return false
	}
	if len(answeredCalls.ids) >= 4096 {
		clear(answeredCalls.ids)
	}
	answeredCalls.ids[key] = true
	return true
}

// AnswerCall is the inbox's inbox.CallHandler: when the engine a call came
// to rejects calls (its rejectCalls setting) and serves calls, it rejects the
// call, marks it rejected and answers the caller with the engine's message, if
// any, as a message sent through that engine (stored and tracked like any).
func (r *Resolver) AnswerCall(ctx context.Context, ev *engine.Event) {
	ctx = viewer.NewContext(ctx, viewer.ForWorkspace(ev.WorkspaceID))
	row, err := r.Client.Engine.Get(ctx, ev.EngineID)
	if err != nil || !row.RejectCalls {
		return
	}
	if !firstAnswer(ev.EngineID + "|" + ev.Call.ID) {
		ev.Call.Rejected = true
		return
	}
	eng, err := r.Engines.Find(ctx, ev.WorkspaceID, ev.EngineID)
	if err != nil {
		slog.Warn("calls: the engine of a call to reject is gone", "engine", ev.EngineID, "err", err)
		return
	}
	rej, ok := eng.(engine.CallRejecter)
	if !ok || !engine.Serves(eng, "calls") {
		return
	}
	if err := rej.RejectCall(ctx, ev.Call.From, ev.Call.ID); err != nil {
		slog.Warn("calls: rejecting a call failed", "engine", ev.EngineID, "call", ev.Call.ID, "err", err)
		return
	}
	ev.Call.Rejected = true
	if row.RejectCallsMessage == "" {
		return
	}
	text, engineID := row.RejectCallsMessage, ev.EngineID
	go func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callReplyTimeout)
		defer cancel()
		in := model.MessageInput{Type: "text", Text: &text, EngineID: &engineID}
		if _, err := r.sendNow(sctx, ev.Call.From, in, nil, nil); err != nil {
			slog.Warn("calls: answering a rejected caller failed", "engine", engineID, "to", ev.Call.From, "err", err)
		}
	}()
}

// simulateCall is the use case behind simulateCall (POST /v1/sandbox/calls):
// the sandbox engine reports a call from a number, answered as any call.
func (r *Resolver) simulateCall(ctx context.Context, in model.CallInput) (*model.Call, error) {
	from, ok := participantID(in.From)
	if !ok {
		return nil, fieldError(switchboard.EVALIDATION, "from", "invalid_string",
			"from must be a phone number in E.164 form (+15551234567) or a contact id (<digits>@c.us)")
	}
	eng, err := r.actingEngine(ctx, in.EngineID, "", "simulating a call")
	if err != nil {
		return nil, err
	}
	sim, ok := eng.(simulator)
	if !ok {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "The engine %s is not a sandbox; it reports real calls only.", eng.ID())
	}
	id := eng.ID()
	c := &engine.Call{ID: switchboard.NewID("call"), From: from, Video: in.Video != nil && *in.Video, Group: in.Group != nil && *in.Group}
	ev := engine.Event{Type: engine.EventCall, Call: c}
	if err := sim.Simulate(ctx, ev); err != nil {
		return nil, err
	}
	row, err := r.engineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	return &model.Call{ID: c.ID, EngineID: id, From: from, Video: c.Video, Group: c.Group,
		Rejected: row.RejectCalls, At: time.Now().UTC()}, nil
}
