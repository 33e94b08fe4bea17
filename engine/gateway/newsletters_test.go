package gateway

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/engine"
)

// newsletterChanges are the EventNewsletter changes among evs.
func newsletterChanges(t *testing.T, evs []engine.Event) []engine.NewsletterChange {
	t.Helper()
	var out []engine.NewsletterChange
	for _, ev := range evs {
		if ev.Type != engine.EventNewsletter {
			continue
		}
		if err := ev.Validate(); err != nil {
			t.Errorf("invalid event %+v: %v", ev, err)
		}
		c := *ev.Newsletter
		c.Chat = nil
		out = append(out, c)
	}
	return out
}

// TestNewsletterFollow: follow, unfollow, mute, unmute and the invite preview
// reach whatsmeow's FollowNewsletter, UnfollowNewsletter, NewsletterToggleMute,
// GetNewsletterInfo and GetNewsletterInfoWithInvite with the newsletter's JID
// (or the code), each reporting its EventNewsletter; unknown newsletters and
// invites are engine.ErrNotFound.
func TestNewsletterFollow(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, true)
	h.f.addNewsletter("120363111", "INV111", "Daily", types.NewsletterRoleGuest)

	p, err := h.e.NewsletterByInvite(ctx, "https://whatsapp.com/channel/INV111")
	if err != nil || p.ID != "120363111@newsletter" || p.Name != "Daily" || p.Invite != "https://whatsapp.com/channel/INV111" || p.Subscribers != 42 {
		t.Fatalf("preview %+v %v", p, err)
	}
	s, err := h.e.FollowNewsletter(ctx, "120363111@newsletter")
	if err != nil || s.Role != engine.NewsletterSubscriber || s.Muted == nil || *s.Muted {
		t.Fatalf("follow %+v %v", s, err)
	}
	if err := h.e.MuteNewsletter(ctx, "120363111@newsletter", true); err != nil {
		t.Fatal(err)
	}
	if s, err := h.e.NewsletterInfo(ctx, "120363111@newsletter"); err != nil || s.Muted == nil || !*s.Muted {
		t.Errorf("info after mute %+v %v", s, err)
	}
	if err := h.e.MuteNewsletter(ctx, "120363111@newsletter", false); err != nil {
		t.Fatal(err)
	}
	if err := h.e.UnfollowNewsletter(ctx, "120363111@newsletter"); err != nil {
		t.Fatal(err)
	}
	calls := []string{"invite INV111", "follow 120363111@newsletter", "info 120363111@newsletter",
		"mute 120363111@newsletter", "info 120363111@newsletter", "unmute 120363111@newsletter", "unfollow 120363111@newsletter"}
	if diff := cmp.Diff(calls, h.f.newsletters.calls); diff != "" {
		t.Errorf("whatsmeow calls (-want +got):\n%s", diff)
	}
	yes, no := true, false
	want := []engine.NewsletterChange{
		{NewsletterID: "120363111@newsletter", Action: engine.NewsletterJoined, Role: engine.NewsletterSubscriber, Muted: &no},
		{NewsletterID: "120363111@newsletter", Action: engine.NewsletterMuteChanged, Muted: &yes},
		{NewsletterID: "120363111@newsletter", Action: engine.NewsletterMuteChanged, Muted: &no},
		{NewsletterID: "120363111@newsletter", Action: engine.NewsletterLeft, Role: engine.NewsletterGuest},
	}
	if diff := cmp.Diff(want, newsletterChanges(t, h.sink.take())); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	if _, err := h.e.FollowNewsletter(ctx, "120363999000@newsletter"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("follow unknown: %v", err)
	}
	if _, err := h.e.NewsletterByInvite(ctx, "NOPE"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown invite: %v", err)
	}
	if err := h.e.MuteNewsletter(ctx, "15551234567@c.us", true); !errors.Is(err, engine.ErrRejected) {
		t.Errorf("mute a contact: %v", err)
	}
}

// TestNewsletterEvents: whatsmeow's NewsletterJoin, NewsletterLeave and
// NewsletterMuteChange become EventNewsletter events (newsletter.joined, left,
// mute_changed), and a newsletter's post is an EventMessage of its chat.
func TestNewsletterEvents(t *testing.T) {
	h := newHarness(t, true)
	j := types.NewJID("120363222", types.NewsletterServer)
	join := &events.NewsletterJoin{NewsletterMetadata: types.NewsletterMetadata{ID: j,
		ViewerMeta: &types.NewsletterViewerMetadata{Role: types.NewsletterRoleSubscriber, Mute: types.NewsletterMuteOn}}}
	join.ThreadMeta.Name.Text = "Weekly"
	h.f.deliver(join)
	h.f.deliver(&events.NewsletterMuteChange{ID: j, Mute: types.NewsletterMuteOff})
	h.f.deliver(&events.NewsletterLeave{ID: j, Role: types.NewsletterRoleGuest})
	yes, no := true, false
	want := []engine.NewsletterChange{
		{NewsletterID: "120363222@newsletter", Action: engine.NewsletterJoined, Role: engine.NewsletterSubscriber, Muted: &yes},
		{NewsletterID: "120363222@newsletter", Action: engine.NewsletterMuteChanged, Muted: &no},
		{NewsletterID: "120363222@newsletter", Action: engine.NewsletterLeft, Role: engine.NewsletterGuest},
	}
	evs := h.sink.take()
	if diff := cmp.Diff(want, newsletterChanges(t, evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if evs[0].Newsletter.Chat == nil || evs[0].Newsletter.Chat.Name != "Weekly" {
		t.Errorf("joined chat %+v", evs[0].Newsletter.Chat)
	}

	h.f.deliver(&events.Message{Info: types.MessageInfo{MessageSource: types.MessageSource{Chat: j, Sender: j}, ID: "NL1", Timestamp: at},
		Message: &waE2E.Message{Conversation: proto.String("Hello followers")}})
	var got []engine.Event
	for _, ev := range h.sink.take() {
		if ev.Type == engine.EventMessage {
			got = append(got, ev)
		}
	}
	if len(got) != 1 || got[0].Message.Key.Remote != "120363222@newsletter" || got[0].Message.Text != "Hello followers" {
		t.Fatalf("newsletter post events %+v", got)
	}
	if err := got[0].Validate(); err != nil {
		t.Errorf("post event invalid: %v", err)
	}
}
