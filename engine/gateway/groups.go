package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // group pictures may come as PNG
	"slices"
	"sort"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

// ownEcho is how long a group change the engine reported itself suppresses the
// same change echoed by the network.
const ownEcho = 2 * time.Minute

// joinedTTL is how long the list of joined groups is reused for common groups.
const joinedTTL = time.Minute

// participantID is the chat id of a group participant, by phone number when known.
func (e *Engine) participantID(ctx context.Context, cl client, p types.GroupParticipant) string {
	if !p.PhoneNumber.IsEmpty() {
		lid := p.LID
		if p.JID.Server == types.HiddenUserServer {
			lid = p.JID
		}
		e.lids.learn(lid.ToNonAD(), p.PhoneNumber.ToNonAD())
		return chatID(p.PhoneNumber)
	}
	return e.pnChatID(ctx, cl, p.JID, p.LID)
}

// groupState is a group as engines report it.
func (e *Engine) groupState(ctx context.Context, cl client, g *types.GroupInfo) engine.ChatState {
	owner := g.OwnerPN
	if owner.IsEmpty() {
		owner = g.OwnerJID
	}
	cs := engine.ChatState{ID: chatID(g.JID), Kind: engine.ChatGroup, Name: g.Name, Owner: e.pnChatID(ctx, cl, owner, types.EmptyJID),
		Description: g.Topic, Restrict: g.IsLocked, Announce: g.IsAnnounce, JoinApproval: g.IsJoinApprovalRequired}
	if !g.GroupCreated.IsZero() {
		t := g.GroupCreated.UTC()
		cs.CreatedAt = &t
	}
	for _, p := range g.Participants {
		if p.Error != 0 {
			continue
		}
		cs.Participants = append(cs.Participants, engine.Participant{ID: e.participantID(ctx, cl, p), IsAdmin: p.IsAdmin || p.IsSuperAdmin, IsSuperAdmin: p.IsSuperAdmin})
	}
	return cs
}

// echoKey identifies a group change for the echo suppression.
func echoKey(c engine.GroupChange) string {
	ps := slices.Clone(c.Participants)
	sort.Strings(ps)
	b, r := "", ""
	if c.Announce != nil {
		b = fmt.Sprint(*c.Announce)
	}
	if c.Restrict != nil {
		r = fmt.Sprint(*c.Restrict)
	}
	return strings.Join([]string{c.GroupID, c.Action, strings.Join(ps, ","), c.Value, b, r}, "|")
}

// reportOwn reports group changes the account made, and remembers them so that
// the network's echo of the same changes is not reported twice.
func (e *Engine) reportOwn(ctx context.Context, cs ...engine.GroupChange) error {
	now := time.Now()
	evs := make([]engine.Event, 0, len(cs))
	e.groupMu.Lock()
	for k, at := range e.ownReported {
		if now.Sub(at) > ownEcho {
			delete(e.ownReported, k)
		}
	}
	for _, c := range cs {
		c := c
		k := echoKey(c)
		e.ownReported[k] = now
		id := "wa_own_" + digest(k+now.String())
		if c.Action == engine.GroupCreated {
			id = "wa_group_created_" + c.GroupID
		}
		evs = append(evs, engine.Event{ID: id, Type: engine.EventGroup, At: now, Group: &c})
	}
	e.joined = nil // the joined groups changed
	e.groupMu.Unlock()
	return e.reportNow(ctx, evs...)
}

// echoed says whether the engine itself reported c lately.
func (e *Engine) echoed(c engine.GroupChange) bool {
	e.groupMu.Lock()
	defer e.groupMu.Unlock()
	at, ok := e.ownReported[echoKey(c)]
	return ok && time.Since(at) <= ownEcho
}

