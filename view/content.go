package view

import "github.com/switchboardhq/switchboard/ent"

// Content is what a chat message carries beyond its text (Switchboard
// additions to the spec's chat message): the network's type of the message,
// its attachment's details (a caption is the message's text), the place it
// shares, its contact cards and, for an unknown kind, the network's name of it.
type Content struct {
	// WireType is the network's type: chat, image, video, document, audio, ptt,
	// sticker, gif, ptv, poll_creation, location, vcard, multi_vcard, unknown,
	// revoked (what messageTypes filters by).
	WireType  string    `json:"wireType,omitempty"`
	MediaKind string    `json:"mediaKind,omitempty"`
	MimeType  string    `json:"mimetype,omitempty"`
	Size      int64     `json:"size,omitempty"`
	SHA256    string    `json:"sha256,omitempty"`
	Width     int       `json:"width,omitempty"`
	Height    int       `json:"height,omitempty"`
	Duration  int       `json:"duration,omitempty"`
	Location  *Location `json:"location,omitempty"`
	VCards    []VCard   `json:"vCards,omitempty"`
	RawType   string    `json:"rawType,omitempty"`
}

// Location is the place a location message shares.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

// VCard is a contact card a message shares.
type VCard struct {
	DisplayName string `json:"displayName,omitempty"`
	VCard       string `json:"vcard"`
}

// NewContent renders what m carries beyond its text.
func NewContent(m *ent.Message) Content {
	c := Content{WireType: m.WireType, MediaKind: m.MediaKind, MimeType: m.MediaMime, Size: m.MediaSize,
		SHA256: m.MediaSha256, Width: m.MediaWidth, Height: m.MediaHeight, Duration: m.MediaSeconds, RawType: m.RawType}
	if m.Latitude != nil && m.Longitude != nil {
		c.Location = &Location{Latitude: *m.Latitude, Longitude: *m.Longitude, Name: m.LocationName, Address: m.LocationAddress}
	}
	for i, card := range m.Vcards {
		v := VCard{VCard: card}
		if i < len(m.VcardNames) {
			v.DisplayName = m.VcardNames[i]
		}
		c.VCards = append(c.VCards, v)
	}
	return c
}
