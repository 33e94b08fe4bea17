package gateway

// The fake's group and newsletter calls (fake_test.go holds the rest of it).

import (
	"context"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

func (f *fakeClient) GetGroupInfo(_ context.Context, jid types.JID) (*types.GroupInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.groups[jid]
	if !ok {
		return nil, whatsmeow.ErrGroupNotFound
	}
	return g, nil
}

func (f *fakeClient) GetJoinedGroups(context.Context) ([]*types.GroupInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groupCalls = append(f.groupCalls, "joined")
	var out []*types.GroupInfo
	for _, g := range f.groups {
		out = append(out, g)
	}
	return out, nil
}

func (f *fakeClient) CreateGroup(_ context.Context, req whatsmeow.ReqCreateGroup) (*types.GroupInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, req)
	g := &types.GroupInfo{JID: types.NewJID("120363000000000001", types.GroupServer), OwnerJID: f.own.ToNonAD(),
		GroupName: types.GroupName{Name: req.Name}, GroupCreated: time.Unix(1_800_000_000, 0)}
	g.Participants = append(g.Participants, types.GroupParticipant{JID: f.own.ToNonAD(), IsAdmin: true, IsSuperAdmin: true})
	for _, p := range req.Participants {
		g.Participants = append(g.Participants, types.GroupParticipant{JID: p, PhoneNumber: p, Error: f.partResult[p]})
	}
	f.groups[g.JID] = g
	return g, nil
}

func (f *fakeClient) UpdateGroupParticipants(_ context.Context, jid types.JID, who []types.JID, action whatsmeow.ParticipantChange) ([]types.GroupParticipant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groupErr != nil {
		return nil, f.groupErr
	}
	f.participants = append(f.participants, fakeParticipants{jid, who, action})
	var out []types.GroupParticipant
	for _, p := range who {
		out = append(out, types.GroupParticipant{JID: p, PhoneNumber: p, Error: f.partResult[p]})
	}
	return out, nil
}

func (f *fakeClient) groupCall(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groupErr != nil {
		return f.groupErr
	}
	f.groupCalls = append(f.groupCalls, name)
	return nil
}

func (f *fakeClient) SetGroupName(_ context.Context, _ types.JID, name string) error {
	return f.groupCall("name:" + name)
}

func (f *fakeClient) SetGroupDescription(_ context.Context, _ types.JID, d string) error {
	return f.groupCall("description:" + d)
}

func (f *fakeClient) SetGroupAnnounce(_ context.Context, _ types.JID, a bool) error {
	if a {
		return f.groupCall("announce:on")
	}
	return f.groupCall("announce:off")
}

func (f *fakeClient) SetGroupLocked(_ context.Context, _ types.JID, l bool) error {
	if l {
		return f.groupCall("locked:on")
	}
	return f.groupCall("locked:off")
}

func (f *fakeClient) SetGroupPhoto(_ context.Context, jid types.JID, avatar []byte) (string, error) {
	if len(avatar) < 3 || avatar[0] != 0xFF {
		return "", whatsmeow.ErrInvalidImageFormat
	}
	if jid.IsEmpty() {
		return f.setOwnPicture(avatar), nil
	}
	return "pic1", f.groupCall("photo")
}

func (f *fakeClient) LeaveGroup(context.Context, types.JID) error {
	return f.groupCall("leave")
}

func (f *fakeClient) CreateNewsletter(_ context.Context, p whatsmeow.CreateNewsletterParams) (*types.NewsletterMetadata, error) {
	md := &types.NewsletterMetadata{ID: types.NewJID("120363999", types.NewsletterServer)}
	md.ThreadMeta.Name.Text = p.Name
	md.ThreadMeta.Description.Text = p.Description
	md.ThreadMeta.InviteCode = "abc"
	return md, nil
}

// SetDisappearingTimer behaves as whatsmeow's: a timer setting message to a
// user (sent with the raw client, not through the careful one), a group IQ
// that changes the group's info (404 for a group the network does not know),
// an error for any other server.
func (f *fakeClient) SetDisappearingTimer(ctx context.Context, chat types.JID, timer time.Duration, settingTS time.Time) error {
	f.mu.Lock()
	f.timerCalls = append(f.timerCalls, fakeTimerCall{chat, timer, settingTS})
	f.mu.Unlock()
	switch chat.Server {
	case types.DefaultUserServer, types.HiddenUserServer:
		_, err := f.SendMessage(ctx, chat, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type:                      waE2E.ProtocolMessage_EPHEMERAL_SETTING.Enum(),
			EphemeralExpiration:       proto.Uint32(uint32(timer.Seconds())),
			EphemeralSettingTimestamp: proto.Int64(settingTS.Unix()),
		}})
		return err
	case types.GroupServer:
		f.mu.Lock()
		defer f.mu.Unlock()
		g, ok := f.groups[chat]
		if !ok {
			return whatsmeow.ErrIQNotFound
		}
		g.IsEphemeral, g.DisappearingTimer = timer > 0, uint32(timer.Seconds())
		return nil
	}
	return fmt.Errorf("can't set disappearing time in a %s chat", chat.Server)
}

// fakeTimerCall is one SetDisappearingTimer call.
type fakeTimerCall struct {
	chat      types.JID
	timer     time.Duration
	settingTS time.Time
}