// groupInfoEvents maps a group notification to group changes: name ->
// name_changed, topic -> description_changed, announce/locked ->
// settings_changed, join -> joined_via_link (by invite) or added, leave -> left
// (the participant itself) or kicked, promote/demote -> admin_changed. Changes
// the engine reported itself (the account's own actions) are not reported again.
func (e *Engine) groupInfoEvents(ctx context.Context, cl client, v *events.GroupInfo) []engine.Event {
	gid := chatID(v.JID)
	me := chatID(cl.OwnID())
	by := ""
	if v.Sender != nil {
		alt := types.EmptyJID
		if v.SenderPN != nil {
			alt = *v.SenderPN
		}
		by = e.pnChatID(ctx, cl, *v.Sender, alt)
	}
	base := engine.GroupChange{GroupID: gid, By: by, Me: me}
	cs := append(settingsChanges(v, base), e.memberChanges(ctx, cl, v, base)...)
	cs = append(cs, e.requestChanges(ctx, cl, v, base)...)
	at := v.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	var evs []engine.Event
	for i, c := range cs {
		if c.By == me && e.echoed(c) {
			continue
		}
		c := c
		evs = append(evs, engine.Event{ID: fmt.Sprintf("wa_gi_%s_%d_%d_%s", gid, at.UnixNano(), i, c.Action), Type: engine.EventGroup, At: at, Group: &c})
	}
	if len(evs) > 0 {
		e.groupMu.Lock()
		e.joined = nil
		e.groupMu.Unlock()
	}
	return evs
}

// settingsChanges are the changes of a group's name, topic and settings that
// a notification carries, each base with its action and value.
func settingsChanges(v *events.GroupInfo, base engine.GroupChange) []engine.GroupChange {
	var cs []engine.GroupChange
	if v.Name != nil {
		c := base
		c.Action, c.Value = "name_changed", v.Name.Name
		cs = append(cs, c)
	}
	if v.Topic != nil {
		c := base
		c.Action, c.Value = "description_changed", v.Topic.Topic
		cs = append(cs, c)
	}
	if v.Announce != nil || v.Locked != nil {
		c := base
		c.Action = engine.GroupSettingsChanged
		if v.Announce != nil {
			a := v.Announce.IsAnnounce
			c.Announce = &a
		}
		if v.Locked != nil {
			r := v.Locked.IsLocked
			c.Restrict = &r
		}
		cs = append(cs, c)
	}
	if v.MembershipApprovalMode != nil {
		c := base
		on := v.MembershipApprovalMode.IsJoinApprovalRequired
		c.Action, c.JoinApproval = engine.GroupJoinApprovalChanged, &on
		cs = append(cs, c)
	}
	return cs
}

// memberChanges are the changes of a group's participants that a notification
// carries (joins, leaves, promotions, demotions), each base with its action and
// participants. base.By is who made them, empty when the network does not say.
func (e *Engine) memberChanges(ctx context.Context, cl client, v *events.GroupInfo, base engine.GroupChange) []engine.GroupChange {
	var cs []engine.GroupChange
	add := func(action string, participants []string, value string) {
		c := base
		c.Action, c.Participants, c.Value = action, participants, value
		cs = append(cs, c)
	}
	ids := func(js []types.JID) []string {
		out := make([]string, 0, len(js))
		for _, j := range js {
			out = append(out, e.pnChatID(ctx, cl, j, types.EmptyJID))
		}
		return out
	}
	by := base.By
	if len(v.Join) > 0 {
		action := "added"
		if v.JoinReason == "invite" || by == "" {
			action = "joined_via_link"
		}
		add(action, ids(v.Join), "")
	}
	if len(v.Leave) > 0 {
		var left, kicked []string
		for _, p := range ids(v.Leave) {
			if p == by || by == "" {
				left = append(left, p)
			} else {
				kicked = append(kicked, p)
			}
		}
		if len(left) > 0 {
			add("left", left, "")
		}
		if len(kicked) > 0 {
			add("kicked", kicked, "")
		}
	}
	if len(v.Promote) > 0 {
		add("admin_changed", ids(v.Promote), engine.AdminPromoted)
	}
	if len(v.Demote) > 0 {
		add("admin_changed", ids(v.Demote), engine.AdminDemoted)
	}
	return cs
}

// joinedEvents maps the account joining (or creating) a group to GroupCreated
// with the group's whole state.
func (e *Engine) joinedEvents(ctx context.Context, cl client, v *events.JoinedGroup) []engine.Event {
	cs := e.groupState(ctx, cl, &v.GroupInfo)
	by := ""
	if v.Sender != nil {
		by = e.pnChatID(ctx, cl, *v.Sender, types.EmptyJID)
	}
	e.groupMu.Lock()
	e.joined = nil
	e.groupMu.Unlock()
	return []engine.Event{{ID: "wa_group_created_" + cs.ID, Type: engine.EventGroup, At: time.Now(),
		Group: &engine.GroupChange{GroupID: cs.ID, Action: engine.GroupCreated, By: by, Me: chatID(cl.OwnID()), Chat: &cs}}}
}

