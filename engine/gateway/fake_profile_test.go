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

// GetUserInfo answers the account's own entry only (what the tests ask).
func (f *fakeClient) GetUserInfo(_ context.Context, jids []types.JID) (map[types.JID]types.UserInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[types.JID]types.UserInfo{}
	for _, j := range jids {
		if j.User == f.own.User {
			out[j] = types.UserInfo{Status: f.profile.about, PictureID: f.profile.pictureID}
		}
	}
	return out, nil
}

func (f *fakeClient) GetProfilePictureInfo(_ context.Context, jid types.JID, _ *whatsmeow.GetProfilePictureParams) (*types.ProfilePictureInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if jid.User != f.own.User || f.profile.picture == nil {
		return nil, whatsmeow.ErrProfilePictureNotSet
	}
	return &types.ProfilePictureInfo{URL: f.profile.pictureURL, ID: f.profile.pictureID, Type: "image"}, nil
}

func (f *fakeClient) RejectCall(_ context.Context, from types.JID, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profile.rejected = append(f.profile.rejected, from.ToNonAD().String()+" "+id)
	return nil
}
