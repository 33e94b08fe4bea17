package rest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// The newsletter operations (issue 31 item 9) through a gateway engine: each
// reaches the session's engine call with the newsletter or invite (the
// whatsmeow calls behind them are engine/gateway's tests), the changes the
// session reports are stored and become newsletter.* webhooks, and a post the
// session reports is a message of the newsletter's chat.

// fakeNewsletter is the one newsletter the fake gateway's network knows;
// GwNews1 is its invite code.
const fakeNewsletter = "120363000000000099@newsletter"

func fakeNewsletterState(role string, muted bool) engine.ChatState {
	return engine.ChatState{ID: fakeNewsletter, Kind: engine.ChatNewsletter, Name: "Gateway news", Subscribers: 42,
		Invite: "https://whatsapp.com/channel/GwNews1", Verification: "VERIFIED", Role: role, Muted: &muted}
}

// newsletterCall records a newsletter call and answers ErrNotFound for any
// newsletter but fakeNewsletter.
func (f *fakeGateway) newsletterCall(call, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall(call); err != nil {
		return err
	}
	if id != fakeNewsletter && id != "GwNews1" {
		return fmt.Errorf("%w: newsletter %s", engine.ErrNotFound, id)
	}
	return nil
}

// reportNewsletter reports a newsletter change as the gateway does, before
// the call answers.
func (f *fakeGateway) reportNewsletter(ctx context.Context, c engine.NewsletterChange) error {
	at := time.Now()
	return f.cfg.Sink.HandleEvent(ctx, engine.Event{ID: fmt.Sprintf("wa_newsletter_%s_%s_%d", c.NewsletterID, c.Action, at.UnixNano()),
		Type: engine.EventNewsletter, WorkspaceID: f.cfg.WorkspaceID, EngineID: f.cfg.EngineID, At: at, Newsletter: &c})
}

// NewsletterInfo implements engine.NewsletterFollower.
func (f *fakeGateway) NewsletterInfo(_ context.Context, id string) (engine.ChatState, error) {
	return fakeNewsletterState(engine.NewsletterGuest, false), f.newsletterCall("NewsletterInfo "+id, id)
}

// NewsletterByInvite implements engine.NewsletterFollower.
func (f *fakeGateway) NewsletterByInvite(_ context.Context, code string) (engine.ChatState, error) {
	return fakeNewsletterState(engine.NewsletterGuest, false), f.newsletterCall("NewsletterByInvite "+code, code)
}

// FollowNewsletter implements engine.NewsletterFollower.
func (f *fakeGateway) FollowNewsletter(ctx context.Context, id string) (engine.ChatState, error) {
	if err := f.newsletterCall("FollowNewsletter "+id, id); err != nil {
		return engine.ChatState{}, err
	}
	s := fakeNewsletterState(engine.NewsletterSubscriber, false)
	return s, f.reportNewsletter(ctx, engine.NewsletterChange{NewsletterID: id, Action: engine.NewsletterJoined, Role: s.Role, Muted: s.Muted, Chat: &s})
}

// UnfollowNewsletter implements engine.NewsletterFollower.
func (f *fakeGateway) UnfollowNewsletter(ctx context.Context, id string) error {
	if err := f.newsletterCall("UnfollowNewsletter "+id, id); err != nil {
		return err
	}
	return f.reportNewsletter(ctx, engine.NewsletterChange{NewsletterID: id, Action: engine.NewsletterLeft, Role: engine.NewsletterGuest})
}

// MuteNewsletter implements engine.NewsletterFollower.
func (f *fakeGateway) MuteNewsletter(ctx context.Context, id string, muted bool) error {
	if err := f.newsletterCall(fmt.Sprintf("MuteNewsletter %s %t", id, muted), id); err != nil {
		return err
	}
	return f.reportNewsletter(ctx, engine.NewsletterChange{NewsletterID: id, Action: engine.NewsletterMuteChanged, Muted: &muted})
}