// groupErr maps whatsmeow's group errors to the engine's.
func groupErr(err error) error {
	var iq *whatsmeow.IQError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, whatsmeow.ErrGroupNotFound), errors.Is(err, whatsmeow.ErrIQNotFound):
		return fmt.Errorf("%w: %v", engine.ErrNotFound, err)
	case errors.Is(err, whatsmeow.ErrNotInGroup), errors.Is(err, whatsmeow.ErrIQNotAuthorized):
		return &engine.GroupRuleError{Rule: engine.RuleNotMember, Message: "The account is not a participant of the group."}
	case errors.Is(err, whatsmeow.ErrIQForbidden):
		return &engine.GroupRuleError{Rule: engine.RuleNotAdmin, Message: "The account is not an admin of the group."}
	case errors.As(err, &iq) && iq.Code == 406:
		return fmt.Errorf("%w: the network refused the group change: %v", engine.ErrRejected, err)
	}
	return fmt.Errorf("gateway: group: %w", err)
}

// participantJIDs parses participants (<digits>@c.us).
func participantJIDs(ps []string) ([]types.JID, error) {
	out := make([]types.JID, 0, len(ps))
	for _, p := range ps {
		j, err := parseChat(p)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// addedOf says of each asked participant whether the network added it: error
// 403 is privacy_restricted (the network sends an invite instead), 404
// not_on_network, 409 already_a_member, other codes not_added.
func (e *Engine) addedOf(ctx context.Context, cl client, asked []string, res []types.GroupParticipant) []engine.Added {
	byID := map[string]types.GroupParticipant{}
	for _, p := range res {
		byID[e.participantID(ctx, cl, p)] = p
		byID[chatID(p.JID)] = p
	}
	out := make([]engine.Added, 0, len(asked))
	for _, a := range asked {
		j, _ := parseChat(a)
		id := chatID(j)
		p, ok := byID[id]
		switch {
		case !ok:
			out = append(out, engine.Added{Participant: id, Code: "not_added", Message: "The network did not say whether it added " + id + "."})
		case p.Error == 0:
			out = append(out, engine.Added{Participant: id, Added: true})
		case p.Error == 403:
			out = append(out, engine.Added{Participant: id, Code: "privacy_restricted", Message: id + " allows only contacts to add them; the network sends an invite."})
		case p.Error == 404:
			out = append(out, engine.Added{Participant: id, Code: "not_on_network", Message: id + " is not on the network."})
		case p.Error == 409:
			out = append(out, engine.Added{Participant: id, Code: engine.RuleAlreadyMember, Message: id + " is a participant of the group already."})
		default:
			out = append(out, engine.Added{Participant: id, Code: "not_added", Message: fmt.Sprintf("The network did not add %s (error %d).", id, p.Error)})
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

// CreateGroup implements engine.GroupAdmin.
func (e *Engine) CreateGroup(ctx context.Context, name string, participants []string) (string, []engine.Added, error) {
	cl, err := e.ready()
	if err != nil {
		return "", nil, err
	}
	js, err := participantJIDs(participants)
	if err != nil {
		return "", nil, err
	}
	info, err := cl.CreateGroup(ctx, whatsmeow.ReqCreateGroup{Name: name, Participants: js})
	if err != nil {
		return "", nil, groupErr(err)
	}
	me := chatID(cl.OwnID())
	cs := e.groupState(ctx, cl, info)
	gid := cs.ID
	res := e.addedOf(ctx, cl, participants, info.Participants)
	changes := []engine.GroupChange{{GroupID: gid, Action: engine.GroupCreated, By: me, Me: me, Chat: &cs}}
	if ids := addedIDs(res); len(ids) > 0 {
		changes = append(changes, engine.GroupChange{GroupID: gid, Action: "added", Participants: ids, By: me, Me: me})
	}
	return gid, res, e.reportOwn(ctx, changes...)
}

// UpdateGroup implements engine.GroupAdmin.
func (e *Engine) UpdateGroup(ctx context.Context, groupID string, u engine.GroupUpdate) error {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return err
	}
	me := chatID(cl.OwnID())
	base := engine.GroupChange{GroupID: chatID(g), By: me, Me: me}
	var changes []engine.GroupChange
	if u.Name != nil {
		if err := cl.SetGroupName(ctx, g, *u.Name); err != nil {
			return groupErr(err)
		}
		c := base
		c.Action, c.Value = "name_changed", *u.Name
		changes = append(changes, c)
	}
	if u.Description != nil {
		if err := cl.SetGroupDescription(ctx, g, *u.Description); err != nil {
			return groupErr(err)
		}
		c := base
		c.Action, c.Value = "description_changed", *u.Description
		changes = append(changes, c)
	}
	if u.Announce != nil || u.Restrict != nil {
		if u.Announce != nil {
			if err := cl.SetGroupAnnounce(ctx, g, *u.Announce); err != nil {
				return groupErr(err)
			}
		}
		if u.Restrict != nil {
			if err := cl.SetGroupLocked(ctx, g, *u.Restrict); err != nil {
				return groupErr(err)
			}
		}
		c := base
		c.Action, c.Announce, c.Restrict = engine.GroupSettingsChanged, u.Announce, u.Restrict
		changes = append(changes, c)
	}
	if len(changes) == 0 {
		return nil
	}
	return e.reportOwn(ctx, changes...)
}

// AddParticipants implements engine.GroupAdmin.
func (e *Engine) AddParticipants(ctx context.Context, groupID string, participants []string) ([]engine.Added, error) {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return nil, err
	}
	js, err := participantJIDs(participants)
	if err != nil {
		return nil, err
	}
	out, err := cl.UpdateGroupParticipants(ctx, g, js, whatsmeow.ParticipantChangeAdd)
	if err != nil {
		return nil, groupErr(err)
	}
	res := e.addedOf(ctx, cl, participants, out)
	if ids := addedIDs(res); len(ids) > 0 {
		me := chatID(cl.OwnID())
		return res, e.reportOwn(ctx, engine.GroupChange{GroupID: chatID(g), Action: "added", Participants: ids, By: me, Me: me})
	}
	return res, nil
}

// changeOne removes, promotes or demotes one participant.
func (e *Engine) changeOne(ctx context.Context, groupID, participant string, action whatsmeow.ParticipantChange, change engine.GroupChange) error {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return err
	}
	p, err := parseChat(participant)
	if err != nil {
		return err
	}
	if isMe(cl, p) {
		return &engine.GroupRuleError{Rule: engine.RuleSelf, Participant: participant, Message: "This is the account itself; leave the group with members/me instead."}
	}
	out, err := cl.UpdateGroupParticipants(ctx, g, []types.JID{p}, action)
	if err != nil {
		return groupErr(err)
	}
	pid := chatID(p)
	for _, r := range out {
		switch r.Error {
		case 0:
		case 404:
			return &engine.GroupRuleError{Rule: engine.RuleNotParticipant, Participant: pid, Message: pid + " is not a participant of the group."}
		case 403, 406:
			return &engine.GroupRuleError{Rule: engine.RuleCreator, Participant: pid, Message: fmt.Sprintf("The network refused to change %s (error %d); the creator cannot be demoted or removed.", pid, r.Error)}
		default:
			return fmt.Errorf("%w: the network refused to change %s (error %d)", engine.ErrRejected, pid, r.Error)
		}
	}
	me := chatID(cl.OwnID())
	change.GroupID, change.Participants, change.By, change.Me = chatID(g), []string{pid}, me, me
	return e.reportOwn(ctx, change)
}

// RemoveParticipant implements engine.GroupAdmin.
func (e *Engine) RemoveParticipant(ctx context.Context, groupID, participant string) error {
	return e.changeOne(ctx, groupID, participant, whatsmeow.ParticipantChangeRemove, engine.GroupChange{Action: "kicked"})
}

// SetAdmin implements engine.GroupAdmin.
func (e *Engine) SetAdmin(ctx context.Context, groupID, participant string, admin bool) error {
	if admin {
		return e.changeOne(ctx, groupID, participant, whatsmeow.ParticipantChangePromote, engine.GroupChange{Action: "admin_changed", Value: engine.AdminPromoted})
	}
	return e.changeOne(ctx, groupID, participant, whatsmeow.ParticipantChangeDemote, engine.GroupChange{Action: "admin_changed", Value: engine.AdminDemoted})
}

// LeaveGroup implements engine.GroupAdmin; leaving a group the account is not in
// does nothing.
func (e *Engine) LeaveGroup(ctx context.Context, groupID string) error {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return err
	}
	if err := cl.LeaveGroup(ctx, g); err != nil {
		var rule *engine.GroupRuleError
		if err := groupErr(err); errors.As(err, &rule) && rule.Rule == engine.RuleNotMember {
			return nil
		} else {
			return err
		}
	}
	me := chatID(cl.OwnID())
	return e.reportOwn(ctx, engine.GroupChange{GroupID: chatID(g), Action: "left", Participants: []string{me}, By: me, Me: me})
}

// SetGroupPicture implements engine.GroupAdmin. WhatsApp takes JPEG; a PNG is
// converted.
func (e *Engine) SetGroupPicture(ctx context.Context, groupID string, picture engine.Media) error {
	cl, g, err := e.readyFor(groupID)
	if err != nil {
		return err
	}
	data := picture.Data
	if !bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}) {
		img, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%w: the picture is not a PNG or JPEG image: %v", engine.ErrRejected, err)
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			return err
		}
		data = buf.Bytes()
	}
	_, err = cl.SetGroupPhoto(ctx, g, data)
	return groupErr(err)
}

