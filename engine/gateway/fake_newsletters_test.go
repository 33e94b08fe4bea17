package gateway

// The fake's newsletter calls (fake_test.go holds the rest of it).

import (
	"context"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
)

// fakeNewsletters is what the fake network knows of newsletters: their
// metadata by JID and by invite code, and the account's calls.
type fakeNewsletters struct {
	known map[types.JID]*types.NewsletterMetadata
	calls []string // "<call> <arg>" of each newsletter call
}

// addNewsletter makes the fake network know a newsletter the account follows
// as role (guest: not following).
func (f *fakeClient) addNewsletter(user, invite, name string, role types.NewsletterRole) types.JID {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.newsletters.known == nil {
		f.newsletters.known = map[types.JID]*types.NewsletterMetadata{}
	}
	j := types.NewJID(user, types.NewsletterServer)
	md := &types.NewsletterMetadata{ID: j, ViewerMeta: &types.NewsletterViewerMetadata{Role: role, Mute: types.NewsletterMuteOff}}
	md.ThreadMeta.Name.Text, md.ThreadMeta.InviteCode, md.ThreadMeta.SubscriberCount = name, invite, 42
	f.newsletters.known[j] = md
	return j
}

func (f *fakeClient) newsletterCall(call, arg string) {
	f.newsletters.calls = append(f.newsletters.calls, call+" "+arg)
}

func (f *fakeClient) GetNewsletterInfo(_ context.Context, jid types.JID) (*types.NewsletterMetadata, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newsletterCall("info", jid.String())
	md, ok := f.newsletters.known[jid]
	if !ok {
		return nil, whatsmeow.ErrIQNotFound
	}
	c := *md
	v := *md.ViewerMeta
	c.ViewerMeta = &v
	return &c, nil
}

func (f *fakeClient) GetNewsletterInfoWithInvite(_ context.Context, key string) (*types.NewsletterMetadata, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newsletterCall("invite", key)
	for _, md := range f.newsletters.known {
		if md.ThreadMeta.InviteCode == key {
			c := *md
			c.ViewerMeta = nil // as whatsmeow: no viewer metadata by invite
			return &c, nil
		}
	}
	return nil, types.GraphQLErrors{{Message: "not found", Extensions: types.GraphQLErrorExtensions{ErrorCode: 404}}}
}

// follow changes a known newsletter, or fails as the network does.
func (f *fakeClient) follow(call string, jid types.JID, change func(*types.NewsletterViewerMetadata)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newsletterCall(call, jid.String())
	md, ok := f.newsletters.known[jid]
	if !ok {
		return whatsmeow.ErrIQNotFound
	}
	change(md.ViewerMeta)
	return nil
}

func (f *fakeClient) FollowNewsletter(_ context.Context, jid types.JID) error {
	return f.follow("follow", jid, func(v *types.NewsletterViewerMetadata) { v.Role = types.NewsletterRoleSubscriber })
}

func (f *fakeClient) UnfollowNewsletter(_ context.Context, jid types.JID) error {
	return f.follow("unfollow", jid, func(v *types.NewsletterViewerMetadata) { v.Role = types.NewsletterRoleGuest })
}

func (f *fakeClient) NewsletterToggleMute(_ context.Context, jid types.JID, mute bool) error {
	call := "unmute"
	if mute {
		call = "mute"
	}
	return f.follow(call, jid, func(v *types.NewsletterViewerMetadata) {
		v.Mute = types.NewsletterMuteOff
		if mute {
			v.Mute = types.NewsletterMuteOn
		}
	})
}
