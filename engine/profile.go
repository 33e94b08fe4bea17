package engine

import "context"

// Profiler is an engine that reads and sets the account's own profile: its push
// name (the name its messages show to people who have not saved the number),
// its about text (WhatsApp's status message) and its profile picture.
type Profiler interface {
	// Profile reads the account's profile; PictureID is "" when it has no
	// picture.
	Profile(ctx context.Context) (Profile, error)
	// ProfilePicture reads the bytes of the account's picture (JPEG);
	// ErrNotFound when it has none.
	ProfilePicture(ctx context.Context) (Media, error)
	// SetProfile changes the fields of u that are not nil, in the order push
	// name, about, picture; a picture with no Data removes the picture.
	SetProfile(ctx context.Context, u ProfileUpdate) error
}

// Profile is the account's own profile as the network holds it.
type Profile struct {
	// ID is the account's chat id (<digits>@c.us).
	ID       string `json:"id"`
	PushName string `json:"pushName"`
	About    string `json:"about"`
	// PictureID names the current picture; it changes with the picture.
	PictureID string `json:"pictureId,omitempty"`
}

// ProfileUpdate is a change of the account's profile; nil fields are left as
// they are.
type ProfileUpdate struct {
	PushName *string `json:"pushName,omitempty"`
	About    *string `json:"about,omitempty"`
	// Picture is a JPEG or PNG image; one with no Data removes the picture.
	Picture *Media `json:"picture,omitempty"`
}
