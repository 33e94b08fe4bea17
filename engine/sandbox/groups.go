package sandbox

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/sandboxgroup"
	"github.com/switchboardhq/switchboard/ent/sandboxsend"
	"github.com/switchboardhq/switchboard/viewer"
)

// The sandbox keeps the groups of the network in the database (SandboxGroup): a
// world group is copied there the first time it is touched (or at the first
// history sync), a group the account creates lives only there. The network's
// rules hold for the account (see engine.GroupRuleError), and the other members
// act on their own, deterministically:
//
//   - a participant the account adds whose number ends in 0000 is not on the
//     network (not added); 3333 allows only contacts to add them (not added, an
//     invite is sent) and joins through the invite link 1x the ack delay later;
//     4444 leaves the group 2x later;
//   - a participant the account promotes to admin whose number ends in 2222
//     renames the group 1x later, changes its description 2x later and pins its
//     latest message 3x later; 5555 promotes another member 1x later and removes
//     a member 2x later;
//   - in every group of the world, one member acts every WorldTurnEvery (one
//     group every WorldTurnEvery/WorldGroups): someone joins through the link,
//     leaves, is added, promoted or removed by an admin, or an admin changes the
//     subject or the description or pins a message.
const (
	// WorldTurnEvery is how often each group of the world has its turn to act.
	WorldTurnEvery = 5 * time.Hour
	// worldCatchUp: turns further in the past than this are skipped, not acted
	// out all at once after a long pause.
	worldCatchUp = time.Hour
	// MaxGroupSize is how many participants a group holds at most.
	MaxGroupSize = 1024
)

// The sandbox engine administers groups.
var _ engine.GroupAdmin = (*Engine)(nil)

// groupState is a group as the network holds it.
type groupState struct {
	ID           string               `json:"id"`
	Name         string               `json:"name"`
	Description  string               `json:"description,omitempty"`
	Owner        string               `json:"owner"`
	CreatedAt    time.Time            `json:"createdAt"`
	Announce     bool                 `json:"announce,omitempty"`
	Restrict     bool                 `json:"restrict,omitempty"`
	Participants []engine.Participant `json:"participants"`
	// Picture is the SHA-256 of the group picture's bytes.
	Picture string `json:"picture,omitempty"`
	// World is 1 + the group's place among the world's groups; 0 for a group the
	// account created. Turn is the next of a world group's turns to act.
	World int `json:"world,omitempty"`
	Turn  int `json:"turn,omitempty"`
	// Plans are what members will do, and when.
	Plans []plan `json:"plans,omitempty"`
	// InviteResets counts the resets of the invite code (inviteCode).
	InviteResets int `json:"inviteResets,omitempty"`
	// JoinApproval: joining by the invite code asks the admins first;
	// Requests are the pending requests, oldest first.
	JoinApproval bool                 `json:"joinApproval,omitempty"`
	Requests     []engine.JoinRequest `json:"requests,omitempty"`
}

// plan is something a member of a group will do at Due.
type plan struct {
	Due time.Time `json:"due"`
	Act string    `json:"act"`
	Who string    `json:"who"`
}

// What members do (plan.Act).
const (
	actJoin     = "join_link"
	actLeave    = "leave"
	actAdd      = "add"
	actPromote  = "promote"
	actKick     = "kick"
	actRename   = "rename"
	actDescribe = "describe"
	actPin      = "pin"
	// actRequest: ask to join a group that requires approval.
	actRequest = "request"
)

var worldActs = []string{actJoin, actLeave, actAdd, actPromote, actKick, actRename, actDescribe, actPin}

func (g *groupState) find(id string) int {
	return slices.IndexFunc(g.Participants, func(p engine.Participant) bool { return p.ID == id })
}

func (g *groupState) isAdmin(id string) bool {
	i := g.find(id)
	return i >= 0 && (g.Participants[i].IsAdmin || g.Participants[i].IsSuperAdmin)
}

func (g *groupState) remove(id string) {
	if i := g.find(id); i >= 0 {
		g.Participants = slices.Delete(g.Participants, i, i+1)
	}
}

// chatState is the group as engines report it.
func (g *groupState) chatState() engine.ChatState {
	created := g.CreatedAt
	no := false
	return engine.ChatState{ID: g.ID, Kind: engine.ChatGroup, Name: g.Name, Owner: g.Owner, Description: g.Description,
		CreatedAt: &created, Announce: g.Announce, Restrict: g.Restrict, JoinApproval: g.JoinApproval, Pinned: &no, Archived: &no,
		Participants: slices.Clone(g.Participants)}
}

// firstGroup is the index of the world's first group among its chats.
const firstGroup = 160 + WorldStrangers

