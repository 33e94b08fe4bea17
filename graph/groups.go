package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // group pictures are PNG or JPEG
	_ "image/png"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/netguard"
)

// Bounds of the group operations (the reference contract's; docs/groups.md).
const (
	maxGroupName        = 100
	maxGroupDescription = 2048
	maxGroupSearch      = 128
	maxGroupAdds        = 256
	// MaxGroupPicture bounds the bytes of a group picture.
	MaxGroupPicture = 20 << 20
	// MaxGroupPictureDataURL bounds the characters of a picture's fileDataUrl.
	MaxGroupPictureDataURL = 20971520
	maxPictureURL          = 2048
	maxPictureMime         = 127
	maxPicturePixels       = 50_000_000
	pictureURLTimeout      = 30 * time.Second
	// maxListedParticipants bounds the participants one page of groups answers
	// in all: Group.participants has no page of its own, and 200 groups of 1,024
	// would be 200,000 (70,000 took 2-2.5 s and 5.7 MB).
	maxListedParticipants = 5000
)

var groupIDRE = regexp.MustCompile(`^[0-9]+(?:-[0-9]+)?@g[.]us$`)

// checkGroupID validates a group id given in field.
func checkGroupID(field, id string) error {
	if groupIDRE.MatchString(id) {
		return nil
	}
	msg := field + " must be a group id (<digits>[-<digits>]@g.us)"
	return &switchboard.Error{Code: switchboard.EINVALID, Message: msg + ".",
		Details: []switchboard.Detail{{Path: field, Code: "invalid_string", Message: "Invalid group id " + quote(id)}}}
}

// participantID normalizes a participant given as an E.164 number or a contact
// id (<digits>@c.us); ok is false for anything else.
func participantID(raw string) (string, bool) {
	jid, err := NormalizeChatID(raw)
	return jid, err == nil && engine.ChatKind(jid) == engine.ChatContact
}

// checkParticipant validates the participant an operation is about (EINVALID:
// it names a resource, like a path parameter).
func checkParticipant(field, raw string) (string, error) {
	jid, ok := participantID(raw)
	if !ok {
		msg := field + " must be a phone number in E.164 form (+15551234567) or a contact id (<digits>@c.us)"
		return "", &switchboard.Error{Code: switchboard.EINVALID, Message: msg + ".",
			Details: []switchboard.Detail{{Path: field, Code: "invalid_string", Message: "Invalid participant " + quote(raw)}}}
	}
	return jid, nil
}

// checkParticipants validates a list of participants to add: 1-256 E.164
// numbers or contact ids, none twice. It returns them as chat ids.
func checkParticipants(p *switchboard.Problems, field string, raw []string) []string {
	if len(raw) < 1 || len(raw) > maxGroupAdds {
		p.Add(field, "too_big", "%s must hold 1-%d participants", field, maxGroupAdds)
	}
	out := make([]string, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		jid, ok := participantID(r)
		switch {
		case !ok:
			p.Add(field+"."+itoa(i), "invalid_string", "%s must be phone numbers in E.164 form (+15551234567) or contact ids (<digits>@c.us); got %s", field, quote(r))
		case seen[jid]:
			p.Add(field+"."+itoa(i), "duplicate", "%s names %s twice", field, jid)
		}
		seen[jid], out[i] = true, jid
	}
	return out
}

// checkGroupName validates a group subject: 1-100 characters, not only spaces.
func checkGroupName(p *switchboard.Problems, field, name string) {
	if strings.TrimSpace(name) == "" {
		p.Add(field, "too_small", "%s must not be empty", field)
	} else if utf8.RuneCountInString(name) > maxGroupName {
		p.Add(field, "too_big", "%s must be at most %d characters", field, maxGroupName)
	}
}

// groupError turns what an engine refused into the API's error: an unknown
// group is ENOTFOUND, a broken rule of the network ECONFLICT naming the rule
// (details[].code) and the field of the participant it is about.
func groupError(err error, participantField string) error {
	var rule *engine.GroupRuleError
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return notFound("id", "The network knows no such group.")
	case errors.As(err, &rule):
		path := "id"
		if rule.Participant != "" {
			path = participantField
		}
		return &switchboard.Error{Code: switchboard.ECONFLICT, Message: rule.Message,
			Details: []switchboard.Detail{{Path: path, Code: rule.Rule, Message: rule.Message}}}
	}
	return err
}

