package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
)

// fakeProfile is what the fake network holds of the account's profile besides
// its push name, and the calls the account rejected.
type fakeProfile struct {
	about     string
	picture   []byte // the JPEG set, nil for none
	pictureID string
	// pictureURL is where the CDN serves the picture (set by the test).
	pictureURL string
	statusSets []string // the texts of each SetStatusMessage
	rejected   []string // "<caller> <call id>" of each RejectCall
}

// setOwnPicture keeps the account's picture (SetGroupPhoto with no target)
// and returns its new id.
func (f *fakeClient) setOwnPicture(avatar []byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	sum := sha256.Sum256(avatar)
	f.profile.picture, f.profile.pictureID = avatar, hex.EncodeToString(sum[:4])
	return f.profile.pictureID
}

func (f *fakeClient) OwnPushName() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pushName
}

func (f *fakeClient) SetStatusMessage(_ context.Context, status types.SetStatusInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profile.about = *status.Text
	f.profile.statusSets = append(f.profile.statusSets, *status.Text)
	return nil
}

// ownUserInfo is the account's own entry of GetUserInfo, ok false for
// another user's (contactdetails_fake_test.go answers those).
func (f *fakeClient) ownUserInfo(j types.JID) (types.UserInfo, bool) {
	if f.own.IsEmpty() || j.User != f.own.User {
		return types.UserInfo{}, false
	}
	return types.UserInfo{Status: f.profile.about, PictureID: f.profile.pictureID}, true
}

// ownPicture answers GetProfilePictureInfo for the account itself, ok false
// for another user.
func (f *fakeClient) ownPicture(j types.JID) (*types.ProfilePictureInfo, bool, error) {
	if f.own.IsEmpty() || j.User != f.own.User {
		return nil, false, nil
	}
	if f.profile.picture == nil {
		return nil, true, whatsmeow.ErrProfilePictureNotSet
	}
	return &types.ProfilePictureInfo{URL: f.profile.pictureURL, ID: f.profile.pictureID, Type: "image"}, true, nil
}

func (f *fakeClient) RejectCall(_ context.Context, from types.JID, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profile.rejected = append(f.profile.rejected, from.ToNonAD().String()+" "+id)
	return nil
}
