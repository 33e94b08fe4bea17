package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent/sandboxgroup"
	"github.com/switchboardhq/switchboard/viewer"
)

// The rest of a group's lifecycle in the sandbox network (docs/groups.md, "The
// sandbox"): invite codes derived from the workspace, the group and how often
// the code was reset; groups outside the account's world behind codes that
// start with SBX; join requests that two world contacts make once a group
// requires approval; communities among the world's groups.

var (
	_ engine.GroupInviter   = (*Engine)(nil)
	_ engine.GroupRequester = (*Engine)(nil)
	_ engine.Communities    = (*Engine)(nil)
)

// communityEvery: the world's groups come in runs of this many, the first of
// each run a community whose sub-groups are the others (the first of them its
// default, announcement group).
const communityEvery = 5

// outsideCodeRE matches the invite codes of groups outside the world.
var outsideCodeRE = regexp.MustCompile(`^SBX[A-Za-z0-9]{3,61}$`)

// inviteCode is a group's invite code after resets resets: 22 letters and
// digits derived from the workspace, the group and resets.
func inviteCode(workspaceID, groupID string, resets int) string {
	const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256(fmt.Appendf(nil, "invite|%s|%s|%d", workspaceID, groupID, resets))
	b := make([]byte, 22)
	for i := range b {
		b[i] = abc[int(sum[i])%len(abc)]
	}
	return string(b)
}

// outsideGroupID is the id of the group outside the world an SBX code leads to.
func outsideGroupID(workspaceID, code string) string {
	sum := sha256.Sum256([]byte("outside|" + workspaceID + "|" + code))
	return fmt.Sprintf("120363%012d@g.us", binary.BigEndian.Uint64(sum[:8])%1e12)
}

// readGroup is the world and the group jid as the network holds it now (its
// members' plans settled), or engine.ErrNotFound.
func (e *Engine) readGroup(ctx context.Context, jid string) (*world, *groupState, error) {
	var w *world
	var g *groupState
	err := e.change(ctx, jid, time.Now(), func(ww *world, gg *groupState, _ time.Time) ([]engine.GroupChange, error) {
		w, g = ww, gg
		return nil, nil
	})
	return w, g, err
}

// groupByCode finds the group an invite code leads to: a group the network
// holds (or a world group) whose current code it is, else the group outside
// the world of an SBX code (outside: not held yet); "" when none.
func (e *Engine) groupByCode(ctx context.Context, w *world, code string) (jid string, outside bool, err error) {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	rows, err := e.net.client.SandboxGroup.Query().Where(sandboxgroup.WorkspaceID(e.workspaceID)).All(ctx)
	if err != nil {
		return "", false, err
	}
	held := map[string]bool{}
	for _, row := range rows {
		held[row.GroupJid] = true
		var g groupState
		if json.Unmarshal(row.State, &g) == nil && inviteCode(e.workspaceID, g.ID, g.InviteResets) == code {
			return g.ID, false, nil
		}
	}
	for _, i := range worldGroups() {
		id := w.chats[i].state.ID
		if !held[id] && inviteCode(e.workspaceID, id, 0) == code {
			return id, false, nil
		}
	}
	if outsideCodeRE.MatchString(code) {
		id := outsideGroupID(e.workspaceID, code)
		return id, !held[id], nil
	}
	return "", false, nil
}

// outsideGroup is the group outside the world an SBX code leads to: named
// after the code, created by a world contact with two more of them.
func outsideGroup(w *world, id, code string) *groupState {
	sum := sha256.Sum256([]byte(id))
	k := int(binary.BigEndian.Uint32(sum[:4]) % WorldContacts)
	g := &groupState{ID: id, Name: "Sandbox group " + code, Description: "A group outside the sandbox's world, joined by its invite code.",
		Owner: w.contacts[k].ID, CreatedAt: w.anchor.Truncate(time.Second)}
	g.Participants = append(g.Participants, engine.Participant{ID: w.contacts[k].ID, IsAdmin: true, IsSuperAdmin: true},
		engine.Participant{ID: w.contacts[(k+1)%WorldContacts].ID}, engine.Participant{ID: w.contacts[(k+2)%WorldContacts].ID})
	return g
}