// groupChat returns a stored group by its id, or ENOTFOUND.
func (r *Resolver) groupChat(ctx context.Context, id string) (*ent.Chat, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.store().Group(ctx, id)
	if ent.IsNotFound(err) {
		return nil, notFound("id", "No group with id %s.", quote(id))
	}
	return c, err
}

// group is the use case behind group (GET /v1/groups/{id}): the stored group,
// with its participants when withParticipants.
func (r *Resolver) group(ctx context.Context, id string, withParticipants bool) (*model.Group, error) {
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	g := &model.Group{Chat: c}
	if withParticipants {
		if _, err := r.participantsOf(ctx, g); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// participantsOf reads the participants of a group (once), admins first, with
// the names the store knows. A group of a list has them read with those of
// the whole list, in two queries.
func (r *Resolver) participantsOf(ctx context.Context, g *model.Group) ([]*model.Participant, error) {
	if b := g.Page; b != nil {
		b.Once.Do(func() { b.Err = r.readParticipants(ctx, b.Groups) })
		return g.Participants, b.Err
	}
	if g.Participants == nil {
		if err := r.readParticipants(ctx, []*model.Group{g}); err != nil {
			return nil, err
		}
		// The count the answer shows is the one of the list it shows, even
		// when a change was stored between the two reads.
		g.Chat.ParticipantCount = len(g.Participants)
	}
	return g.Participants, nil
}

// readParticipants sets the participants of groups, admins first, with the
// names the store knows.
func (r *Resolver) readParticipants(ctx context.Context, groups []*model.Group) error {
	byJid := make(map[string]*model.Group, len(groups))
	chats := make([]string, len(groups))
	for i, g := range groups {
		g.Participants, byJid[g.Chat.Jid], chats[i] = []*model.Participant{}, g, g.Chat.Jid
	}
	members, err := r.store().Members(ctx, chats...)
	if err != nil {
		return err
	}
	jids := make([]string, len(members))
	for i, m := range members {
		jids[i] = m.MemberJid
	}
	contacts, err := r.store().ContactsOf(ctx, jids...)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, ct := range contacts {
		names[ct.Jid] = contactName(ct)
	}
	for _, m := range members {
		p := &model.Participant{ChatID: m.MemberJid, IsAdmin: m.IsAdmin || m.IsSuperAdmin, IsSuperAdmin: m.IsSuperAdmin}
		if name := names[m.MemberJid]; name != "" {
			p.Name = &name
		}
		g := byJid[m.ChatJid]
		g.Participants = append(g.Participants, p)
	}
	return nil
}

// groupList is the use case behind groupList (GET /v1/groups).
func (r *Resolver) groupList(ctx context.Context, searchToken *string, includeArchive *bool, limit, skip *int) (*model.GroupPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	f := inbox.ChatFilter{Kinds: []string{engine.ChatGroup}, NameOnly: true}
	if t := searchToken; t != nil {
		if n := utf8.RuneCountInString(*t); n < 1 || n > maxGroupSearch {
			p.Add("searchToken", "too_big", "searchToken must be 1-%d characters", maxGroupSearch)
		}
		f.Search = *t
	}
	f.Unarchived = includeArchive == nil || !*includeArchive
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	items, total, err := r.store().Chats(ctx, f, l, s)
	if err != nil {
		return nil, err
	}
	out := &model.GroupPage{Items: make([]*model.Group, len(items)), Limit: l, Skip: s, Total: total}
	batch := &model.GroupBatch{Groups: out.Items}
	jids := make([]string, len(items))
	for i, c := range items {
		out.Items[i] = &model.Group{Chat: c, Page: batch}
		jids[i] = c.Jid
	}
	if len(jids) > 0 && selects(ctx, "items", "participants") {
		n, err := r.store().CountMembers(ctx, jids...)
		if err != nil {
			return nil, err
		}
		if n > maxListedParticipants {
			msg := fmt.Sprintf("The groups of this page (%d) have %d participants, more than the %d a page of groups answers: ask for fewer groups (limit), or for each group's participants with group or chatParticipants.", len(jids), n, maxListedParticipants)
			return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: msg,
				Details: []switchboard.Detail{{Path: "limit", Code: "too_big", Message: fmt.Sprintf("a page of groups answers at most %d participants", maxListedParticipants)}}}
		}
	}
	return out, nil
}

// selects reports whether the GraphQL field being resolved in ctx selects the
// path of fields below it (false outside GraphQL: the REST facade).
func selects(ctx context.Context, path ...string) bool {
	if graphql.GetFieldContext(ctx) == nil {
		return false
	}
	fields := graphql.CollectFieldsCtx(ctx, nil)
	for _, name := range path {
		found := false
		var next ast.SelectionSet
		for _, f := range fields {
			if f.Name == name {
				found, next = true, append(next, f.Selections...)
			}
		}
		if !found {
			return false
		}
		fields = graphql.CollectFields(graphql.GetOperationContext(ctx), next, nil)
	}
	return true
}

// groupAction runs a group operation on the phone, waits until what it
// reported is stored, and answers the group as the store then holds it, with
// its participants. participantField names the field of the participant the
// operation is about, for the error of a broken rule.
func (r *Resolver) groupAction(ctx context.Context, jid, participantField string, do func(engine.GroupAdmin) error) (*model.Group, error) {
	admin, err := phone[engine.GroupAdmin](ctx, r, "administering a group")
	if err != nil {
		return nil, err
	}
	if err := r.act(ctx, func() error { return do(admin) }); err != nil {
		return nil, groupError(err, participantField)
	}
	return r.group(ctx, jid, true)
}

// failedParticipants lists the participants the network did not add, as the
// call gave them (raw) and as chat ids (jids, in the same order).
func failedParticipants(raw, jids []string, res []engine.Added) []*model.FailedParticipant {
	given := map[string]string{}
	for i, j := range jids {
		given[j] = raw[i]
	}
	out := []*model.FailedParticipant{}
	for _, a := range res {
		if !a.Added {
			out = append(out, &model.FailedParticipant{Participant: given[a.Participant], ChatID: a.Participant, Code: a.Code, Message: a.Message})
		}
	}
	return out
}

// createGroup is the use case behind createGroup (POST /v1/groups).
func (r *Resolver) createGroup(ctx context.Context, name string, participants []string) (*model.GroupResult, error) {
	var p switchboard.Problems
	checkGroupName(&p, "name", name)
	jids := checkParticipants(&p, "participants", participants)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	admin, err := phone[engine.GroupAdmin](ctx, r, "creating a group")
	if err != nil {
		return nil, err
	}
	var id string
	var res []engine.Added
	if err := r.act(ctx, func() (err error) { id, res, err = admin.CreateGroup(ctx, name, jids); return err }); err != nil {
		return nil, groupError(err, "participants")
	}
	g, err := r.group(ctx, id, true)
	if err != nil {
		return nil, err
	}
	return &model.GroupResult{Group: g, FailedParticipants: failedParticipants(participants, jids, res)}, nil
}

// updateGroup is the use case behind updateGroup (PATCH /v1/groups/{id}).
func (r *Resolver) updateGroup(ctx context.Context, id string, in model.GroupUpdateInput) (*model.Group, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	var p switchboard.Problems
	if in.Name == nil && in.Description == nil && in.Announce == nil && in.Restrict == nil && in.EditInfoAdminsOnly == nil && in.JoinApproval == nil {
		p.Add("body", "too_small", "Give at least one of name, description, announce, restrict, editInfoAdminsOnly, joinApproval")
	}
	if in.Name != nil {
		checkGroupName(&p, "name", *in.Name)
	}
	if d := in.Description; d != nil && (utf8.RuneCountInString(*d) < 1 || utf8.RuneCountInString(*d) > maxGroupDescription) {
		p.Add("description", "too_big", "description must be 1-%d characters", maxGroupDescription)
	}
	restrict := in.Restrict
	if e := in.EditInfoAdminsOnly; e != nil {
		if restrict != nil && *restrict != *e {
			p.Add("editInfoAdminsOnly", "invalid_value", "editInfoAdminsOnly is the restrict setting; they must not differ")
		}
		restrict = e
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	u := engine.GroupUpdate{Name: in.Name, Description: in.Description, Announce: in.Announce, Restrict: restrict}
	var gr engine.GroupRequester
	if in.JoinApproval != nil {
		// Checked first, so that a call the engine cannot serve changes nothing.
		if gr, _, err = actingAs[engine.GroupRequester](ctx, r, nil, engine.CapGroupRequests, "setting a group's join approval"); err != nil {
			return nil, err
		}
	}
	if u == (engine.GroupUpdate{}) {
		if err := r.setJoinApproval(ctx, gr, c.Jid, *in.JoinApproval); err != nil {
			return nil, err
		}
		return r.group(ctx, c.Jid, true)
	}
	g, err := r.groupAction(ctx, c.Jid, "", func(a engine.GroupAdmin) error { return a.UpdateGroup(ctx, c.Jid, u) })
	if err != nil || in.JoinApproval == nil {
		return g, err
	}
	if err := r.setJoinApproval(ctx, gr, c.Jid, *in.JoinApproval); err != nil {
		return nil, err
	}
	return r.group(ctx, c.Jid, true)
}

// addGroupParticipants is the use case behind addGroupParticipants (POST
// /v1/groups/{id}/members).
func (r *Resolver) addGroupParticipants(ctx context.Context, id string, participants []string) (*model.GroupResult, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	var p switchboard.Problems
	jids := checkParticipants(&p, "participants", participants)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	var res []engine.Added
	g, err := r.groupAction(ctx, c.Jid, "participants", func(a engine.GroupAdmin) (err error) {
		res, err = a.AddParticipants(ctx, c.Jid, jids)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model.GroupResult{Group: g, FailedParticipants: failedParticipants(participants, jids, res)}, nil
}

// removeGroupParticipant is the use case behind removeGroupParticipant (DELETE
// /v1/groups/{id}/members/{chatId}).
func (r *Resolver) removeGroupParticipant(ctx context.Context, id, participant string) (*model.Group, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	jid, err := checkParticipant("participant", participant)
	if err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.groupAction(ctx, c.Jid, "participant", func(a engine.GroupAdmin) error { return a.RemoveParticipant(ctx, c.Jid, jid) })
}

// setGroupAdmin is the use case behind promoteGroupParticipant and
// demoteGroupParticipant (POST and DELETE /v1/groups/{id}/members/{chatId}/admin).
func (r *Resolver) setGroupAdmin(ctx context.Context, id, participant string, admin bool) (*model.Group, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	jid, err := checkParticipant("participant", participant)
	if err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.groupAction(ctx, c.Jid, "participant", func(a engine.GroupAdmin) error { return a.SetAdmin(ctx, c.Jid, jid, admin) })
}

// leaveGroup is the use case behind leaveGroup (DELETE /v1/groups/{id}/members/me).
func (r *Resolver) leaveGroup(ctx context.Context, id string) (bool, error) {
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return false, err
	}
	if _, err := r.groupAction(ctx, c.Jid, "", func(a engine.GroupAdmin) error { return a.LeaveGroup(ctx, c.Jid) }); err != nil {
		return false, err
	}
	return true, nil
}

// setGroupPicture is the use case behind setGroupPicture (PUT
// /v1/groups/{id}/picture): the image comes from exactly one of an upload, a
// data URL and a URL (fetched through the private-address guard), and must be a
// whole PNG or JPEG of at most MaxGroupPicture bytes.
func (r *Resolver) setGroupPicture(ctx context.Context, id string, in model.GroupPictureInput) (*model.Group, error) {
	if err := checkGroupID("id", id); err != nil {
		return nil, err
	}
	if err := checkPictureInput(in); err != nil {
		return nil, err
	}
	c, err := r.groupChat(ctx, id)
	if err != nil {
		return nil, err
	}
	pic, err := r.picture(ctx, in)
	if err != nil {
		return nil, err
	}
	return r.groupAction(ctx, c.Jid, "", func(a engine.GroupAdmin) error { return a.SetGroupPicture(ctx, c.Jid, pic) })
}

// checkPictureInput validates the fields of a picture input (a group's or the
// account's): exactly one source, within the bounds.
func checkPictureInput(in model.GroupPictureInput) error {
	var p switchboard.Problems
	sources := 0
	for _, given := range []bool{in.File != nil, in.FileDataURL != nil, in.URL != nil} {
		if given {
			sources++
		}
	}
	switch {
	case sources == 0:
		p.Add("fileDataUrl", "invalid_type", "Required: one of fileDataUrl, url or a file part")
	case sources > 1:
		p.Add("body", "invalid_union", "Give only one of fileDataUrl, url and a file part")
	}
	if d := in.FileDataURL; d != nil && (len(*d) < 1 || len(*d) > MaxGroupPictureDataURL) {
		p.Add("fileDataUrl", "too_big", "fileDataUrl must be 1-%d characters", MaxGroupPictureDataURL)
	}
	if u := in.URL; u != nil && len(*u) > maxPictureURL {
		p.Add("url", "too_big", "url must be at most %d characters", maxPictureURL)
	}
	if n := in.FileName; n != nil && utf8.RuneCountInString(*n) > maxFilename {
		p.Add("fileName", "too_big", "fileName must be at most %d characters", maxFilename)
	}
	if m := in.FileMimeType; m != nil && len(*m) > maxPictureMime {
		p.Add("fileMimeType", "too_big", "fileMimeType must be at most %d characters", maxPictureMime)
	} else if m != nil && *m != "image/png" && *m != "image/jpeg" {
		p.Add("fileMimeType", "invalid_enum_value", "fileMimeType must be image/png or image/jpeg")
	}
	return p.Err(switchboard.EVALIDATION)
}

// picture reads a checked picture input's image from its source and checks
// that it is a whole PNG or JPEG (422 not_an_image otherwise).
func (r *Resolver) picture(ctx context.Context, in model.GroupPictureInput) (engine.Media, error) {
	data, field, err := r.pictureBytes(ctx, in)
	if err != nil {
		return engine.Media{}, err
	}
	mime, err := checkPicture(field, data)
	if err != nil {
		return engine.Media{}, err
	}
	return engine.Media{Data: data, MimeType: mime, Filename: deref(in.FileName)}, nil
}

// pictureBytes reads the picture from its one source, at most MaxGroupPicture
// bytes (one more tells that it is too large), and names the field it came from.
func (r *Resolver) pictureBytes(ctx context.Context, in model.GroupPictureInput) ([]byte, string, error) {
	var src io.Reader
	field := "file"
	switch {
	case in.File != nil:
		src = in.File.File
	case in.FileDataURL != nil:
		data, _, err := media.DecodeBase64(*in.FileDataURL)
		if err != nil {
			return nil, "", fieldError(switchboard.EVALIDATION, "fileDataUrl", "invalid_string", "fileDataUrl "+err.Error())
		}
		return data, "fileDataUrl", nil
	default:
		field = "url"
		raw := *in.URL
		if err := netguard.CheckURL(ctx, raw, r.MediaAllowPrivate, r.MediaAllowPrivate); err != nil {
			return nil, "", fieldError(switchboard.EVALIDATION, "url", "invalid_string", "url "+err.Error())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return nil, "", fieldError(switchboard.EVALIDATION, "url", "invalid_string", "url must be a URL")
		}
		resp, err := netguard.Client(pictureURLTimeout, r.MediaAllowPrivate).Do(req)
		if err != nil {
			return nil, "", fieldError(switchboard.EVALIDATION, "url", "fetch_failed", "url could not be fetched")
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, "", fieldError(switchboard.EVALIDATION, "url", "fetch_failed", fmt.Sprintf("url answered HTTP %d", resp.StatusCode))
		}
		src = resp.Body
	}
	data, err := io.ReadAll(io.LimitReader(src, MaxGroupPicture+1))
	if err != nil {
		return nil, "", fieldError(switchboard.EVALIDATION, field, "fetch_failed", field+" could not be read")
	}
	return data, field, nil
}

// checkPicture checks that data is a whole PNG or JPEG image within the bounds,
// and returns its MIME type.
func checkPicture(field string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", fieldError(switchboard.EVALIDATION, field, "too_small", field+" holds no image")
	}
	if len(data) > MaxGroupPicture {
		return "", fieldError(switchboard.EVALIDATION, field, "too_big", fmt.Sprintf("%s exceeds %d bytes (20 MiB)", field, MaxGroupPicture))
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || (format != "png" && format != "jpeg") {
		return "", fieldError(switchboard.EVALIDATION, field, "not_an_image", field+" must be a PNG or JPEG image")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width*cfg.Height > maxPicturePixels {
		return "", fieldError(switchboard.EVALIDATION, field, "too_big", fmt.Sprintf("%s must be at most %d pixels", field, maxPicturePixels))
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return "", fieldError(switchboard.EVALIDATION, field, "not_an_image", field+" is not a whole image ("+format+" data is damaged)")
	}
	return "image/" + format, nil
}