// GroupInfo returns a group's current state from the network.
func (e *Engine) GroupInfo(ctx context.Context, groupID string) (engine.ChatState, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.ChatState{}, err
	}
	g, err := parseChat(groupID)
	if err != nil {
		return engine.ChatState{}, err
	}
	info, err := cl.GetGroupInfo(ctx, g)
	if err != nil {
		return engine.ChatState{}, groupErr(err)
	}
	return e.groupState(ctx, cl, info), nil
}

// Me is the account's own chat id (<digits>@c.us).
func (e *Engine) Me(ctx context.Context) (string, error) {
	own := e.client().OwnID()
	if own.IsEmpty() {
		return "", ErrNotPaired
	}
	return chatID(own), nil
}

// CommonGroups lists the groups the account shares with a contact, computed from
// the groups the account joined (refreshed at most every minute): a participant
// matches by the contact's phone number or its LID, whichever form the group
// lists.
func (e *Engine) CommonGroups(ctx context.Context, contact string) ([]string, error) {
	cl, err := e.ready()
	if err != nil {
		return nil, err
	}
	j, err := parseChat(contact)
	if err != nil {
		return nil, err
	}
	forms := map[types.JID]bool{j.ToNonAD(): true}
	if alt, err := cl.AltJID(ctx, j.ToNonAD()); err == nil && !alt.IsEmpty() {
		forms[alt.ToNonAD()] = true
	}
	e.groupMu.Lock()
	joined, fresh := e.joined, time.Since(e.joinedAt) < joinedTTL
	e.groupMu.Unlock()
	if joined == nil || !fresh {
		if joined, err = cl.GetJoinedGroups(ctx); err != nil {
			return nil, groupErr(err)
		}
		e.groupMu.Lock()
		e.joined, e.joinedAt = joined, time.Now()
		e.groupMu.Unlock()
	}
	var out []string
	for _, g := range joined {
		for _, p := range g.Participants {
			if forms[p.JID.ToNonAD()] || (!p.PhoneNumber.IsEmpty() && forms[p.PhoneNumber.ToNonAD()]) || (!p.LID.IsEmpty() && forms[p.LID.ToNonAD()]) {
				out = append(out, chatID(g.JID))
				break
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// readyFor is ready, and the group id parsed: what every group operation
// needs first.
func (e *Engine) readyFor(groupID string) (client, types.JID, error) {
	cl, err := e.ready()
	if err != nil {
		return nil, types.JID{}, err
	}
	g, err := parseChat(groupID)
	return cl, g, err
}
