package engine

import (
	"context"
	"time"
)

// CapContactDetails names ContactDetailer in a remote engine's hello and
// in not_supported errors.
const CapContactDetails = "contact_details"

// ContactDetailer is an engine that reads what the network tells of a contact
// (docs/contact-details.md): its push name, about text, business profile and
// profile picture. A number that is not on the network is ErrNotFound.
type ContactDetailer interface {
	// ContactDetails reads the details of the contact jid (<digits>@c.us or
	// <digits>@lid) from the network.
	ContactDetails(ctx context.Context, jid string) (ContactDetails, error)
}

// ContactDetails is what the network tells of a contact. Empty fields are
// unknown or unset (a contact may hide its about text or picture).
type ContactDetails struct {
	// PushName is the name the contact gave themselves, when the engine knows it.
	PushName string `json:"pushName,omitempty"`
	// About is the contact's about text (WhatsApp's "status" of a user).
	About string `json:"about,omitempty"`
	// AboutSetAt is when the about text was set, when known.
	AboutSetAt time.Time `json:"aboutSetAt,omitzero"`
	// IsBusiness: the contact is a WhatsApp Business account.
	IsBusiness bool `json:"isBusiness,omitempty"`
	// Business is the business profile of a business account.
	Business *BusinessProfile `json:"business,omitempty"`
	// Picture is the contact's profile picture, nil when it has none (or hides it).
	Picture *ProfilePicture `json:"picture,omitempty"`
}

// BusinessProfile is a business account's public profile.
type BusinessProfile struct {
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Address     string          `json:"address,omitempty"`
	Email       string          `json:"email,omitempty"`
	Websites    []string        `json:"websites,omitempty"`
	Categories  []string        `json:"categories,omitempty"`
	Timezone    string          `json:"timezone,omitempty"`
	Hours       []BusinessHours `json:"hours,omitempty"`
}

// BusinessHours is a business's opening hours on one day of the week.
type BusinessHours struct {
	// Day is the day, as the network names it (mon, tue, …).
	Day string `json:"day"`
	// Mode is specific_hours, open_24h or appointment_only.
	Mode string `json:"mode"`
	// OpenTime and CloseTime are minutes after midnight, with specific_hours.
	OpenTime  int `json:"openTime,omitempty"`
	CloseTime int `json:"closeTime,omitempty"`
}

// ProfilePicture is a contact's profile picture: its id on the network (it
// changes with the picture) and either its bytes or a URL to fetch them from.
type ProfilePicture struct {
	ID       string `json:"id"`
	URL      string `json:"url,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}
