package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/netguard"
	"github.com/switchboardhq/switchboard/storage"
)

// Contact details (docs/contact-details.md): what the network tells of a
// contact, read through one engine and kept on the contact's row.

// DetailsMaxAge is how long details read from the network are answered from
// the store; a change event (a new picture, about text, business name or push
// name) makes them stale at once.
const DetailsMaxAge = 24 * time.Hour

// contactDetails is the use case behind contactDetails (GET
// /v1/contacts/{id}/details): the stored details while fresh, else (or with
// refresh) the network's, read through engineID or the default engine and
// stored when the contact is in the store.
func (r *Resolver) contactDetails(ctx context.Context, id string, engineID *string, refresh *bool) (*model.ContactDetails, error) {
	jid, err := contactIDField(id, "an E.164 number, <digits>@c.us or <digits>@lid")
	if err != nil {
		return nil, err
	}
	eid, err := r.sendingEngine(ctx, engineID)
	if err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.store().Contact(ctx, jid)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	if c != nil {
		jid = c.Jid
		if (refresh == nil || !*refresh) && fresh(c, eid) && r.pictureKept(ctx, c) {
			return detailsOf(c, nil), nil
		}
	}
	eng, err := r.actingEngineID(ctx, eid, engine.CapContactDetails, "reading contact details")
	if err != nil {
		return nil, err
	}
	cd, ok := eng.(engine.ContactDetailer)
	if !ok {
		return nil, switchboard.NotSupported(eng.ID(), engine.CapContactDetails)
	}
	d, err := cd.ContactDetails(ctx, jid)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, notFound("id", "The network knows no account %s.", quote(jid))
	} else if err != nil {
		return nil, err
	}
	return r.keepDetails(ctx, c, jid, eng.ID(), d)
}

// fresh says whether c's stored details may be answered: read less than
// DetailsMaxAge ago (through engineID, when one is named) and not made stale.
func fresh(c *ent.Contact, engineID string) bool {
	return c.DetailsAt != nil && time.Since(*c.DetailsAt) < DetailsMaxAge && (engineID == "" || engineID == c.EngineID)
}

// keepDetails stores what the network told of a contact (c, nil when the
// store does not hold it, is left unstored) and answers it. A picture whose id
// the row holds already is not fetched again.
func (r *Resolver) keepDetails(ctx context.Context, c *ent.Contact, jid, engineID string, d engine.ContactDetails) (*model.ContactDetails, error) {
	var pic []byte
	var mime string
	if p := d.Picture; p != nil && (c == nil || c.PictureID != p.ID || !r.pictureKept(ctx, c)) {
		var err error
		if pic, mime, err = r.pictureOf(ctx, p); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond) // as both databases keep it
	out := &ent.Contact{Jid: jid, PushName: d.PushName, IsBusiness: d.IsBusiness, EngineID: engineID, About: d.About, DetailsAt: &now}
	if c != nil {
		*out = *c
		out.EngineID, out.About, out.DetailsAt, out.IsBusiness = engineID, d.About, &now, d.IsBusiness || c.IsBusiness
		if d.PushName != "" {
			out.PushName = d.PushName
		}
	}
	out.AboutSetAt = nil
	if !d.AboutSetAt.IsZero() {
		t := d.AboutSetAt.UTC().Truncate(time.Millisecond)
		out.AboutSetAt = &t
	}
	out.PictureID, out.Business = "", nil
	if d.Picture != nil {
		out.PictureID = d.Picture.ID
	}
	if d.Business != nil {
		out.Business, _ = json.Marshal(d.Business)
	}
	err := storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		if pic != nil {
			u, err := r.Media.Put(ctx, tx, pic, mime, "picture."+strings.TrimPrefix(mime, "image/"))
			if err != nil {
				return err
			}
			out.PictureURL = u
		} else if d.Picture == nil {
			out.PictureURL = ""
		}
		if c == nil {
			return nil
		}
		u := tx.Contact.UpdateOneID(c.ID).SetEngineID(engineID).SetPushName(out.PushName).SetIsBusiness(out.IsBusiness).
			SetAbout(out.About).SetPictureID(out.PictureID).SetPictureURL(out.PictureURL).
			SetDetailsAt(now)
		if out.AboutSetAt != nil {
			u.SetAboutSetAt(*out.AboutSetAt)
		} else {
			u.ClearAboutSetAt()
		}
		if out.Business != nil {
			u.SetBusiness(out.Business)
		} else {
			u.ClearBusiness()
		}
		return u.Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	return detailsOf(out, d.Business), nil
}

