package graph

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Bounds of the account's profile (WhatsApp's own: its apps allow a push name
// of 25 characters and an about text of 139).
const (
	maxPushName = 25
	maxAbout    = 139
	// keepPictureURL is how long the media-store URL of a profile picture is
	// answered again for the same picture before it is stored anew (well
	// within the media retention).
	keepPictureURL = time.Hour
)

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// profile is the use case behind profile (GET /v1/profile).
func (r *Resolver) profile(ctx context.Context, engineID *string) (*model.Profile, error) {
	pr, eng, err := actingAs[engine.Profiler](ctx, r, engineID, "profile", "the profile")
	if err != nil {
		return nil, err
	}
	id := eng.ID()
	return r.readProfile(ctx, pr, id)
}

// readProfile reads the profile through pr and stores its picture in the
// media store (once per picture and hour).
func (r *Resolver) readProfile(ctx context.Context, pr engine.Profiler, engineID string) (*model.Profile, error) {
	p, err := pr.Profile(ctx)
	if err != nil {
		return nil, err
	}
	out := &model.Profile{EngineID: engineID, ID: p.ID, PushName: p.PushName, About: p.About}
	if p.PictureID == "" {
		return out, nil
	}
	out.PictureID = &p.PictureID
	key := viewerWorkspace(ctx) + "|" + engineID + "|" + p.PictureID
	if u, ok := pictureURLs.get(key); ok {
		out.PictureURL = &u
		return out, nil
	}
	pic, err := pr.ProfilePicture(ctx)
	if errors.Is(err, engine.ErrNotFound) {
		return out, nil // removed in between
	} else if err != nil {
		return nil, err
	}
	o, err := r.Media.Save(ctx, bytes.NewReader(pic.Data), cmpOr(pic.MimeType, "image/jpeg"), "profile-"+p.PictureID+".jpg")
	if err != nil {
		return nil, err
	}
	pictureURLs.put(key, o.URL)
	out.PictureURL = &o.URL
	return out, nil
}

// pictureURLs remembers the media-store URL of the profile pictures stored
// lately, by workspace, engine and picture id.
var pictureURLs = &urlCache{urls: map[string]cachedURL{}}

type urlCache struct {
	mu   sync.Mutex
	urls map[string]cachedURL
}

type cachedURL struct {
	url string
	at  time.Time
}

func (c *urlCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.urls[key]
	return u.url, ok && time.Since(u.at) < keepPictureURL
}

func (c *urlCache) put(key, url string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.urls) >= 1024 {
		clear(c.urls)
	}
	c.urls[key] = cachedURL{url: url, at: time.Now()}
}

// updateProfile is the use case behind updateProfile (PATCH /v1/profile).
func (r *Resolver) updateProfile(ctx context.Context, engineID *string, in model.ProfileInput) (*model.Profile, error) {
	var p switchboard.Problems
	if in.PushName == nil && in.About == nil {
		p.Add("body", "too_small", "Give at least one of pushName, about")
	}
	if n := in.PushName; n != nil && (strings.TrimSpace(*n) == "" || utf8.RuneCountInString(*n) > maxPushName) {
		p.Add("pushName", "too_big", "pushName must be 1-%d characters, not only spaces", maxPushName)
	}
	if a := in.About; a != nil && (strings.TrimSpace(*a) == "" || utf8.RuneCountInString(*a) > maxAbout) {
		p.Add("about", "too_big", "about must be 1-%d characters, not only spaces", maxAbout)
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	return r.changeProfile(ctx, engineID, func(context.Context) (engine.ProfileUpdate, error) {
		return engine.ProfileUpdate{PushName: in.PushName, About: in.About}, nil
	})
}

// setProfilePicture is the use case behind setProfilePicture (PUT
// /v1/profile/picture): a PNG or JPEG, as for a group's picture.
func (r *Resolver) setProfilePicture(ctx context.Context, engineID *string, in model.GroupPictureInput) (*model.Profile, error) {
	if err := checkPictureInput(in); err != nil {
		return nil, err
	}
	return r.changeProfile(ctx, engineID, func(ctx context.Context) (engine.ProfileUpdate, error) {
		pic, err := r.picture(ctx, in)
		return engine.ProfileUpdate{Picture: &pic}, err
	})
}

// removeProfilePicture is the use case behind removeProfilePicture (DELETE
// /v1/profile/picture).
func (r *Resolver) removeProfilePicture(ctx context.Context, engineID *string) (*model.Profile, error) {
	return r.changeProfile(ctx, engineID, func(context.Context) (engine.ProfileUpdate, error) {
		return engine.ProfileUpdate{Picture: &engine.Media{}}, nil
	})
}

// changeProfile picks the engine, builds the change (after the engine is
// known: an image is fetched only for an engine that can take it), makes it
// and answers the profile as it then is.
func (r *Resolver) changeProfile(ctx context.Context, engineID *string, build func(context.Context) (engine.ProfileUpdate, error)) (*model.Profile, error) {
	pr, eng, err := actingAs[engine.Profiler](ctx, r, engineID, "profile", "the profile")
	if err != nil {
		return nil, err
	}
	id := eng.ID()
	u, err := build(ctx)
	if err != nil {
		return nil, err
	}
	if err := pr.SetProfile(ctx, u); errors.Is(err, engine.ErrRejected) {
		return nil, fieldError(switchboard.EVALIDATION, "file", "not_an_image", "The network refused the picture: "+err.Error())
	} else if err != nil {
		return nil, err
	}
	return r.readProfile(ctx, pr, id)
}
