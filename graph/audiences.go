package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/audience"
	"github.com/switchboardhq/switchboard/ent/audiencecontact"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/storage"
)

// Bounds of audiences, from the reference contract.
const (
	maxAudienceName     = 120
	maxAudienceContacts = 1000 // per call
	// contactChunk bounds the rows of one statement when contacts are read or
	// written in bulk.
	contactChunk = 500
)

// contactSpec is a validated contact: its chat id and variables.
type contactSpec struct {
	to   string
	vars map[string]string
}

// checkName validates a required name of 1-120 characters.
func checkName(p *switchboard.Problems, name *string) string {
	if name == nil {
		p.Add("name", "invalid_type", "Required")
		return ""
	}
	textLen(p, "name", name, 1, maxAudienceName)
	return strings.TrimSpace(*name)
}

// checkVariables turns the variables of an input into a map and checks the
// reference's rules: at most 32 keys matching ^[A-Za-z_][A-Za-z0-9_]{0,31}$, unique
// ignoring case, values of at most 1024 characters.
func checkVariables(p *switchboard.Problems, path string, in []*model.AudienceVariableInput) map[string]string {
	vars := make(map[string]string, len(in))
	for _, v := range in {
		if _, dup := vars[v.Key]; dup {
			p.Add(path+"."+v.Key, "invalid_string", "variable %s is given twice", v.Key)
		}
		vars[v.Key] = v.Value
	}
	campaigns.CheckVariables(vars, func(sub, code, msg string) { p.Add(path+strings.TrimPrefix(sub, "variables"), code, "%s", msg) })
	return vars
}

// checkContacts validates contacts to append (at most 1000) and normalizes each
// recipient to a chat id.
func checkContacts(p *switchboard.Problems, path string, in []*model.AudienceContactInput) []contactSpec {
	if len(in) > maxAudienceContacts {
		p.Add(path, "too_big", "at most %d contacts per call (got %d)", maxAudienceContacts, len(in))
		return nil
	}
	out := make([]contactSpec, 0, len(in))
	for i, c := range in {
		at := fmt.Sprintf("%s[%d]", path, i)
		var s contactSpec
		if c.To == nil {
			p.Add(at+".to", "invalid_type", "Required")
		} else if to, err := NormalizeChatID(strings.TrimSpace(*c.To)); err != nil {
			p.Add(at+".to", "invalid_string", "to must be a phone number in E.164 form (+15551234567) or a chat id (<digits>@c.us, <digits>@lid, <digits>@g.us, <digits>@newsletter); got %s", quote(*c.To))
		} else {
			s.to = to
		}
		s.vars = checkVariables(p, at+".variables", c.Variables)
		out = append(out, s)
	}
	return out
}

// getAudience returns a live audience of the viewer's workspace or ENOTFOUND.
func getAudience(ctx context.Context, c *ent.AudienceClient, id string) (*ent.Audience, error) {
	a, err := c.Query().Where(audience.ID(id), audience.DeletedAtIsNil()).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No audience with id %s.", quote(id))
	}
	return a, err
}

// createAudience is the use case behind createAudience.
func (r *Resolver) createAudience(ctx context.Context, in model.AudienceInput) (*ent.Audience, error) {
	var p switchboard.Problems
	name := checkName(&p, in.Name)
	specs := checkContacts(&p, "contacts", in.Contacts)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	var a *ent.Audience
	err := storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		var err error
		if a, err = tx.Audience.Create().SetName(name).Save(ctx); err != nil {
			return err
		}
		_, _, err = appendContacts(ctx, tx, a.ID, specs)
		return err
	})
	return a, err
}

