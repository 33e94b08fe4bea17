package graph

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/numbercheck"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Contacts on the network (docs/contacts.md): number checks and the block list,
// each through one engine.

// Bounds of the contact operations.
const (
	// MaxCheckNumbers bounds the numbers one checkNumbers call asks about.
	MaxCheckNumbers = 100
	// NumberCheckTTL is how long an answer of the network is reused.
	NumberCheckTTL = time.Hour
)

// checkPhones validates the numbers of checkNumbers: 1-MaxCheckNumbers E.164
// numbers or <digits>@c.us, none twice; each wrong one is named by its index.
// It returns their digits.
func checkPhones(raw []string) ([]string, error) {
	var p switchboard.Problems
	if len(raw) < 1 || len(raw) > MaxCheckNumbers {
		p.Add("phones", "too_big", "phones must hold 1-%d numbers; got %d", MaxCheckNumbers, len(raw))
	}
	out := make([]string, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		jid, ok := participantID(r)
		ok = ok && strings.HasSuffix(jid, "@c.us")
		switch {
		case !ok:
			p.Add("phones."+itoa(i), "invalid_string", "phones must be phone numbers in E.164 form (+15551234567) or contact ids (<digits>@c.us); got %s", quote(r))
		case seen[jid]:
			p.Add("phones."+itoa(i), "duplicate", "phones names %s twice", jid)
		}
		seen[jid] = true
		out[i] = recipientDigits(jid)
	}
	return out, p.Err(switchboard.EVALIDATION)
}

// recipientDigits is the digits of a contact chat id.
func recipientDigits(jid string) string {
	digits, _, _ := strings.Cut(jid, "@")
	return digits
}

// checkNumbers is the use case behind checkNumbers (POST /v1/contacts/check):
// the answers younger than NumberCheckTTL come from the cache, the others from
// the engine (which paces its queries), and are cached.
func (r *Resolver) checkNumbers(ctx context.Context, phones []string, engineID *string) (*model.NumberCheckResult, error) {
	digits, err := checkPhones(phones)
	if err != nil {
		return nil, err
	}
	eng, err := r.actingEngine(ctx, engineID, engine.CapCheckNumbers, "checking numbers")
	if err != nil {
		return nil, err
	}
	cached, err := r.cachedChecks(ctx, eng.ID(), digits)
	if err != nil {
		return nil, err
	}
	var ask []string
	for _, d := range digits {
		if cached[d] == nil {
			ask = append(ask, d)
		}
	}
	if len(ask) > 0 {
		res, err := eng.(engine.NumberChecker).CheckNumbers(ctx, ask)
		if err != nil {
			return nil, err
		}
		if err := r.cacheChecks(ctx, eng.ID(), res, cached); err != nil {
			return nil, err
		}
	}
	out := &model.NumberCheckResult{EngineID: eng.ID(), Items: make([]*model.NumberStatus, len(digits))}
	for i, d := range digits {
		out.Items[i] = numberStatus(phones[i], cached[d])
	}
	return out, nil
}

// cachedChecks reads the engine's answers about digits younger than the cache's
// lifetime, by number, having dropped the workspace's expired ones.
func (r *Resolver) cachedChecks(ctx context.Context, engineID string, digits []string) (map[string]*ent.NumberCheck, error) {
	since := time.Now().Add(-NumberCheckTTL)
	if _, err := r.Client.NumberCheck.Delete().Where(numbercheck.CheckedAtLT(since)).Exec(ctx); err != nil {
		return nil, err
	}
	rows, err := r.Client.NumberCheck.Query().Where(numbercheck.EngineID(engineID), numbercheck.PhoneIn(digits...),
		numbercheck.CheckedAtGTE(since)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*ent.NumberCheck, len(digits))
	for _, row := range rows {
		out[row.Phone] = row
	}
	return out, nil
}

// cacheChecks stores the engine's answers (replacing older ones) and adds them
// to cached.
func (r *Resolver) cacheChecks(ctx context.Context, engineID string, res []engine.NumberStatus, cached map[string]*ent.NumberCheck) error {
	// Microseconds: what PostgreSQL keeps, so that a cached answer tells the same time.
	ws, now := viewerWorkspace(ctx), time.Now().UTC().Truncate(time.Microsecond)
	creates := make([]*ent.NumberCheckCreate, len(res))
	for i, s := range res {
		creates[i] = r.Client.NumberCheck.Create().SetWorkspaceID(ws).SetEngineID(engineID).SetPhone(s.Phone).
			SetOnNetwork(s.OnNetwork).SetJid(s.ChatID).SetLid(s.LID).SetIsBusiness(s.IsBusiness).
			SetBusinessName(s.BusinessName).SetCheckedAt(now)
		cached[s.Phone] = &ent.NumberCheck{Phone: s.Phone, OnNetwork: s.OnNetwork, Jid: s.ChatID, Lid: s.LID,
			IsBusiness: s.IsBusiness, BusinessName: s.BusinessName, CheckedAt: now}
	}
	return r.Client.NumberCheck.CreateBulk(creates...).
		OnConflictColumns(numbercheck.FieldWorkspaceID, numbercheck.FieldEngineID, numbercheck.FieldPhone).
		UpdateNewValues().Exec(ctx)
}

// numberStatus is the answer about the number given as phone (c: what the
// network said; nil when it said nothing, as not on the network).
func numberStatus(phone string, c *ent.NumberCheck) *model.NumberStatus {
	st := &model.NumberStatus{Phone: phone, CheckedAt: time.Now().UTC()}
	if c == nil {
		return st
	}
	st.OnWhatsApp, st.IsBusiness, st.CheckedAt = c.OnNetwork, c.IsBusiness, c.CheckedAt.UTC()
	st.ChatID, st.Lid, st.BusinessName = nonEmpty(c.Jid), nonEmpty(c.Lid), nonEmpty(c.BusinessName)
	return st
}

// blockedContacts is the use case behind blockedContacts (GET /v1/contacts/blocked).
func (r *Resolver) blockedContacts(ctx context.Context, engineID *string) (*model.BlockedContacts, error) {
	eng, err := r.actingEngine(ctx, engineID, engine.CapBlockList, "reading the block list")
	if err != nil {
		return nil, err
	}
	return r.blocklistOf(ctx, eng)
}

func (r *Resolver) blocklistOf(ctx context.Context, eng engine.Engine) (*model.BlockedContacts, error) {
	ids, err := eng.(engine.Blocker).Blocklist(ctx)
	if err != nil {
		return nil, err
	}
	return &model.BlockedContacts{EngineID: eng.ID(), Items: ids, Total: len(ids)}, nil
}

// setBlocked is the use case behind blockContact and unblockContact (POST and
// DELETE /v1/contacts/{id}/block): the block list as it then is.
func (r *Resolver) setBlocked(ctx context.Context, id string, engineID *string, blocked bool) (*model.BlockedContacts, error) {
	jid, err := NormalizeChatID(id)
	if err != nil || engine.ChatKind(jid) != engine.ChatContact {
		msg := "id must be a phone number in E.164 form (+15551234567), a contact id (<digits>@c.us) or a LID (<digits>@lid)"
		return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: msg + ".",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "Invalid contact " + quote(id)}}}
	}
	eng, err := r.actingEngine(ctx, engineID, engine.CapBlockList, "changing the block list")
	if err != nil {
		return nil, err
	}
	b := eng.(engine.Blocker)
	do := b.Unblock
	if blocked {
		do = b.Block
	}
	if err := r.act(ctx, func() error { return do(ctx, jid) }); err != nil {
		return nil, err
	}
	return r.blocklistOf(ctx, eng)
}