func TestGatewayNewsletters(t *testing.T) {
	e, f, id := contactsGateway(t)
	q := "?engineId=" + id
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "newsletter.joined", "newsletter.left", "newsletter.mute_changed")

	p := e.Do("GET", "/v1/newsletters/invites/GwNews1"+q, e.Key, nil)
	if p.Status != 200 || p.Data()["id"] != fakeNewsletter || p.Data()["name"] != "Gateway news" || p.Data()["following"] != false {
		t.Fatalf("preview: %d %s", p.Status, p.Raw)
	}
	var got []string
	step := func(method, path string, body any) {
		t.Helper()
		r := e.Do(method, path+q, e.Key, body)
		if r.Status != 200 || r.Data()["newsletterId"] != fakeNewsletter {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
		}
		got = append(got, newsletterState(r.Data()))
	}
	step("POST", "/v1/newsletters/follow", map[string]any{"invite": "https://whatsapp.com/channel/GwNews1"})
	step("PUT", "/v1/newsletters/"+fakeNewsletter+"/mute", map[string]any{"muted": true})
	step("DELETE", "/v1/newsletters/"+fakeNewsletter+"/follow", nil)
	step("POST", "/v1/newsletters/"+fakeNewsletter+"/follow", nil)
	want := []string{"subscriber true false", "subscriber true true", "guest false true", "subscriber true false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records %v, want %v", got, want)
	}
	callsAre(t, "follow, mute, unfollow", f, "NewsletterByInvite GwNews1", "NewsletterByInvite GwNews1", "FollowNewsletter "+fakeNewsletter,
		"MuteNewsletter "+fakeNewsletter+" true", "UnfollowNewsletter "+fakeNewsletter, "FollowNewsletter "+fakeNewsletter)
	e.Eventually(10*time.Second, "the newsletter webhooks", func() bool {
		return len(rc.ofType("newsletter.joined")) == 2 && len(rc.ofType("newsletter.mute_changed")) == 1 && len(rc.ofType("newsletter.left")) == 1
	})

	// A mute made on another device, as the session reports it, is stored and
	// is a webhook event.
	muted := true
	f.report(t, engine.Event{ID: "wa_newsletter_other_device", Type: engine.EventNewsletter,
		Newsletter: &engine.NewsletterChange{NewsletterID: fakeNewsletter, Action: engine.NewsletterMuteChanged, Muted: &muted}})
	e.Eventually(10*time.Second, "the mute made on another device, stored and sent", func() bool {
		r := e.Do("GET", "/v1/newsletters/"+fakeNewsletter, e.Key, nil)
		return r.Status == 200 && newsletterState(r.Data()) == "subscriber true true" && len(rc.ofType("newsletter.mute_changed")) == 2
	})

	// A post is a message of the newsletter's chat.
	f.report(t, engine.Event{ID: "wa_post_1", Type: engine.EventMessage, Key: engine.Key{Remote: fakeNewsletter, ID: "NLPOST1"},
		Message: &engine.Incoming{Key: engine.Key{Remote: fakeNewsletter, ID: "NLPOST1"}, From: fakeNewsletter, SenderName: "Gateway news", Type: "text", Text: "Today's news"}})
	e.Eventually(10*time.Second, "the post, stored", func() bool {
		m := e.Do("GET", "/v1/messages?chatId="+fakeNewsletter, e.Key, nil)
		return m.Status == 200 && len(m.List()) == 1 && m.List()[0]["text"] == "Today's news"
	})

	// Unknown newsletters and invites are 404; bad ids never reach the session.
	if r := e.Do("POST", "/v1/newsletters/120363000000000098@newsletter/follow"+q, e.Key, nil); r.Status != 404 {
		t.Errorf("unknown newsletter: %s", errorOf(r))
	}
	if r := e.Do("GET", "/v1/newsletters/invites/NoSuch1"+q, e.Key, nil); r.Status != 404 {
		t.Errorf("unknown invite: %s", errorOf(r))
	}
	callsAre(t, "unknown", f, "FollowNewsletter 120363000000000098@newsletter", "NewsletterByInvite NoSuch1")
	if r := e.Do("PUT", "/v1/newsletters/not-a-newsletter/mute"+q, e.Key, map[string]any{"muted": true}); r.Status != 400 {
		t.Errorf("bad id: %s", errorOf(r))
	}
	callsAre(t, "bad input", f)
}
