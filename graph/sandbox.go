package graph

import (
	"context"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
)

// simulator is an engine that can report made-up events: the sandbox, which
// also changes the groups it keeps with the group changes it is told to report.
type simulator interface {
	Simulate(ctx context.Context, ev engine.Event) error
	SimulateGroupChange(ctx context.Context, c engine.GroupChange) error
}

// simulateGroupChange is the use case behind simulateGroupChange.
func (r *Resolver) simulateGroupChange(ctx context.Context, in model.GroupChangeInput) (bool, error) {
	var p switchboard.Problems
	if !IsJID(in.GroupID) || !strings.HasSuffix(in.GroupID, "@g.us") {
		p.Add("groupId", "invalid_string", "groupId must be a group id (<digits>[-<digits>]@g.us)")
	}
	if _, ok := inbox.GroupEvents[in.Action]; !ok {
		actions := make([]string, 0, len(inbox.GroupEvents))
		for a := range inbox.GroupEvents {
			actions = append(actions, a)
		}
		slices.Sort(actions)
		p.Add("action", "invalid_enum_value", "action must be one of %s", strings.Join(actions, ", "))
	}
	for i, jid := range in.Participants {
		if !IsJID(jid) {
			p.Add("participants."+itoa(i), "invalid_string", "participants must be chat ids")
		}
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return false, err
	}
	eng, err := r.Engines.Pick(ctx, viewerWorkspace(ctx))
	if err != nil {
		return false, switchboard.Errorf(switchboard.ENOENGINE, "No engine is connected for this account.")
	}
	sim, ok := eng.(simulator)
	if !ok {
		return false, switchboard.Errorf(switchboard.ECONFLICT, "The connected engine is not a sandbox; it reports real events only.")
	}
	err = sim.SimulateGroupChange(ctx, engine.GroupChange{
		GroupID: in.GroupID, Action: in.Action, Participants: in.Participants, By: deref(in.By), Value: deref(in.Value),
	})
	return err == nil, err
}
