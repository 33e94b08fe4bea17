// Package music generates songs from lyrics and a style, optionally steered by a
// reference recording. A Provider does the generating: Local renders songs inside
// the process with no external service (the default); HTTP drives a self-hosted
// music-generation API server. Files keeps uploads and finished audio and covers
// on disk and serves the finished ones from unguessable URLs.
package music

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/ent"
)

// Status is a clip's state (and an upload's, always complete), as stored in its
// status column.
type Status string

// Clip statuses, in the order a clip moves through them. Complete and Error are final.
const (
	StatusSubmitted Status = "submitted"
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusStreaming Status = "streaming"
	StatusComplete  Status = "complete"
	StatusError     Status = "error"
)

// Statuses lists every clip status.
var Statuses = []Status{StatusSubmitted, StatusQueued, StatusRunning, StatusStreaming, StatusComplete, StatusError}

// Final reports whether a clip in status will not change again.
func Final(status Status) bool { return status == StatusComplete || status == StatusError }

// StatusOf is c's status, typed: the one conversion from the status column.
func StatusOf(c *ent.MusicClip) Status { return Status(c.Status) }

// Variants is how many clips one generation makes.
const Variants = 2

// Vocal genders a request may ask for; empty lets the provider decide.
const (
	VocalMale   = "m"
	VocalFemale = "f"
)

// Request is one song generation, validated by the caller. Numbers are 0–1.
type Request struct {
	Lyrics         string   `json:"lyrics,omitempty"`
	Style          string   `json:"style"`
	NegativeStyle  string   `json:"negativeStyle,omitempty"`
	Title          string   `json:"title,omitempty"`
	VocalGender    string   `json:"vocalGender,omitempty"`
	Weirdness      *float64 `json:"weirdness,omitempty"`
	StyleInfluence *float64 `json:"styleInfluence,omitempty"`
	AudioInfluence *float64 `json:"audioInfluence,omitempty"`
	Instrumental   bool     `json:"instrumental,omitempty"`
	Model          string   `json:"model,omitempty"`
	// Reference is the path of the uploaded reference recording on disk, if any.
	Reference string `json:"reference,omitempty"`
}

// Song is what a provider reports about one clip. Audio (MP3) and Image (PNG or
// JPEG) are set once Status is StatusComplete.
type Song struct {
	Status       Status
	Title        string
	DurationSec  float64
	Model        string
	Audio        []byte
	Image        []byte
	ErrorType    string
	ErrorMessage string
}

// Account is the provider's view of the credits left.
type Account struct {
	CreditsLeft  float64
	MonthlyLimit *float64
	MonthlyUsage *float64
	Plan         string
}

// Provider makes songs. Start submits a request and returns one opaque handle
// per variant (Variants of them); Fetch reports how the clip behind a handle is
// doing, and is called again until the Song's status is final. Both may be
// called again for the same request after a crash, so they must not assume a
// first call.
type Provider interface {
	// Name identifies the provider in stored clips ("local", "http").
	Name() string
	Start(ctx context.Context, req Request) ([]string, error)
	Fetch(ctx context.Context, req Request, handle string) (*Song, error)
	Account(ctx context.Context) (*Account, error)
}

// ErrRejected marks a request the provider refused for good (bad input, policy):
// the clip ends in StatusError instead of being retried.
var ErrRejected = errors.New("music: request rejected")
