package engine

import (
	"context"
	"fmt"
	"time"
)

// CapStatus is the capability of posting and revoking the account's statuses
// (WhatsApp's stories) (engine protocol capability name).
const CapStatus = "status"

// EventStatus is a status a contact posted (Event.Status).
const EventStatus EventType = "status"

// StatusChat is the network's chat of statuses: a status is a message to it.
const StatusChat = "status@broadcast"

// StatusLifetime is how long a status is shown on the network.
const StatusLifetime = 24 * time.Hour

// StatusPoster is an engine that posts statuses and revokes its own.
type StatusPoster interface {
	// PostStatus posts a status; the Key is the status message's (Remote
	// StatusChat).
	PostStatus(ctx context.Context, s StatusPost) (Key, error)
	// RevokeStatus deletes one of the account's statuses (the message id of
	// the Key PostStatus answered) for everyone who can see it.
	RevokeStatus(ctx context.Context, id string) error
}

// StatusPost is a status to post: a text on a coloured background, or an
// image, video or audio with a caption.
type StatusPost struct {
	// WireID is the id the status goes out under (see WireID).
	WireID string `json:"wireId"`
	// Type is text or media.
	Type string `json:"type"`
	// Text is a text status's text, or a media status's caption.
	Text string `json:"text,omitempty"`
	// BackgroundArgb and TextArgb are a text status's colours (0xAARRGGBB); Font
	// is WhatsApp's font number (0-9).
	BackgroundArgb uint32 `json:"backgroundArgb,omitempty"`
	TextArgb       uint32 `json:"textArgb,omitempty"`
	Font           int    `json:"font,omitempty"`
	// MediaURL and MediaKind are a media status's attachment (image, video,
	// audio or voice), fetched like a message's.
	MediaURL  string `json:"mediaUrl,omitempty"`
	MediaKind string `json:"mediaKind,omitempty"`
	// Audience are the chat ids (<digits>@c.us) the status is for; empty: the
	// account's contacts (as the account's status privacy setting says).
	Audience []string `json:"audience,omitempty"`
}

// StatusUpdate is a status a contact posted, as an EventStatus reports it.
type StatusUpdate struct {
	Key        Key    `json:"key"`
	From       string `json:"from"`
	SenderName string `json:"senderName,omitempty"`
	// Type is text, media or unknown.
	Type           string     `json:"type"`
	Text           string     `json:"text,omitempty"`
	BackgroundArgb uint32     `json:"backgroundArgb,omitempty"`
	Font           int        `json:"font,omitempty"`
	Media          *MediaInfo `json:"media,omitempty"`
	// Revoked marks the author's deletion of the status Key.
	Revoked bool `json:"revoked,omitempty"`
}

// StatusFonts are the fonts a text status may use (WhatsApp's font numbers).
var StatusFonts = []int{0, 1, 2, 6, 7, 8, 9, 10}

// ErrAudience wraps the refusal of an engine that cannot post a status to a
// chosen audience (ErrRejected as well).
var ErrAudience = fmt.Errorf("%w: this engine posts statuses only to the account's status audience", ErrRejected)