// turnAt is when the world's group ordinal has its turn k.
func (w *world) turnAt(ordinal, k int) time.Time {
	return w.anchor.Add(time.Duration(ordinal+1)*(WorldTurnEvery/WorldGroups) + time.Duration(k)*WorldTurnEvery)
}

// nextDue is when the group's members act next; nil when they have nothing to do.
func (g *groupState) nextDue(w *world) *time.Time {
	var next *time.Time
	for _, p := range g.Plans {
		if next == nil || p.Due.Before(*next) {
			d := p.Due
			next = &d
		}
	}
	if g.World > 0 {
		if t := w.turnAt(g.World-1, g.Turn); next == nil || t.Before(*next) {
			next = &t
		}
	}
	return next
}

// worldGroupState is the state of the world's group at chat index i.
func (w *world) groupState(i int) *groupState {
	s := w.chats[i].state
	return &groupState{ID: s.ID, Name: s.Name, Description: s.Description, Owner: s.Owner, CreatedAt: *s.CreatedAt,
		Announce: s.Announce, Restrict: s.Restrict, Participants: slices.Clone(s.Participants), World: i - firstGroup + 1}
}

func groupRowID(workspaceID, jid string) string { return workspaceID + ":" + jid }

// keepWorldGroups copies the world's groups into the network's memory, where
// they start taking their turns; groups copied before are left as they are.
func (e *Engine) keepWorldGroups(ctx context.Context, w *world, indexes ...int) error {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	var creates []*ent.SandboxGroupCreate
	for _, i := range indexes {
		g := w.groupState(i)
		raw, err := json.Marshal(g)
		if err != nil {
			return err
		}
		creates = append(creates, e.net.client.SandboxGroup.Create().SetID(groupRowID(e.workspaceID, g.ID)).
			SetGroupJid(g.ID).SetState(raw).SetNillableNextDueAt(g.nextDue(w)))
	}
	err := e.net.client.SandboxGroup.CreateBulk(creates...).OnConflictColumns(sandboxgroup.FieldID).DoNothing().Exec(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// worldGroups lists the chat indexes of the world's groups.
func worldGroups() []int {
	out := make([]int, WorldGroups)
	for i := range out {
		out[i] = firstGroup + i
	}
	return out
}

// loadGroup reads a group of the network; a group of the world is copied the
// first time. An unknown group is engine.ErrNotFound.
func (e *Engine) loadGroup(ctx context.Context, w *world, jid string) (*ent.SandboxGroup, *groupState, error) {
	id := groupRowID(e.workspaceID, jid)
	row, err := e.net.client.SandboxGroup.Get(ctx, id)
	if ent.IsNotFound(err) {
		i, ok := w.index[jid]
		if !ok || w.chats[i].state.Kind != engine.ChatGroup {
			return nil, nil, engine.ErrNotFound
		}
		if err := e.keepWorldGroups(ctx, w, i); err != nil {
			return nil, nil, err
		}
		row, err = e.net.client.SandboxGroup.Get(ctx, id)
	}
	if err != nil {
		return nil, nil, err
	}
	var g groupState
	if err := json.Unmarshal(row.State, &g); err != nil {
		return nil, nil, fmt.Errorf("sandbox: group %s: %w", jid, err)
	}
	return row, &g, nil
}

// errStale is a group changed by someone else between read and write.
var errStale = errors.New("sandbox: group changed concurrently")

// groupOp is an operation of the account on a group: it checks the rules on g
// (settled up to now) before it changes g, and returns the changes it made.
type groupOp func(w *world, g *groupState, now time.Time) ([]engine.GroupChange, error)

// change runs op on the group at now, after what its members did up to now,
// and saves the group with the changes to report, in one transaction; a nil op
// only settles the group. An op that breaks a rule changes nothing (what the
// members did is saved all the same).
func (e *Engine) change(ctx context.Context, jid string, now time.Time, op groupOp) error {
	ctx = viewer.WorkspaceContext(ctx, e.workspaceID)
	w, _, err := e.world(ctx)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		row, g, err := e.loadGroup(ctx, w, jid)
		if err != nil {
			return err
		}
		changes := e.settle(ctx, w, g, now)
		var opErr error
		if op != nil {
			before, _ := json.Marshal(g)
			var made []engine.GroupChange
			if made, opErr = op(w, g, now); opErr != nil {
				*g = groupState{}
				_ = json.Unmarshal(before, g)
			} else {
				changes = append(changes, made...)
			}
		}
		if after, _ := json.Marshal(g); op != nil && len(changes) == 0 && bytes.Equal(after, row.State) {
			return opErr // nothing changed: nothing to save
		}
		err = e.save(ctx, w, row, g, changes)
		if errors.Is(err, errStale) && attempt < 10 {
			continue
		}
		if err != nil {
			return err
		}
		return opErr
	}
}

// save writes the group back, if nobody changed it since row was read, with the
// changes to report as events of the network due now, in order.
func (e *Engine) save(ctx context.Context, w *world, row *ent.SandboxGroup, g *groupState, changes []engine.GroupChange) error {
	raw, err := json.Marshal(g)
	if err != nil {
		return err
	}
	tx, err := e.net.client.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	u := tx.SandboxGroup.Update().Where(sandboxgroup.ID(row.ID), sandboxgroup.Version(row.Version)).
		SetState(raw).SetVersion(row.Version + 1)
	if next := g.nextDue(w); next != nil {
		u.SetNextDueAt(*next)
	} else {
		u.ClearNextDueAt()
	}
	n, err := u.Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errStale
	}
	return e.commitChanges(ctx, tx, changes)
}