// appendContacts adds specs to the audience inside tx, skipping recipients it
// holds already (or that repeat in specs), and returns how many were added and
// skipped. The audience row is locked first, so concurrent appends to it take
// turns, and every contact gets the next number of the audience's sequence.
func appendContacts(ctx context.Context, tx *ent.Tx, audienceID string, specs []contactSpec) (added, skipped int, err error) {
	if len(specs) == 0 {
		return 0, 0, nil
	}
	// Lock the audience (a no-op update takes the row lock on PostgreSQL).
	if err := tx.Audience.UpdateOneID(audienceID).SetUpdatedAt(time.Now()).Exec(ctx); err != nil {
		return 0, 0, err
	}
	fresh := make([]contactSpec, 0, len(specs))
	seen := make(map[string]bool, len(specs))
	for _, s := range specs {
		if !seen[s.to] {
			seen[s.to] = true
			fresh = append(fresh, s)
		}
	}
	tos := slices.Collect(maps.Keys(seen))
	for chunk := range slices.Chunk(tos, contactChunk) {
		have, err := tx.AudienceContact.Query().Where(audiencecontact.AudienceID(audienceID), audiencecontact.ToIn(chunk...)).
			Select(audiencecontact.FieldTo).Strings(ctx)
		if err != nil {
			return 0, 0, err
		}
		for _, to := range have {
			seen[to] = false
		}
	}
	news := slices.DeleteFunc(fresh, func(s contactSpec) bool { return !seen[s.to] })
	skipped = len(specs) - len(news)
	if len(news) == 0 {
		return 0, skipped, nil
	}
	a, err := tx.Audience.UpdateOneID(audienceID).AddContactSeq(int64(len(news))).Save(ctx)
	if err != nil {
		return 0, 0, err
	}
	seq := a.ContactSeq - int64(len(news))
	now := time.Now()
	for chunk := range slices.Chunk(news, contactChunk) {
		creates := make([]*ent.AudienceContactCreate, len(chunk))
		for i, s := range chunk {
			seq++
			creates[i] = tx.AudienceContact.Create().SetAudienceID(audienceID).SetTo(s.to).
				SetVariables(s.vars).SetSeq(seq).SetCreatedAt(now).SetUpdatedAt(now)
		}
		if err := tx.AudienceContact.CreateBulk(creates...).Exec(ctx); err != nil {
			return 0, 0, err
		}
	}
	return len(news), skipped, nil
}

