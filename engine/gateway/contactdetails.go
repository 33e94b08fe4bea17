package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/engine"
)

var _ engine.ContactDetailer = (*Engine)(nil)

// ContactDetails implements engine.ContactDetailer with three whatsmeow calls:
// GetUserInfo (about text, picture id, verified business name; a number with
// no devices is not on WhatsApp: ErrNotFound), GetProfilePictureInfo (the
// picture's URL on WhatsApp's CDN, which the core fetches and stores) and, for a
// business account, GetBusinessProfile. A hidden or unset picture is no picture.
func (e *Engine) ContactDetails(ctx context.Context, jid string) (engine.ContactDetails, error) {
	var d engine.ContactDetails
	cl, err := e.ready()
	if err != nil {
		return d, err
	}
	j, err := parseChat(jid)
	if err != nil || (j.Server != types.DefaultUserServer && j.Server != types.HiddenUserServer) {
		return d, fmt.Errorf("%w: not a contact id %q", engine.ErrRejected, jid)
	}
	infos, err := cl.GetUserInfo(ctx, []types.JID{j})
	if err != nil {
		return d, err
	}
	info, ok := infos[j]
	if !ok || len(info.Devices) == 0 {
		return d, fmt.Errorf("%w: %s is not on WhatsApp", engine.ErrNotFound, jid)
	}
	d.About = info.Status
	if info.VerifiedName != nil {
		d.IsBusiness = true
		d.Business = &engine.BusinessProfile{Name: info.VerifiedName.Details.GetVerifiedName()}
		bp, err := cl.GetBusinessProfile(ctx, j)
		if err != nil {
			return d, err
		}
		fillBusiness(d.Business, bp)
	}
	if info.PictureID != "" {
		pic, err := cl.GetProfilePictureInfo(ctx, j, &whatsmeow.GetProfilePictureParams{})
		switch {
		case errors.Is(err, whatsmeow.ErrProfilePictureNotSet), errors.Is(err, whatsmeow.ErrProfilePictureUnauthorized):
		case err != nil:
			return d, err
		case pic != nil:
			d.Picture = &engine.ProfilePicture{ID: pic.ID, URL: pic.URL}
		}
	}
	return d, nil
}

// fillBusiness copies what whatsmeow parses of a business profile: address,
// email, categories, hours (minutes after midnight) and their time zone, and
// the description and website when the profile's options hold them.
func fillBusiness(out *engine.BusinessProfile, bp *types.BusinessProfile) {
	if bp == nil {
		return
	}
	out.Address, out.Email, out.Timezone = bp.Address, bp.Email, bp.BusinessHoursTimeZone
	out.Description = bp.ProfileOptions["description"]
	if w := bp.ProfileOptions["website"]; w != "" {
		out.Websites = []string{w}
	}
	for _, c := range bp.Categories {
		out.Categories = append(out.Categories, c.Name)
	}
	for _, h := range bp.BusinessHours {
		open, _ := strconv.Atoi(h.OpenTime)
		closing, _ := strconv.Atoi(h.CloseTime)
		out.Hours = append(out.Hours, engine.BusinessHours{Day: h.DayOfWeek, Mode: h.Mode, OpenTime: open, CloseTime: closing})
	}
}

// contactChange maps whatsmeow's events of a contact's details changing to a
// contact report whose Changed says what changed (the core marks the stored
// details stale and sends contact.updated); ok is false for other events, and
// for pictures of groups. Push names are reported by conversationEvent.
func (e *Engine) contactChange(ctx context.Context, cl client, evt any) (engine.Event, bool) {
	var (
		c    engine.ContactInfo
		at   string
		what string
	)
	switch v := evt.(type) {
	case *events.Picture:
		if v.JID.Server != types.DefaultUserServer && v.JID.Server != types.HiddenUserServer {
			return engine.Event{}, false
		}
		c.ID, what, at = e.pnChatID(ctx, cl, v.JID, types.EmptyJID), engine.ContactPicture, v.PictureID+fmt.Sprint(v.Timestamp.Unix())
	case *events.UserAbout:
		c.ID, what, at = e.pnChatID(ctx, cl, v.JID, types.EmptyJID), engine.ContactAbout, digest(v.Status)+fmt.Sprint(v.Timestamp.Unix())
	case *events.BusinessName:
		c.ID, what, at = e.pnChatID(ctx, cl, v.JID, types.EmptyJID), engine.ContactBusiness, digest(v.NewBusinessName)
		c.IsBusiness = v.NewBusinessName != ""
		if v.OldBusinessName == "" { // the first one seen: a business, not a change
			what = ""
		}
	default:
		return engine.Event{}, false
	}
	c.Changed = what
	return engine.Event{ID: "wa_contact_" + what + "_" + c.ID + "_" + at, Type: engine.EventHistory,
		History: &engine.History{Contacts: []engine.ContactInfo{c}}}, true
}
