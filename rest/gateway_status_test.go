package rest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// Statuses through a gateway engine: what reached the session's
// engine.StatusPoster (the whatsmeow message behind it is engine/gateway's
// TestPostStatusSendsToStatusBroadcast), recorded among its contact calls;
// the session's status events become status.received webhooks and list
// entries.

// PostStatus implements engine.StatusPoster as the gateway does: a chosen
// audience is refused.
func (f *fakeGateway) PostStatus(_ context.Context, s engine.StatusPost) (engine.Key, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(s.Audience) > 0 {
		return engine.Key{}, engine.ErrAudience
	}
	call := fmt.Sprintf("PostStatus %s %q %08X %d %s %s", s.Type, s.Text, s.BackgroundArgb, s.Font, s.MediaKind, s.MediaURL)
	if err := f.contactCall(strings.TrimSpace(call)); err != nil {
		return engine.Key{}, err
	}
	return engine.Key{FromMe: true, Remote: engine.StatusChat, ID: s.WireID}, nil
}

// RevokeStatus implements engine.StatusPoster.
func (f *fakeGateway) RevokeStatus(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.contactCall("RevokeStatus " + id)
}

func TestGatewayStatuses(t *testing.T) {
	e, f, id := contactsGateway(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "status.received")

	r := e.Do("POST", "/v1/status?engineId="+id, e.Key, map[string]any{"type": "text", "text": "Open today", "backgroundColor": "#1E88E5", "font": 9})
	if r.Status != 201 || r.Data()["engineId"] != id {
		t.Fatalf("post: %d %s", r.Status, r.Raw)
	}
	posted := r.Data()
	callsAre(t, "post", f, `PostStatus text "Open today" FF1E88E5 9`)
	r = e.Do("POST", "/v1/status", e.Key, map[string]any{"engineId": id, "type": "video", "caption": "clip", "mediaUrl": "https://example.com/clip.mp4"})
	if r.Status != 201 || r.Data()["type"] != "video" {
		t.Fatalf("post video: %d %s", r.Status, r.Raw)
	}
	callsAre(t, "post video", f, `PostStatus media "clip" 00000000 0 video https://example.com/clip.mp4`)

	r = e.Do("POST", "/v1/status?engineId="+id, e.Key, map[string]any{"type": "text", "text": "x", "audience": []string{"+15551230001"}})
	if errorOf(r) != "422 validation_failed audience:unsupported" {
		t.Errorf("a chosen audience through the gateway: %s", r.Raw)
	}
	callsAre(t, "refused audience", f)

	r = e.Do("DELETE", "/v1/status/"+posted["id"].(string), e.Key, nil)
	if r.Status != 200 || r.Data()["status"] != "revoked" {
		t.Errorf("delete: %d %s", r.Status, r.Raw)
	}
	callsAre(t, "delete", f, "RevokeStatus "+posted["waMessageId"].(string))

	key := engine.Key{Remote: engine.StatusChat, ID: "ABCD1", Participant: "15551230007@c.us"}
	st := &engine.StatusUpdate{Key: key, From: "15551230007@c.us", SenderName: "Ann", Type: "media", Text: "look",
		Media: &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: "look"}}
	f.report(t, engine.Event{ID: "wa_status_1", Type: engine.EventStatus, Key: key, Status: st})
	f.report(t, engine.Event{ID: "wa_status_1b", Type: engine.EventStatus, Key: key, Status: st}) // reported again
	e.Eventually(15*time.Second, "status.received", func() bool { return len(rc.ofType("status.received")) == 1 })
	data := rc.ofType("status.received")[0].payload["data"].(map[string]any)
	if data["from"] != "15551230007@c.us" || data["type"] != "image" || data["text"] != "look" || data["mediaMimeType"] != "image/jpeg" ||
		data["engineId"] != id || data["waMessageId"] != "ABCD1" || data["senderName"] != "Ann" {
		t.Errorf("status.received data %v", data)
	}
	list := e.Do("GET", "/v1/status?contact=15551230007@c.us", e.Key, nil).List()
	if len(list) != 1 || list[0]["id"] != data["id"] || list[0]["status"] != "received" {
		t.Fatalf("the contact's statuses: %v", list)
	}
	f.report(t, engine.Event{ID: "wa_statusrevoke_1", Type: engine.EventStatus, Key: key,
		Status: &engine.StatusUpdate{Key: key, From: "15551230007@c.us", Revoked: true}})
	e.Eventually(15*time.Second, "the revoke's status.received", func() bool { return len(rc.ofType("status.received")) == 2 })
	if got := e.Do("GET", "/v1/status/"+data["id"].(string), e.Key, nil).Data(); got["status"] != "revoked" || got["text"] != "" {
		t.Errorf("revoked status %v", got)
	}
}