// GroupInviteCode implements engine.GroupInviter: admins only.
func (e *Engine) GroupInviteCode(ctx context.Context, groupID string, reset bool) (string, error) {
	var code string
	err := e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, _ time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		if reset {
			g.InviteResets++
		}
		code = inviteCode(e.workspaceID, g.ID, g.InviteResets)
		return nil, nil
	})
	return code, err
}

// GroupInvitePreview implements engine.GroupInviter.
func (e *Engine) GroupInvitePreview(ctx context.Context, code string) (engine.GroupPreview, error) {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	w, _, err := e.world(ctx)
	if err != nil {
		return engine.GroupPreview{}, err
	}
	jid, outside, err := e.groupByCode(ctx, w, code)
	if err != nil || jid == "" {
		return engine.GroupPreview{}, orNotFound(err)
	}
	g := outsideGroup(w, jid, code)
	if !outside {
		if _, g, err = e.readGroup(ctx, jid); err != nil {
			return engine.GroupPreview{}, err
		}
	}
	created := g.CreatedAt.UTC()
	return engine.GroupPreview{GroupID: g.ID, Name: g.Name, Description: g.Description, ParticipantCount: len(g.Participants),
		Owner: g.Owner, CreatedAt: &created, JoinApproval: g.JoinApproval, IsCommunity: community(g).IsCommunity}, nil
}

func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: no group has this invite code", engine.ErrNotFound)
}

// JoinGroup implements engine.GroupInviter: the account joins at once (the
// sandbox's admins need not approve it); the group is reported whole
// (GroupCreated), then the join (joined_via_link).
func (e *Engine) JoinGroup(ctx context.Context, code string) (string, error) {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	w, _, err := e.world(ctx)
	if err != nil {
		return "", err
	}
	jid, outside, err := e.groupByCode(ctx, w, code)
	if err != nil || jid == "" {
		return "", orNotFound(err)
	}
	join := func(g *groupState) []engine.GroupChange {
		g.Participants = append(g.Participants, engine.Participant{ID: w.me})
		g.Requests = slices.DeleteFunc(g.Requests, func(r engine.JoinRequest) bool { return r.ChatID == w.me })
		state := g.chatState()
		return []engine.GroupChange{{GroupID: g.ID, Action: engine.GroupCreated, By: w.me, Me: w.me, Chat: &state},
			{GroupID: g.ID, Action: "joined_via_link", Participants: []string{w.me}, By: w.me, Me: w.me}}
	}
	if outside {
		g := outsideGroup(w, jid, code)
		changes := join(g)
		raw, err := json.Marshal(g)
		if err != nil {
			return "", err
		}
		tx, err := e.net.client.Tx(ctx)
		if err != nil {
			return "", err
		}
		defer func() { _ = tx.Rollback() }()
		if err := tx.SandboxGroup.Create().SetID(groupRowID(e.workspaceID, jid)).SetGroupJid(jid).SetState(raw).Exec(ctx); err != nil {
			return "", err
		}
		return jid, e.commitChanges(ctx, tx, changes)
	}
	return jid, e.change(ctx, jid, time.Now(), func(w *world, g *groupState, _ time.Time) ([]engine.GroupChange, error) {
		if g.find(w.me) >= 0 {
			return nil, &engine.GroupRuleError{Rule: engine.RuleAlreadyMember, Participant: w.me, Message: "The account is a participant of the group already."}
		}
		if len(g.Participants) >= MaxGroupSize {
			return nil, fmt.Errorf("%w: the group holds %d participants already", engine.ErrRejected, MaxGroupSize)
		}
		return join(g), nil
	})
}

// requested says whether p asked to join the group and waits for an answer.
func (g *groupState) requested(p string) bool {
	return slices.ContainsFunc(g.Requests, func(r engine.JoinRequest) bool { return r.ChatID == p })
}

// addRequest records who asking to join the group at, unless who is in it or
// asked already; it says whether it did.
func (g *groupState) addRequest(who string, at time.Time) bool {
	if g.find(who) >= 0 || g.requested(who) {
		return false
	}
	g.Requests = append(g.Requests, engine.JoinRequest{ChatID: who, RequestedAt: at.UTC().Truncate(time.Second)})
	return true
}

