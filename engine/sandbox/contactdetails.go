package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/engine"
)

var _ engine.ContactDetailer = (*Engine)(nil)

// The sandbox's contact details (docs/contact-details.md) depend only on the
// number, so that every run answers the same:
//
//	...0000  not on the network (ErrNotFound)
//	...9999  hides its about text and picture (neither is answered)
//	...8888  a business account with a whole business profile (SandboxBusiness)
//	other    about text SandboxAbout, a 16x16 PNG picture whose colour and id
//	         (SandboxPictureID) follow from the number; a contact of the
//	         world's address book has its push name, and is a business account
//	         (a profile like ...8888's) when the book says so
const SandboxAbout = "Hey there! I am using the sandbox."

// SandboxPictureID is the picture id of a number's sandbox profile picture.
func SandboxPictureID(digits string) string { return "sbx-" + digits }

// SandboxBusiness is the business profile of a sandbox business account.
func SandboxBusiness(digits string) *engine.BusinessProfile {
	last := digits[max(0, len(digits)-4):]
	return &engine.BusinessProfile{
		Name: "Sandbox Shop " + last, Description: "A simulated business of the sandbox.",
		Address: last + " Market Street, Springfield", Email: "shop" + last + "@example.com",
		Websites: []string{"https://example.com/shop/" + last}, Categories: []string{"Shopping & Retail"},
		Timezone: "UTC", Hours: []engine.BusinessHours{
			{Day: "mon", Mode: "specific_hours", OpenTime: 540, CloseTime: 1080},
			{Day: "tue", Mode: "specific_hours", OpenTime: 540, CloseTime: 1080},
			{Day: "wed", Mode: "specific_hours", OpenTime: 540, CloseTime: 1080},
			{Day: "thu", Mode: "specific_hours", OpenTime: 540, CloseTime: 1080},
			{Day: "fri", Mode: "specific_hours", OpenTime: 540, CloseTime: 1080},
			{Day: "sat", Mode: "open_24h"},
			{Day: "sun", Mode: "appointment_only"},
		},
	}
}

// ContactDetails implements engine.ContactDetailer with the sandbox's
// deterministic details (see SandboxAbout).
func (e *Engine) ContactDetails(ctx context.Context, jid string) (engine.ContactDetails, error) {
	var d engine.ContactDetails
	if engine.ChatKind(jid) != engine.ChatContact {
		return d, fmt.Errorf("%w: not a contact id %q", engine.ErrRejected, jid)
	}
	w, _, err := e.world(ctx)
	if err != nil {
		return d, err
	}
	digits := recipientDigits(numberOf(jid))
	switch {
	case strings.HasSuffix(digits, "0000"):
		return d, fmt.Errorf("%w: %s is not on the network", engine.ErrNotFound, jid)
	case strings.HasSuffix(digits, "8888"):
		d.IsBusiness = true
	}
	for _, c := range w.contacts {
		if c.ID == numberOf(jid) {
			d.PushName, d.IsBusiness = c.PushName, d.IsBusiness || c.IsBusiness
		}
	}
	if d.IsBusiness {
		d.Business = SandboxBusiness(digits)
	}
	if strings.HasSuffix(digits, "9999") {
		return d, nil
	}
	d.About = SandboxAbout
	n, _ := strconv.ParseUint(digits[max(0, len(digits)-9):], 10, 64)
	d.Picture = &engine.ProfilePicture{ID: SandboxPictureID(digits), Data: mediaBytes("image/png", n), MimeType: "image/png"}
	return d, nil
}
