package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/viewer"
)

// What the account does to groups (engine.GroupAdmin): create, update, members,
// admins, leave, picture, each under the network's rules.

// mayPost says whether the account may send to the group jid now:
// engine.ErrRejected when the group's rules refuse it, nil when they allow it
// or the network does not know the group.
func (e *Engine) mayPost(ctx context.Context, jid string) error {
	g, me, err := e.groupOf(ctx, jid)
	switch {
	case err != nil || g == nil:
		return err
	case g.find(me) < 0:
		return fmt.Errorf("%w: the account is not a participant of %s", engine.ErrRejected, jid)
	case g.Announce && !g.isAdmin(me):
		return fmt.Errorf("%w: only admins may send to %s", engine.ErrRejected, jid)
	}
	return nil
}

// groupOf is the state of the group jid as the network knows it (nil when it
// does not), and the account's own chat id.
func (e *Engine) groupOf(ctx context.Context, jid string) (*groupState, string, error) {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	w, _, err := e.world(ctx)
	if err != nil {
		return nil, "", err
	}
	row, err := e.net.client.SandboxGroup.Get(ctx, groupRowID(e.workspaceID, jid))
	switch {
	case ent.IsNotFound(err):
		i, ok := w.index[jid]
		if !ok || w.chats[i].state.Kind != engine.ChatGroup {
			return nil, w.me, nil
		}
		return w.groupState(i), w.me, nil
	case err != nil:
		return nil, "", err
	}
	g := new(groupState)
	if err := json.Unmarshal(row.State, g); err != nil {
		return nil, "", fmt.Errorf("sandbox: group %s: %w", jid, err)
	}
	return g, w.me, nil
}

// mustAdmin checks that the account is in the group, and an admin when admin.
func mustAdmin(w *world, g *groupState, admin bool) error {
	if g.find(w.me) < 0 {
		return &engine.GroupRuleError{Rule: engine.RuleNotMember, Message: "The account is not a participant of the group."}
	}
	if admin && !g.isAdmin(w.me) {
		return &engine.GroupRuleError{Rule: engine.RuleNotAdmin, Message: "Only an admin of the group can do this; the account is not one."}
	}
	return nil
}

// CreateGroup implements engine.GroupAdmin.
func (e *Engine) CreateGroup(ctx context.Context, name string, participants []string) (string, []engine.Added, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	w, _, err := e.world(ctx)
	if err != nil {
		return "", nil, err
	}
	now := time.Now().UTC()
	sum := sha256.Sum256([]byte(e.workspaceID + switchboard.RandomToken(8)))
	id := fmt.Sprintf("120363%012d@g.us", binary.BigEndian.Uint64(sum[:8])%1e12)
	g := &groupState{ID: id, Name: name, Owner: w.me, CreatedAt: now.Truncate(time.Second),
		Participants: []engine.Participant{{ID: w.me, IsAdmin: true, IsSuperAdmin: true}}}
	res := e.admit(w, g, participants, now)
	created := g.chatState()
	changes := []engine.GroupChange{{GroupID: id, Action: engine.GroupCreated, By: w.me, Me: w.me, Chat: &created}}
	if ids := addedIDs(res); len(ids) > 0 {
		changes = append(changes, engine.GroupChange{GroupID: id, Action: "added", Participants: ids, By: w.me, Me: w.me})
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return "", nil, err
	}
	tx, err := e.net.client.Tx(ctx)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = tx.Rollback() }()
	err = tx.SandboxGroup.Create().SetID(groupRowID(e.workspaceID, id)).SetGroupJid(id).SetState(raw).
		SetNillableNextDueAt(g.nextDue(w)).Exec(ctx)
	if err != nil {
		return "", nil, err
	}
	return id, res, e.commitChanges(ctx, tx, changes)
}

// UpdateGroup implements engine.GroupAdmin: the settings need an admin; the
// subject and description need one when the group is restricted.
func (e *Engine) UpdateGroup(ctx context.Context, groupID string, u engine.GroupUpdate) error {
	return e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		settings := u.Announce != nil || u.Restrict != nil
		if err := mustAdmin(w, g, settings || g.Restrict); err != nil {
			return nil, err
		}
		var out []engine.GroupChange
		base := engine.GroupChange{GroupID: g.ID, By: w.me, Me: w.me}
		if u.Name != nil && *u.Name != g.Name {
			g.Name = *u.Name
			c := base
			c.Action, c.Value = "name_changed", g.Name
			out = append(out, c)
		}
		if u.Description != nil && *u.Description != g.Description {
			g.Description = *u.Description
			c := base
			c.Action, c.Value = "description_changed", g.Description
			out = append(out, c)
		}
		if (u.Announce != nil && *u.Announce != g.Announce) || (u.Restrict != nil && *u.Restrict != g.Restrict) {
			if u.Announce != nil {
				g.Announce = *u.Announce
			}
			if u.Restrict != nil {
				g.Restrict = *u.Restrict
			}
			c := base
			c.Action, c.Announce, c.Restrict = engine.GroupSettingsChanged, &g.Announce, &g.Restrict
			out = append(out, c)
		}
		return out, nil
	})
}