// addContacts is the use case behind addAudienceContacts.
func (r *Resolver) addContacts(ctx context.Context, id string, in []*model.AudienceContactInput) (*model.AudienceContactsPayload, error) {
	var p switchboard.Problems
	if len(in) == 0 {
		p.Add("contacts", "too_small", "contacts must hold 1-%d contacts", maxAudienceContacts)
	}
	specs := checkContacts(&p, "contacts", in)
	a, err := getAudience(ctx, r.Client.Audience, id)
	if err != nil {
		return nil, err
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	out := &model.AudienceContactsPayload{}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		var err error
		if out.Added, out.Skipped, err = appendContacts(ctx, tx, a.ID, specs); err != nil {
			return err
		}
		out.ContactCount, err = tx.AudienceContact.Query().Where(audiencecontact.AudienceID(a.ID)).Count(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Audience = a
	return out, nil
}

// contactCount is an audience's exact number of contacts.
func (r *Resolver) contactCount(ctx context.Context, a *ent.Audience) (int, error) {
	return r.Client.AudienceContact.Query().Where(audiencecontact.AudienceID(a.ID)).Count(ctx)
}

// updateAudience is the use case behind updateAudience.
func (r *Resolver) updateAudience(ctx context.Context, id string, in model.AudiencePatch) (*ent.Audience, error) {
	var p switchboard.Problems
	name := checkName(&p, in.Name)
	a, err := getAudience(ctx, r.Client.Audience, id)
	if err != nil {
		return nil, err
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	return r.Client.Audience.UpdateOne(a).SetName(name).Save(ctx)
}

// deleteAudience is the use case behind deleteAudience: a soft delete, refused
// while a campaign that is not finished uses the audience.
func (r *Resolver) deleteAudience(ctx context.Context, id string) (*model.DeletePayload, error) {
	a, err := getAudience(ctx, r.Client.Audience, id)
	if err != nil {
		return nil, err
	}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		active, err := tx.Campaign.Query().Where(campaign.AudienceID(a.ID),
			campaigns.StatusIn(campaigns.StatusPending, campaigns.StatusRunning, campaigns.StatusPaused)).Count(ctx)
		if err != nil {
			return err
		}
		if active > 0 {
			return &switchboard.Error{Code: switchboard.ECONFLICT,
				Message: fmt.Sprintf("The audience is used by %d campaign(s) that are not finished; cancel them first.", active),
				Details: []switchboard.Detail{{Path: "id", Code: "audience_in_use", Message: "a pending, running or paused campaign uses this audience"}}}
		}
		return tx.Audience.UpdateOne(a).SetDeletedAt(time.Now()).Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	return &model.DeletePayload{ID: a.ID, Deleted: true}, nil
}

// getContact returns a contact of a live audience or ENOTFOUND.
func (r *Resolver) getContact(ctx context.Context, id, contactID string) (*ent.AudienceContact, error) {
	a, err := getAudience(ctx, r.Client.Audience, id)
	if err != nil {
		return nil, err
	}
	c, err := r.Client.AudienceContact.Query().Where(audiencecontact.ID(contactID), audiencecontact.AudienceID(a.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No contact with id %s in audience %s.", quote(contactID), quote(id))
	}
	return c, err
}

// updateContact is the use case behind updateAudienceContact.
func (r *Resolver) updateContact(ctx context.Context, id, contactID string, in model.AudienceContactPatch) (*ent.AudienceContact, error) {
	var p switchboard.Problems
	var to string
	if in.To != nil {
		var err error
		if to, err = NormalizeChatID(strings.TrimSpace(*in.To)); err != nil {
			p.Add("to", "invalid_string", "to must be a phone number in E.164 form (+15551234567) or a chat id (<digits>@c.us, <digits>@lid, <digits>@g.us, <digits>@newsletter); got %s", quote(*in.To))
		}
	}
	var vars map[string]string
	if in.Variables != nil {
		vars = checkVariables(&p, "variables", in.Variables)
	}
	c, err := r.getContact(ctx, id, contactID)
	if err != nil {
		return nil, err
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	u := r.Client.AudienceContact.UpdateOne(c)
	if to != "" {
		u.SetTo(to)
	}
	if vars != nil {
		u.SetVariables(vars)
	}
	c, err = u.Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, &switchboard.Error{Code: switchboard.ECONFLICT, Message: "Another contact of the audience has this recipient.",
			Details: []switchboard.Detail{{Path: "to", Code: "duplicate", Message: "the audience already holds " + campaigns.Phone(to)}}}
	}
	return c, err
}

// removeContact is the use case behind removeAudienceContact. A running campaign
// that has not reached the contact yet leaves it out.
func (r *Resolver) removeContact(ctx context.Context, id, contactID string) (*model.DeletePayload, error) {
	c, err := r.getContact(ctx, id, contactID)
	if err != nil {
		return nil, err
	}
	if err := r.Client.AudienceContact.DeleteOne(c).Exec(ctx); err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	return &model.DeletePayload{ID: c.ID, Deleted: true}, nil
}

// audienceList is the use case behind audienceList.
func (r *Resolver) audienceList(ctx context.Context, order *string, limit, skip *int) (*model.AudiencePage, error) {
	l, err := checkListing(limit, skip, order)
	if err != nil {
		return nil, err
	}
	q := r.Client.Audience.Query().Where(audience.DeletedAtIsNil())
	items, total, err := find(ctx, q.Clone().Count, q.Order(l.order).Limit(l.limit).Offset(l.skip).All)
	if err != nil {
		return nil, err
	}
	return &model.AudiencePage{Items: items, Limit: l.limit, Skip: l.skip, Total: total}, nil
}

// variableList renders a contact's variables, sorted by key.
func variableList(vars map[string]string) []*model.AudienceVariable {
	out := []*model.AudienceVariable{}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, &model.AudienceVariable{Key: k, Value: vars[k]})
	}
	return out
}
