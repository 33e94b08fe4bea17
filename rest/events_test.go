package rest_test

import (
	"context"
	"testing"
	"time"
)

// Every event the sandbox can produce reaches a subscribed webhook.
func TestEngineEventsReachWebhooks(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "session.connected", "new_message_received_webhook", "reply_to_my_message_webhook",
		"message_reaction_webhook", "poll_vote_webhook", "message_edited_webhook", "message_deleted_revoked_webhook",
		"ack_changed_webhook", "participant_added_by_admin_webhook", "message.failed")

	// The first call that needs the engine connects it.
	e.Do("GET", "/v1/ping", e.Key, nil)
	e.Eventually(5*time.Second, "session.connected", func() bool { return len(rc.ofType("session.connected")) == 1 })

	text := schedule(e, "+15550402222", map[string]any{"type": "text", "text": "how are you?"})
	poll := schedule(e, "+15550412222", map[string]any{"type": "poll", "pollQuestion": "Lunch?", "pollOptions": []string{"Pizza", "Sushi"}})
	schedule(e, "+15550404444", map[string]any{"type": "text", "text": "hello"})
	schedule(e, "+15550400000", map[string]any{"type": "text", "text": "nobody"})
	if r := e.Do("POST", "/v1/sandbox/group-changes", e.Key, map[string]any{
		"groupId": "120363000000000009@g.us", "action": "added", "participants": []string{"15550409999@c.us"}, "by": "15550401111@c.us",
	}); r.Status != 202 {
		t.Fatalf("simulate group change = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/sandbox/group-changes", e.Key, map[string]any{"groupId": "1@c.us", "action": "exploded"}); r.Status != 422 {
		t.Errorf("bad group change = %d, want 422", r.Status)
	}

	want := map[string]int{
		"new_message_received_webhook": 2 + 1, "reply_to_my_message_webhook": 2 + 1, "message_reaction_webhook": 2,
		"poll_vote_webhook": 1, "message_edited_webhook": 2, "message_deleted_revoked_webhook": 1,
		"participant_added_by_admin_webhook": 1, "message.failed": 1,
	}
	e.Eventually(10*time.Second, "every event type", func() bool {
		for typ, n := range want {
			if len(rc.ofType(typ)) < n {
				return false
			}
		}
		return true
	})
	vote := rc.ofType("poll_vote_webhook")[0].payload["data"].(map[string]any)
	if opts := vote["selectedOptions"].([]any); len(opts) != 1 || opts[0] != "Pizza" {
		t.Errorf("poll vote data = %v", vote)
	}
	pollKey := waitStatus(e, poll["id"].(string), "read")["waMessageKey"].(map[string]any)["_serialized"]
	if vote["messageKey"] != pollKey {
		t.Errorf("vote is for %v, want the poll %v", vote["messageKey"], pollKey)
	}
	textKey := waitStatus(e, text["id"].(string), "read")["waMessageKey"].(map[string]any)["_serialized"]
	found := false
	for _, r := range rc.ofType("reply_to_my_message_webhook") {
		d := r.payload["data"].(map[string]any)
		if d["fromMe"] == false && d["text"] != "" && d["chatId"] == "15550402222@c.us" {
			found = true
		}
	}
	if !found {
		t.Errorf("no reply from 15550402222 quoting %v", textKey)
	}
	group := rc.ofType("participant_added_by_admin_webhook")[0].payload["data"].(map[string]any)
	if group["groupId"] != "120363000000000009@g.us" || group["by"] != "15550401111@c.us" {
		t.Errorf("group event data = %v", group)
	}
	if len(rc.ofType("ack_changed_webhook")) < 4 {
		t.Errorf("ack_changed_webhook events = %d", len(rc.ofType("ack_changed_webhook")))
	}
}

// An engine whose heartbeat lapses (its process died) is reported disconnected.
func TestLapsedEngineIsReportedDisconnected(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "session.disconnected")
	e.Do("GET", "/v1/ping", e.Key, nil)
	if err := e.App.Jobs.ReapEngines(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.Eventually(5*time.Second, "session.disconnected", func() bool { return len(rc.ofType("session.disconnected")) == 1 })
	if id := rc.ofType("session.disconnected")[0].payload["data"].(map[string]any)["engineId"]; id == "" {
		t.Errorf("no engineId")
	}
}