// pictureKept says whether the picture stored for c, if any, is still in the
// media store (media are pruned after their retention).
func (r *Resolver) pictureKept(ctx context.Context, c *ent.Contact) bool {
	if c.PictureURL == "" {
		return c.PictureID == ""
	}
	_, _, ok, err := r.Media.Info(ctx, c.PictureURL)
	return ok && err == nil
}

// pictureOf returns the bytes of a profile picture and their type: the ones
// the engine handed over, or those its URL serves (fetched through the
// private-address guard, at most MaxGroupPicture bytes), checked to be a PNG
// or JPEG image.
func (r *Resolver) pictureOf(ctx context.Context, p *engine.ProfilePicture) ([]byte, string, error) {
	data := p.Data
	if len(data) == 0 && p.URL != "" {
		var err error
		if data, err = r.fetchPicture(ctx, p.URL); err != nil {
			return nil, "", err
		}
	}
	mime, err := checkPicture("picture", data)
	if err != nil {
		return nil, "", switchboard.Errorf(switchboard.EUNAVAILABLE, "The contact's profile picture could not be read: %s", err.(*switchboard.Error).Details[0].Message)
	}
	return data, mime, nil
}

// fetchPicture downloads a profile picture from the network's URL.
func (r *Resolver) fetchPicture(ctx context.Context, raw string) ([]byte, error) {
	unavailable := func(why string) error {
		return switchboard.Errorf(switchboard.EUNAVAILABLE, "The contact's profile picture could not be fetched: %s.", why)
	}
	if err := netguard.CheckURL(ctx, raw, r.MediaAllowPrivate, r.MediaAllowPrivate); err != nil {
		return nil, unavailable(err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, unavailable("a malformed URL")
	}
	resp, err := netguard.Client(pictureURLTimeout, r.MediaAllowPrivate).Do(req)
	if err != nil {
		return nil, unavailable("the request failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, unavailable(fmt.Sprintf("HTTP %d", resp.StatusCode))
	}
	return io.ReadAll(io.LimitReader(resp.Body, MaxGroupPicture+1))
}

// detailsOf is the API's shape of a contact's stored details; business, when
// not nil, is the profile just read (else the row's is decoded).
func detailsOf(c *ent.Contact, business *engine.BusinessProfile) *model.ContactDetails {
	if business == nil && len(c.Business) > 0 && string(c.Business) != "null" {
		business = &engine.BusinessProfile{}
		if json.Unmarshal(c.Business, business) != nil {
			business = nil
		}
	}
	lid := c.Lid
	if lid == "" && engine.IsLID(c.Jid) {
		lid = c.Jid
	}
	out := &model.ContactDetails{ChatID: c.Jid, Lid: ptrOr(lid), Name: ptrOr(c.Name), PushName: ptrOr(c.PushName), IsBusiness: c.IsBusiness,
		About: ptrOr(c.About), AboutSetAt: c.AboutSetAt, PictureURL: ptrOr(c.PictureURL), Business: business, EngineID: ptrOr(c.EngineID)}
	if c.DetailsAt != nil {
		out.RefreshedAt = c.DetailsAt.UTC()
	}
	return out
}

// ptrOr is &s, or nil for "".
func ptrOr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
