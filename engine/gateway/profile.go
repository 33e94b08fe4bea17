package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // profile pictures are PNG or JPEG
	"io"
	"net/http"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/types"
	"golang.org/x/image/draw"

	"github.com/switchboardhq/switchboard/engine"
)

// profilePictureSide is the side of the square JPEG WhatsApp keeps as a
// profile picture (its apps crop and scale to it before upload).
const profilePictureSide = 640

// maxProfilePicture bounds the bytes of a profile picture read from the CDN.
const maxProfilePicture = 5 << 20

var _ engine.Profiler = (*Engine)(nil)

// Profile implements engine.Profiler: the push name from the device store
// (kept by whatsmeow from the app state), the about text and picture id from
// the network (GetUserInfo of the account's own JID).
func (e *Engine) Profile(ctx context.Context) (engine.Profile, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.Profile{}, err
	}
	own := cl.OwnID().ToNonAD()
	out := engine.Profile{ID: chatID(own), PushName: cl.OwnPushName()}
	info, err := cl.GetUserInfo(ctx, []types.JID{own})
	if err != nil {
		return engine.Profile{}, fmt.Errorf("gateway: own profile: %w", err)
	}
	if u, ok := info[own]; ok {
		out.About, out.PictureID = u.Status, u.PictureID
	}
	return out, nil
}

// ProfilePicture implements engine.Profiler: the full picture's URL from the
// network (GetProfilePictureInfo), its bytes from the CDN.
func (e *Engine) ProfilePicture(ctx context.Context) (engine.Media, error) {
	cl, err := e.ready()
	if err != nil {
		return engine.Media{}, err
	}
	info, err := cl.GetProfilePictureInfo(ctx, cl.OwnID().ToNonAD(), &whatsmeow.GetProfilePictureParams{})
	switch {
	case errors.Is(err, whatsmeow.ErrProfilePictureNotSet), err == nil && (info == nil || info.URL == ""):
		return engine.Media{}, engine.ErrNotFound
	case err != nil:
		return engine.Media{}, fmt.Errorf("gateway: own profile picture: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, info.URL, nil)
	if err != nil {
		return engine.Media{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return engine.Media{}, fmt.Errorf("gateway: own profile picture: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return engine.Media{}, fmt.Errorf("gateway: own profile picture: the CDN answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxProfilePicture+1))
	if err != nil {
		return engine.Media{}, err
	} else if len(data) > maxProfilePicture {
		return engine.Media{}, fmt.Errorf("gateway: own profile picture larger than %d bytes", maxProfilePicture)
	}
	return engine.Media{Data: data, MimeType: "image/jpeg", Filename: "profile-" + info.ID + ".jpg"}, nil
}

// SetProfile implements engine.Profiler: the push name through the app state
// (appstate.BuildSettingPushName), the about text with SetStatusMessage, the
// picture with SetGroupPhoto aimed at no group (the account itself) as a
// square JPEG of at most 640 pixels a side.
func (e *Engine) SetProfile(ctx context.Context, u engine.ProfileUpdate) error {
	cl, err := e.ready()
	if err != nil {
		return err
	}
	var pic []byte
	if u.Picture != nil && len(u.Picture.Data) > 0 {
		if pic, err = profileJPEG(u.Picture.Data); err != nil {
			return err
		}
	}
	if u.PushName != nil {
		if err := cl.SendAppState(ctx, appstate.BuildSettingPushName(*u.PushName)); err != nil {
			return fmt.Errorf("gateway: push name: %w", err)
		}
	}
	if u.About != nil {
		if err := cl.SetStatusMessage(ctx, types.SetStatusInput{Text: u.About}); err != nil {
			return fmt.Errorf("gateway: about: %w", err)
		}
	}
	if u.Picture != nil {
		_, err := cl.SetGroupPhoto(ctx, types.EmptyJID, pic)
		if errors.Is(err, whatsmeow.ErrInvalidImageFormat) {
			return fmt.Errorf("%w: the network refused the picture: %v", engine.ErrRejected, err)
		} else if err != nil {
			return fmt.Errorf("gateway: profile picture: %w", err)
		}
	}
	return nil
}

// profileJPEG returns a PNG or JPEG image as the square JPEG WhatsApp keeps:
// the centre square, scaled down to profilePictureSide when larger.
func profileJPEG(data []byte) ([]byte, error) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: the picture is not a PNG or JPEG image: %v", engine.ErrRejected, err)
	}
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	if side == b.Dx() && side == b.Dy() && side <= profilePictureSide && bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}) {
		return data, nil
	}
	crop := image.Rect(b.Min.X+(b.Dx()-side)/2, b.Min.Y+(b.Dy()-side)/2, 0, 0)
	crop.Max = crop.Min.Add(image.Pt(side, side))
	out := image.NewRGBA(image.Rect(0, 0, min(side, profilePictureSide), min(side, profilePictureSide)))
	draw.CatmullRom.Scale(out, out.Bounds(), img, crop, draw.Src, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: 90}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
