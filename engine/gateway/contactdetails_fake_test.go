package gateway

import (
	"context"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
)

// fakeProfiles is the network's side of contact details, as whatsmeow answers
// them: users on WhatsApp (GetUserInfo: absent users are not on it), business
// profiles and profile pictures (absent: ErrProfilePictureNotSet; hidden:
// ErrProfilePictureUnauthorized). asks records each call as "<call> <jid>".
type fakeProfiles struct {
	users    map[types.JID]types.UserInfo
	business map[types.JID]*types.BusinessProfile
	pictures map[types.JID]*types.ProfilePictureInfo
	hidden   map[types.JID]bool
	asks     []string
}

func (f *fakeClient) GetUserInfo(_ context.Context, jids []types.JID) (map[types.JID]types.UserInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[types.JID]types.UserInfo{}
	for _, j := range jids {
		if u, ok := f.ownUserInfo(j); ok {
			out[j] = u
			continue
		}
		f.profiles.asks = append(f.profiles.asks, "GetUserInfo "+j.String())
		if u, ok := f.profiles.users[j]; ok {
			out[j] = u
		}
	}
	return out, nil
}

func (f *fakeClient) GetBusinessProfile(_ context.Context, j types.JID) (*types.BusinessProfile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiles.asks = append(f.profiles.asks, "GetBusinessProfile "+j.String())
	if bp, ok := f.profiles.business[j]; ok {
		return bp, nil
	}
	return &types.BusinessProfile{JID: j, Categories: []types.Category{}, ProfileOptions: map[string]string{}}, nil
}

func (f *fakeClient) GetProfilePictureInfo(_ context.Context, j types.JID, params *whatsmeow.GetProfilePictureParams) (*types.ProfilePictureInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok, err := f.ownPicture(j); ok {
		return p, err
	}
	f.profiles.asks = append(f.profiles.asks, "GetProfilePictureInfo "+j.String())
	if f.profiles.hidden[j] {
		return nil, whatsmeow.ErrProfilePictureUnauthorized
	}
	p, ok := f.profiles.pictures[j]
	switch {
	case !ok:
		return nil, whatsmeow.ErrProfilePictureNotSet
	case params != nil && params.ExistingID == p.ID:
		return nil, nil // not changed
	}
	return p, nil
}