// request is who asking to join the group at: a join_request change, none when
// the group no longer requires approval or who is in it or asked already.
func (g *groupState) request(w *world, who string, at time.Time) []engine.GroupChange {
	if !g.JoinApproval || !g.addRequest(who, at) {
		return nil
	}
	return []engine.GroupChange{{GroupID: g.ID, Action: engine.GroupJoinRequest, Participants: []string{who}, By: who, Me: w.me}}
}

// GroupRequests implements engine.GroupRequester: admins only.
func (e *Engine) GroupRequests(ctx context.Context, groupID string) ([]engine.JoinRequest, error) {
	var out []engine.JoinRequest
	err := e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, _ time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		out = slices.Clone(g.Requests)
		return nil, nil
	})
	return out, err
}

// AnswerGroupRequests implements engine.GroupRequester: admins only; an
// approved participant is added (an added change by the account), a rejected
// one forgotten; a participant with no pending request is not_requested.
func (e *Engine) AnswerGroupRequests(ctx context.Context, groupID string, participants []string, approve bool) ([]engine.Added, error) {
	var res []engine.Added
	err := e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, _ time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		res = make([]engine.Added, len(participants))
		var added []string
		for i, p := range participants {
			res[i] = engine.Added{Participant: p}
			if !g.requested(p) {
				res[i].Code, res[i].Message = "not_requested", p+" has no pending request to join the group."
				continue
			}
			g.Requests = slices.DeleteFunc(g.Requests, func(r engine.JoinRequest) bool { return r.ChatID == p })
			res[i].Added = true
			if approve && g.find(p) < 0 {
				g.Participants = append(g.Participants, engine.Participant{ID: p})
				added = append(added, p)
			}
		}
		if len(added) == 0 {
			return nil, nil
		}
		return []engine.GroupChange{{GroupID: g.ID, Action: "added", Participants: added, By: w.me, Me: w.me}}, nil
	})
	return res, err
}

// SetGroupJoinApproval implements engine.GroupRequester: admins only. Turning
// it on has the first two world contacts outside the group ask to join, 1x
// and 2x the ack delay later; turning it off drops the pending requests.
func (e *Engine) SetGroupJoinApproval(ctx context.Context, groupID string, on bool) error {
	return e.change(ctx, groupID, time.Now(), func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error) {
		if err := mustAdmin(w, g, true); err != nil {
			return nil, err
		}
		if g.JoinApproval == on {
			return nil, nil
		}
		g.JoinApproval = on
		if !on {
			g.Requests = nil
		} else {
			n := 0
			for _, c := range w.contacts[:WorldContacts] {
				if n == 2 {
					break
				}
				if g.find(c.ID) < 0 {
					n++
					g.Plans = append(g.Plans, plan{Due: now.Add(time.Duration(n) * e.net.delay), Act: actRequest, Who: c.ID})
				}
			}
		}
		v := on
		return []engine.GroupChange{{GroupID: g.ID, Action: engine.GroupJoinApprovalChanged, JoinApproval: &v, By: w.me, Me: w.me}}, nil
	})
}

// community is a group's place among the world's communities (communityEvery).
func community(g *groupState) engine.Community {
	out := engine.Community{GroupID: g.ID, SubGroups: []engine.SubGroup{}}
	if g.World == 0 {
		return out
	}
	k := g.World - 1
	out.IsCommunity = k%communityEvery == 0 && k+1 < WorldGroups
	return out
}

// Community implements engine.Communities: of the world's groups, every fifth
// (the 1st, 6th, ...) is a community whose sub-groups are the four after it;
// the first of them is its default group. Other groups are in none.
func (e *Engine) Community(ctx context.Context, groupID string) (engine.Community, error) {
	w, g, err := e.readGroup(ctx, groupID)
	if err != nil {
		return engine.Community{}, err
	}
	out := community(g)
	if g.World == 0 {
		return out, nil
	}
	k := g.World - 1
	if !out.IsCommunity {
		out.ParentGroupID = w.chats[firstGroup+k-k%communityEvery].state.ID
		return out, nil
	}
	for j := k + 1; j < k+communityEvery && j < WorldGroups; j++ {
		s := w.chats[firstGroup+j].state
		out.SubGroups = append(out.SubGroups, engine.SubGroup{GroupID: s.ID, Name: s.Name, IsDefault: j == k+1})
	}
	return out, nil
}