// commitChanges records the changes as events the network reports now, commits
// tx and has them reported at once, so that the caller reads its own change.
func (e *Engine) commitChanges(ctx context.Context, tx *ent.Tx, changes []engine.GroupChange) error {
	now := time.Now()
	creates := make([]*ent.SandboxEventCreate, len(changes))
	for i := range changes {
		c := changes[i]
		payload, err := json.Marshal(e.event(engine.Event{Type: engine.EventGroup, Group: &c}))
		if err != nil {
			return err
		}
		// Strictly increasing times keep the changes of a group in order.
		creates[i] = tx.SandboxEvent.Create().SetDueAt(now.Add(time.Duration(i) * time.Microsecond)).SetPayload(payload)
	}
	if len(creates) > 0 {
		if err := tx.SandboxEvent.CreateBulk(creates...).Exec(ctx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	last := now.Add(time.Duration(len(changes)) * time.Microsecond)
	e.net.scheduled(last)
	// Report them now rather than at the pump's next pass; the pump reports what
	// this leaves (the sink stores an event once, whoever reports it).
	for {
		reported, err := e.net.ReportDue(context.WithoutCancel(ctx), last)
		if err != nil || reported < pumpBatch {
			return nil
		}
	}
}

// settle makes the group's members do what they planned, and the world group
// take its turns, up to now; what cannot be done any more (the member left) is
// dropped. It returns the changes made.
func (e *Engine) settle(ctx context.Context, w *world, g *groupState, now time.Time) []engine.GroupChange {
	var out []engine.GroupChange
	sort.SliceStable(g.Plans, func(i, j int) bool { return g.Plans[i].Due.Before(g.Plans[j].Due) })
	var keep []plan
	for _, p := range g.Plans {
		if p.Due.After(now) {
			keep = append(keep, p)
			continue
		}
		if p.Act == actRequest {
			out = append(out, g.request(w, p.Who, p.Due)...)
			continue
		}
		out = append(out, e.act(ctx, w, g, p.Act, p.Who, 0)...)
	}
	g.Plans = keep
	for g.World > 0 {
		t := w.turnAt(g.World-1, g.Turn)
		if t.After(now) {
			break
		}
		if now.Sub(t) <= worldCatchUp {
			out = append(out, e.worldTurn(ctx, w, g, g.Turn)...)
		}
		g.Turn++
	}
	return out
}

// worldTurn is what happens in a world group at its turn k: one of worldActs,
// by a member chosen from the seed.
func (e *Engine) worldTurn(ctx context.Context, w *world, g *groupState, k int) []engine.GroupChange {
	rng := rand.New(rand.NewPCG(w.seed^uint64(g.World)<<32, uint64(k)))
	act := worldActs[rng.IntN(len(worldActs))]
	var who string
	switch act {
	case actJoin:
		who = w.contacts[WorldContacts+rng.IntN(WorldStrangers)].ID
	case actLeave:
		var plain []string
		for _, p := range g.Participants {
			if !p.IsSuperAdmin && p.ID != w.me {
				plain = append(plain, p.ID)
			}
		}
		if len(plain) == 0 {
			return nil
		}
		who = plain[rng.IntN(len(plain))]
	default:
		for _, p := range g.Participants {
			if (p.IsAdmin || p.IsSuperAdmin) && p.ID != w.me {
				who = p.ID
				break
			}
		}
	}
	if who == "" {
		return nil
	}
	return e.act(ctx, w, g, act, who, rng.Uint64())
}

// act is what member who does in the group, if it still can: the changes made,
// none when it cannot. pick chooses among candidates.
func (e *Engine) act(ctx context.Context, w *world, g *groupState, act, who string, pick uint64) []engine.GroupChange {
	one := func(c engine.GroupChange) []engine.GroupChange {
		c.GroupID, c.By, c.Me = g.ID, who, w.me
		return []engine.GroupChange{c}
	}
	if act == actJoin {
		if g.find(who) >= 0 || len(g.Participants) >= MaxGroupSize {
			return nil
		}
		g.Participants = append(g.Participants, engine.Participant{ID: who})
		return one(engine.GroupChange{Action: "joined_via_link", Participants: []string{who}})
	}
	if g.find(who) < 0 {
		return nil // no longer a member
	}
	if act == actLeave {
		if g.Participants[g.find(who)].IsSuperAdmin {
			return nil
		}
		g.remove(who)
		return one(engine.GroupChange{Action: "left", Participants: []string{who}})
	}
	if !g.isAdmin(who) {
		return nil
	}
	// others are the members an admin may act on: not itself, not the account,
	// not the creator.
	var others []int
	for i, p := range g.Participants {
		if p.ID != who && p.ID != w.me && !p.IsSuperAdmin {
			others = append(others, i)
		}
	}
	switch act {
	case actAdd:
		if len(g.Participants) >= MaxGroupSize {
			return nil
		}
		for k := range WorldContacts {
			c := w.contacts[(int(pick%WorldContacts)+k)%WorldContacts].ID
			if g.find(c) < 0 {
				g.Participants = append(g.Participants, engine.Participant{ID: c})
				return one(engine.GroupChange{Action: "added", Participants: []string{c}})
			}
		}
	case actPromote:
		for _, i := range others {
			if !g.Participants[i].IsAdmin {
				g.Participants[i].IsAdmin = true
				return one(engine.GroupChange{Action: "admin_changed", Participants: []string{g.Participants[i].ID}, Value: engine.AdminPromoted})
			}
		}
	case actKick:
		for k := len(others) - 1; k >= 0; k-- {
			if p := g.Participants[others[k]]; !p.IsAdmin {
				g.remove(p.ID)
				return one(engine.GroupChange{Action: "kicked", Participants: []string{p.ID}})
			}
		}
	case actRename:
		// The sparkle comes and goes.
		name := g.Name + " ✨"
		if base, ok := strings.CutSuffix(g.Name, " ✨"); ok {
			name = base
		}
		if name == "" || len([]rune(name)) > 100 {
			return nil
		}
		g.Name = name
		return one(engine.GroupChange{Action: "name_changed", Value: g.Name})
	case actDescribe:
		g.Description = fmt.Sprintf("Be kind and stay on topic. (%s)", strings.TrimSuffix(who, "@c.us"))
		return one(engine.GroupChange{Action: "description_changed", Value: g.Description})
	case actPin:
		if key := e.latestMessage(ctx, w, g); key != "" {
			return one(engine.GroupChange{Action: "message_pinned", Value: key})
		}
	}
	return nil
}

// latestMessage is the key of the newest message of the group the network
// knows: the world's, or the newest the account sent to it.
func (e *Engine) latestMessage(ctx context.Context, w *world, g *groupState) string {
	var key string
	if g.World > 0 {
		if msgs := w.messages(firstGroup + g.World - 1); len(msgs) > 0 {
			key = msgs[len(msgs)-1].Key.Serialized()
		}
	}
	sent, err := e.net.client.SandboxSend.Query().Where(sandboxsend.Remote(g.ID)).
		Order(ent.Desc(sandboxsend.FieldCreatedAt)).First(viewer.WorkspaceContext(ctx, e.workspaceID))
	if err == nil {
		key = engine.Key{FromMe: true, Remote: g.ID, ID: sent.WireID}.Serialized()
	}
	return key
}

// admit adds participants the account asked to add, as the network allows: a
// number ending in 0000 is not on the network, 3333 takes an invite instead
// (and joins through it later), 4444 leaves again later.
func (e *Engine) admit(w *world, g *groupState, participants []string, now time.Time) []engine.Added {
	out := make([]engine.Added, len(participants))
	for i, p := range participants {
		out[i] = engine.Added{Participant: p}
		digits := recipientDigits(p)
		switch {
		case strings.HasSuffix(digits, "0000"):
			out[i].Code, out[i].Message = "not_on_network", p+" is not on the network"
		case len(g.Participants) >= MaxGroupSize:
			out[i].Code, out[i].Message = "group_full", fmt.Sprintf("the group holds %d participants already", MaxGroupSize)
		case strings.HasSuffix(digits, "3333"):
			out[i].Code, out[i].Message = "privacy_restricted", p+" allows only contacts to add them; an invite link was sent instead"
			g.Plans = append(g.Plans, plan{Due: now.Add(e.net.delay), Act: actJoin, Who: p})
		default:
			out[i].Added = true
			g.Participants = append(g.Participants, engine.Participant{ID: p})
			if strings.HasSuffix(digits, "4444") {
				g.Plans = append(g.Plans, plan{Due: now.Add(2 * e.net.delay), Act: actLeave, Who: p})
			}
		}
	}
	return out
}

func addedIDs(res []engine.Added) []string {
	var out []string
	for _, a := range res {
		if a.Added {
			out = append(out, a.Participant)
		}
	}
	return out
}