// AddParticipants implements engine.GroupAdmin: an admin adds; a participant
// already in the group fails the whole call.
func (e *Engine) AddParticipants(ctx context.Context, groupID string, participants []string) ([]engine.Added, error) {
	var res []engine.Added
	err := e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		for _, p := range participants {
			if g.find(p) >= 0 {
				return nil, &engine.GroupRuleError{Rule: engine.RuleAlreadyMember, Participant: p, Message: p + " is a participant of the group already."}
			}
		}
		res = e.admit(w, g, participants, now)
		if ids := addedIDs(res); len(ids) > 0 {
			return []engine.GroupChange{{GroupID: g.ID, Action: "added", Participants: ids, By: w.me, Me: w.me}}, nil
		}
		return nil, nil
	})
	return res, err
}

// target checks that participant p is another participant of the group.
func target(w *world, g *groupState, p string) error {
	if p == w.me {
		return &engine.GroupRuleError{Rule: engine.RuleSelf, Participant: p, Message: "This is the account itself; leave the group with members/me instead."}
	}
	if g.find(p) < 0 {
		return &engine.GroupRuleError{Rule: engine.RuleNotParticipant, Participant: p, Message: p + " is not a participant of the group."}
	}
	return nil
}

// RemoveParticipant implements engine.GroupAdmin: an admin removes anyone but the
// creator.
func (e *Engine) RemoveParticipant(ctx context.Context, groupID, participant string) error {
	return e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		if err := target(w, g, participant); err != nil {
			return nil, err
		}
		if g.Participants[g.find(participant)].IsSuperAdmin {
			return nil, &engine.GroupRuleError{Rule: engine.RuleCreator, Participant: participant, Message: participant + " created the group and cannot be removed."}
		}
		g.remove(participant)
		return []engine.GroupChange{{GroupID: g.ID, Action: "kicked", Participants: []string{participant}, By: w.me, Me: w.me}}, nil
	})
}

// SetAdmin implements engine.GroupAdmin: an admin promotes a member or demotes
// an admin other than the creator.
func (e *Engine) SetAdmin(ctx context.Context, groupID, participant string, admin bool) error {
	return e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		if err := target(w, g, participant); err != nil {
			return nil, err
		}
		p := &g.Participants[g.find(participant)]
		value := engine.AdminPromoted
		switch {
		case admin && (p.IsAdmin || p.IsSuperAdmin):
			return nil, &engine.GroupRuleError{Rule: engine.RuleAlreadyAdmin, Participant: participant, Message: participant + " is an admin already."}
		case !admin && p.IsSuperAdmin:
			return nil, &engine.GroupRuleError{Rule: engine.RuleCreator, Participant: participant, Message: participant + " created the group and cannot be demoted."}
		case !admin && !p.IsAdmin:
			return nil, &engine.GroupRuleError{Rule: engine.RuleParticipantNotAdm, Participant: participant, Message: participant + " is not an admin."}
		case admin:
			p.IsAdmin = true
			switch digits := recipientDigits(participant); {
			case strings.HasSuffix(digits, "2222"):
				g.Plans = append(g.Plans, plan{now.Add(e.net.delay), actRename, participant},
					plan{now.Add(2 * e.net.delay), actDescribe, participant}, plan{now.Add(3 * e.net.delay), actPin, participant})
			case strings.HasSuffix(digits, "5555"):
				g.Plans = append(g.Plans, plan{now.Add(e.net.delay), actPromote, participant}, plan{now.Add(2 * e.net.delay), actKick, participant})
			}
		default:
			p.IsAdmin, value = false, engine.AdminDemoted
		}
		return []engine.GroupChange{{GroupID: g.ID, Action: "admin_changed", Participants: []string{participant}, By: w.me, Me: w.me, Value: value}}, nil
	})
}

// LeaveGroup implements engine.GroupAdmin. When the account was the last admin,
// the network makes the longest-standing member an admin.
func (e *Engine) LeaveGroup(ctx context.Context, groupID string) error {
	return e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		if g.find(w.me) < 0 {
			return nil, nil // left before: nothing to do
		}
		g.remove(w.me)
		out := []engine.GroupChange{{GroupID: g.ID, Action: "left", Participants: []string{w.me}, By: w.me, Me: w.me}}
		if len(g.Participants) > 0 && !slices.ContainsFunc(g.Participants, func(p engine.Participant) bool { return p.IsAdmin || p.IsSuperAdmin }) {
			g.Participants[0].IsAdmin = true
			out = append(out, engine.GroupChange{GroupID: g.ID, Action: "admin_changed", Participants: []string{g.Participants[0].ID},
				Me: w.me, Value: engine.AdminPromoted})
		}
		return out, nil
	})
}

// SetGroupPicture implements engine.GroupAdmin: any member of an unrestricted
// group, only an admin of a restricted one. The network keeps the picture's
// digest; no event reports a new picture.
func (e *Engine) SetGroupPicture(ctx context.Context, groupID string, picture engine.Media) error {
	return e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, g.Restrict); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(picture.Data)
		g.Picture = hex.EncodeToString(sum[:])
		return nil, nil
	})
}

// Me is the account's own chat id in the workspace's sandbox.
func (e *Engine) Me(ctx context.Context) (string, error) {
	w, _, err := e.world(ctx)
	if err != nil {
		return "", err
	}
	return w.me, nil
}
