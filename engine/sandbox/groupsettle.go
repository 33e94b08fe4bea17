package sandbox

// The network's clock and its simulated group changes: members act as their
// plans come due (SettleGroups, RunGroups), and a test or the sandbox API makes
// a member change a group (SimulateGroupChange).

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/sandboxgroup"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/viewer"
)

// groupBatch bounds the groups one SettleGroups pass settles.
const groupBatch = 100

// SettleGroups makes the members of every group whose plans or turns are due by
// now act, and returns how many groups it settled. What they did is reported
// through the sink as the network's events.
func (n *Network) SettleGroups(ctx context.Context, now time.Time) (int, error) {
	rows, err := n.client.SandboxGroup.Query().Where(sandboxgroup.NextDueAtLTE(now)).
		Order(ent.Asc(sandboxgroup.FieldNextDueAt)).Limit(groupBatch).All(viewer.SystemContext(ctx))
	if err != nil {
		return 0, err
	}
	var firstErr error
	for _, row := range rows {
		e := n.Engine(row.WorkspaceID)
		if err := e.change(ctx, row.GroupJid, now, nil); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return len(rows), firstErr
}

// RunGroups settles the network's groups as their members' plans and turns
// come due, until ctx is done: every p.Min while there are some; when there
// are none, a doubling poll up to p.Max, or, with p.Sweep set (a wake.Listener
// passes every replica's writes of groups to GroupsWakeChannel), until the
// next group is due, at most p.Sweep. RunGroups fills in p.Wake and p.Due.
func (n *Network) RunGroups(ctx context.Context, p poll.Pace) {
	p.Wake, p.Due = n.groupsWakeup(), n.nextGroup
	poll.Run(ctx, p, func(ctx context.Context) poll.Outcome {
		settled, err := n.SettleGroups(context.WithoutCancel(ctx), time.Now())
		if err != nil && ctx.Err() == nil {
			slog.Warn("sandbox: settling groups failed; retrying", "err", err)
		}
		switch {
		case settled > 0:
			return poll.Found
		case err != nil:
			return poll.Failed
		}
		return poll.Idle
	})
}

// GroupsWakeChannel is the channel that wakes RunGroups, for a wake.Listener
// to signal.
func (n *Network) GroupsWakeChannel() chan<- struct{} { return n.groupsWakeup() }

// groupsWakeup is the channel that wakes RunGroups, made on first use.
func (n *Network) groupsWakeup() chan struct{} {
	n.groupsOnce.Do(func() { n.groupsWake = make(chan struct{}, 1) })
	return n.groupsWake
}

// nextGroup is when the earliest group due after now is; the zero time when
// there is none.
func (n *Network) nextGroup(ctx context.Context, since time.Time) (time.Time, error) {
	rows, err := n.client.SandboxGroup.Query().Where(sandboxgroup.NextDueAtGT(since)).
		Order(ent.Asc(sandboxgroup.FieldNextDueAt)).Limit(1).Select(sandboxgroup.FieldNextDueAt).All(viewer.SystemContext(ctx))
	if err != nil || len(rows) == 0 || rows[0].NextDueAt == nil {
		return time.Time{}, err
	}
	return *rows[0].NextDueAt, nil
}

// SimulateGroupChange makes the network report a change of a group as if a
// member made it. A group the network knows changes with it (participants join,
// leave or change role, the subject or description changes), so that what it
// reports and what it holds stay one; a change of a group it does not know is
// reported as it is.
func (e *Engine) SimulateGroupChange(ctx context.Context, c engine.GroupChange) error {
	err := e.change(ctx, c.GroupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		c.Me = w.me
		for _, p := range c.Participants {
			i := g.find(p)
			switch c.Action {
			case "added", "joined_via_link":
				if i < 0 {
					g.Participants = append(g.Participants, engine.Participant{ID: p})
				}
			case "left", "kicked":
				g.remove(p)
			case "admin_changed":
				if i >= 0 && !g.Participants[i].IsSuperAdmin {
					g.Participants[i].IsAdmin = c.Value != engine.AdminDemoted
				}
			}
		}
		switch c.Action {
		case "name_changed":
			g.Name = c.Value
		case "description_changed":
			g.Description = c.Value
		case engine.GroupJoinRequest:
			for _, p := range c.Participants {
				g.addRequest(p, now)
			}
		case engine.GroupJoinApprovalChanged:
			if c.JoinApproval != nil {
				g.JoinApproval = *c.JoinApproval
			}
		case engine.GroupSettingsChanged:
			if c.Announce != nil {
				g.Announce = *c.Announce
			}
			if c.Restrict != nil {
				g.Restrict = *c.Restrict
			}
		}
		return []engine.GroupChange{c}, nil
	})
	if errors.Is(err, engine.ErrNotFound) {
		return e.Simulate(ctx, engine.Event{Type: engine.EventGroup, Group: &c})
	}
	return err
}
