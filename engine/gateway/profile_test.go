package gateway

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
)

// The account's profile: each field reaches its whatsmeow call (the push name
// as an app state patch, the about as SetStatusMessage, the picture as
// SetGroupPhoto with no target), and reads come back from the store and the
// network (GetUserInfo, GetProfilePictureInfo and the CDN).
func TestOwnProfile(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.f.mu.Lock()
		defer h.f.mu.Unlock()
		_, _ = w.Write(h.f.profile.picture)
	}))
	defer cdn.Close()
	h.f.profile.pictureURL = cdn.URL + "/pp.jpg"

	if _, err := h.e.ProfilePicture(ctx); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("picture before one is set: %v, want ErrNotFound", err)
	}
	name, about := "Acme support", "Open 9-5"
	var wide bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 1000, 800))
	img.Set(500, 400, color.White)
	_ = png.Encode(&wide, img)
	u := engine.ProfileUpdate{PushName: &name, About: &about, Picture: &engine.Media{Data: wide.Bytes(), MimeType: "image/png"}}
	if err := h.e.SetProfile(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := len(h.f.appState); n != 1 || h.f.appState[0].Mutations[0].Value.GetPushNameSetting().GetName() != name {
		t.Errorf("app state patches %+v, want one push name setting", h.f.appState)
	}
	if diff := cmp.Diff([]string{about}, h.f.profile.statusSets); diff != "" {
		t.Errorf("SetStatusMessage (-want +got):\n%s", diff)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(h.f.profile.picture))
	if err != nil || cfg.Width != 640 || cfg.Height != 640 {
		t.Errorf("picture uploaded: %+v %v, want a 640x640 JPEG", cfg, err)
	}
	got, err := h.e.Profile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Profile{ID: "15550001111@c.us", PushName: name, About: about, PictureID: h.f.profile.pictureID}
	if diff := cmp.Diff(want, got); diff != "" || got.PictureID == "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	pic, err := h.e.ProfilePicture(ctx)
	if err != nil || !bytes.Equal(pic.Data, h.f.profile.picture) || pic.MimeType != "image/jpeg" {
		t.Errorf("picture read: %d bytes %q %v", len(pic.Data), pic.MimeType, err)
	}
	if err := h.e.SetProfile(ctx, engine.ProfileUpdate{Picture: &engine.Media{Data: []byte("GIF89a")}}); !errors.Is(err, engine.ErrRejected) {
		t.Errorf("a picture that is not an image: %v, want ErrRejected", err)
	}
}
