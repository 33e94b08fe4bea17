package engine

import (
	"slices"
	"strconv"
)

// Message types of an Incoming beyond text, media and poll.
const (
	// TypeLocation is a location (Incoming.Location), shared once or live.
	TypeLocation = "location"
	// TypeVCard is one or more contact cards (Incoming.Contacts).
	TypeVCard = "vcard"
	// TypeUnknown is a message of a kind Switchboard does not map; RawType names
	// it. It is stored, never dropped.
	TypeUnknown = "unknown"
)

// MediaKinds are the kinds of media a message may carry: voice is a voice note
// (the network's ptt), ptv a video note, gif a video played as a loop.
var MediaKinds = []string{"image", "video", "gif", "audio", "voice", "document", "sticker", "ptv"}

// MediaInfo is what the network tells of a message's attachment (not its
// bytes: an engine that has them serves them through MediaFetcher).
type MediaInfo struct {
	Kind     string `json:"kind"`
	MimeType string `json:"mimeType,omitempty"`
	Filename string `json:"filename,omitempty"`
	// Size is the file's length in bytes.
	Size int64 `json:"size,omitempty"`
	// SHA256 is the hex SHA-256 of the file's plain bytes.
	SHA256  string `json:"sha256,omitempty"`
	Caption string `json:"caption,omitempty"`
	Width   int    `json:"width,omitempty"`
	Height  int    `json:"height,omitempty"`
	// Seconds is the duration of audio and video.
	Seconds int `json:"seconds,omitempty"`
	// Ref is the engine's own reference to download the file later, kept with
	// the message and handed back to MediaRefFetcher.FetchMediaRef: with it the
	// bytes can be had after a restart, or by another process that took the
	// session over (the gateway's: the direct path and the keys). Opaque to
	// Switchboard; at most MaxMediaRef bytes.
	Ref []byte `json:"ref,omitempty"`
}

// MaxMediaRef bounds MediaInfo.Ref.
const MaxMediaRef = 4 << 10

// Location is a place a message shares.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	// Live marks a live location (its first position).
	Live bool `json:"live,omitempty"`
}

// ContactCard is a contact shared in a message: its shown name and its vCard.
type ContactCard struct {
	DisplayName string `json:"displayName,omitempty"`
	VCard       string `json:"vcard"`
}

// WireType is the network's type of the message: chat, poll_creation, a
// media kind's (see WireType), location, vcard (one card), multi_vcard,
// unknown.
func (m Incoming) WireType() string {
	kind := ""
	if m.Media != nil {
		kind = m.Media.Kind
	}
	return ContentWireType(m.Type, kind, len(m.Contacts))
}

// ContentWireType is the network's type of a message of type typ with media of
// kind mediaKind and cards contact cards: WireType's, and multi_vcard for a
// vcard message of more than one card.
func ContentWireType(typ, mediaKind string, cards int) string {
	if typ == TypeVCard && cards > 1 {
		return "multi_vcard"
	}
	return WireType(typ, mediaKind)
}

// Bounds of what a message's content may carry, in and out.
const (
	// MaxShortText bounds names, addresses and file names, in bytes.
	MaxShortText = maxShortText
	// MaxVCard bounds one contact card's vCard, in bytes.
	MaxVCard = maxVCard
	// MaxContacts bounds the contact cards of one message.
	MaxContacts = maxContacts
)

const (
	maxCaption     = 64 << 10
	maxShortText   = 1 << 10 // names, addresses, file names
	maxVCard       = 64 << 10
	maxContacts    = 256
	maxMediaSize   = 1 << 40
	maxDimension   = 1 << 16
	maxMediaLength = 7 * 24 * 3600 // seconds
)

// validateContent checks what a message carries beyond its text: the media,
// location and contact cards its type needs, each within bounds.
func validateContent(path string, m Incoming) error {
	switch m.Type {
	case TypeLocation:
		if m.Location == nil {
			return invalid(path+".location", "is missing")
		}
	case TypeVCard:
		if len(m.Contacts) == 0 {
			return invalid(path+".vCards", "must hold at least one contact card")
		}
	}
	if err := validateMedia(path+".media", m.Media); err != nil {
		return err
	}
	if l := m.Location; l != nil {
		switch {
		case l.Latitude < -90 || l.Latitude > 90:
			return invalid(path+".location.latitude", "must be between -90 and 90")
		case l.Longitude < -180 || l.Longitude > 180:
			return invalid(path+".location.longitude", "must be between -180 and 180")
		}
		if err := validateLen(path+".location.name", l.Name, maxShortText); err != nil {
			return err
		}
		if err := validateLen(path+".location.address", l.Address, maxShortText); err != nil {
			return err
		}
	}
	if len(m.Contacts) > maxContacts {
		return invalid(path+".vCards", "must hold at most %d contact cards", maxContacts)
	}
	for i, c := range m.Contacts {
		p := path + ".vCards." + strconv.Itoa(i)
		if c.VCard == "" {
			return invalid(p+".vcard", "is missing")
		}
		if err := validateLen(p+".vcard", c.VCard, maxVCard); err != nil {
			return err
		}
		if err := validateLen(p+".displayName", c.DisplayName, maxShortText); err != nil {
			return err
		}
	}
	return validateID(path+".rawType", m.RawType, false)
}

// validateMedia checks a message's media, when it has some.
func validateMedia(path string, md *MediaInfo) error {
	if md == nil {
		return nil
	}
	if !slices.Contains(MediaKinds, md.Kind) {
		return invalid(path+".kind", "must be one of %v", MediaKinds)
	}
	if len(md.Ref) > MaxMediaRef {
		return invalid(path+".ref", "must be at most %d bytes", MaxMediaRef)
	}
	switch {
	case md.Size < 0 || md.Size > maxMediaSize:
		return invalid(path+".size", "must be between 0 and %d", int64(maxMediaSize))
	case md.Width < 0 || md.Width > maxDimension:
		return invalid(path+".width", "must be between 0 and %d", maxDimension)
	case md.Height < 0 || md.Height > maxDimension:
		return invalid(path+".height", "must be between 0 and %d", maxDimension)
	case md.Seconds < 0 || md.Seconds > maxMediaLength:
		return invalid(path+".seconds", "must be between 0 and %d", maxMediaLength)
	case md.SHA256 != "" && !isSHA256Hex(md.SHA256):
		return invalid(path+".sha256", "must be 64 lowercase hex digits")
	}
	if err := validateID(path+".mimeType", md.MimeType, false); err != nil {
		return err
	}
	if err := validateLen(path+".filename", md.Filename, maxShortText); err != nil {
		return err
	}
	return validateLen(path+".caption", md.Caption, maxCaption)
}

func validateLen(path, s string, n int) error {
	if len(s) > n {
		return invalid(path, "is longer than %d bytes", n)
	}
	return nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
