package rest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent/message"
)

// sendDirect sends a text through the sandbox and answers its serialized key.
func sendDirect(e *apptest.Env, to, text string) string {
	e.T.Helper()
	r := e.Do("POST", "/v1/messages/"+to, e.Key, map[string]any{"type": "text", "text": text, "withTyping": false})
	if r.Status != 201 {
		e.T.Fatalf("send: %d %s", r.Status, r.Raw)
	}
	k, _ := r.Data()["waMessageKey"].(map[string]any)["_serialized"].(string)
	if k == "" {
		e.T.Fatalf("send answered no key: %s", r.Raw)
	}
	return k
}

// detailCodes lists the codes of an error answer's details.
func detailCodes(r *apptest.Response) []string {
	var out []string
	details, _ := r.Error()["details"].([]any)
	for _, d := range details {
		if m, ok := d.(map[string]any); ok {
			out = append(out, m["code"].(string))
		}
	}
	return out
}

// An edit of a message the account sent changes the stored text through the
// engine's edit event, which webhooks get as message_edited_webhook; past
// WhatsApp's window it is a conflict naming the rule.
func TestEditASentMessage(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "message_edited_webhook")
	key := sendDirect(e, "+15550515555", "helo")

	r := e.Do("POST", "/v1/messages/edit/"+key, e.Key, map[string]any{"text": "hello"})
	if r.Status != 200 || r.Data()["text"] != "hello" {
		t.Fatalf("edit: %d %s", r.Status, r.Raw)
	}
	if got := e.Do("GET", "/v1/messages/"+key, e.Key, nil).Data()["text"]; got != "hello" {
		t.Errorf("stored text %v, want hello", got)
	}
	e.Eventually(5*time.Second, "message_edited_webhook", func() bool { return len(rc.ofType("message_edited_webhook")) == 1 })
	d := rc.ofType("message_edited_webhook")[0].payload["data"].(map[string]any)
	if d["messageKey"] != key || d["text"] != "hello" || d["fromMe"] != true || d["chatId"] != "15550515555@c.us" {
		t.Errorf("edited event data %v", d)
	}

	bad := []struct {
		name   string
		body   any
		status int
		codes  []string
	}{
		{"no text", map[string]any{}, 422, []string{"invalid_type"}},
		{"empty text", map[string]any{"text": ""}, 422, []string{"too_small"}},
		{"text too long", map[string]any{"text": strings.Repeat("é", 4097)}, 422, []string{"too_big"}},
	}
	for _, b := range bad {
		r := e.Do("POST", "/v1/messages/edit/"+key, e.Key, b.body)
		if r.Status != b.status || !cmp.Equal(b.codes, detailCodes(r)) {
			t.Errorf("%s: %d %v, want %d %v", b.name, r.Status, detailCodes(r), b.status, b.codes)
		}
	}
	if r := e.Do("POST", "/v1/messages/edit/true_15550515555@c.us_NOPE", e.Key, map[string]any{"text": "x"}); r.Status != 404 {
		t.Errorf("unknown key: %d %s", r.Status, r.Raw)
	}

	// Too late: the message went out an hour ago.
	if err := e.App.Client.Message.Update().Where(message.WaSerialized(key)).SetConfirmedAt(time.Now().Add(-time.Hour)).Exec(systemCtx()); err != nil {
		t.Fatal(err)
	}
	r = e.Do("POST", "/v1/messages/edit/"+key, e.Key, map[string]any{"text": "later"})
	if r.Status != 409 || !cmp.Equal([]string{"edit_window_passed"}, detailCodes(r)) {
		t.Errorf("too late: %d %s", r.Status, r.Raw)
	}
	if got := e.Do("GET", "/v1/messages/"+key, e.Key, nil).Data()["text"]; got != "hello" {
		t.Errorf("stored text after a refused edit %v, want hello", got)
	}
}

// Someone else's message cannot be edited, nor deleted for everyone outside a
// group.
func TestActionsOnSomeoneElsesMessage(t *testing.T) {
	e := newEnv(t)
	list := e.Do("GET", "/v1/messages?limit=200", e.Key, nil).List()
	var theirs string
	for _, m := range list {
		k := m["waMessageKey"].(map[string]any)
		// (a message of the history the sender deleted is a text without text)
		if m["fromMe"] == false && m["type"] == "text" && m["text"] != "" && m["text"] != nil &&
			engine.ChatKind(m["chatId"].(string)) == engine.ChatContact {
			theirs = k["_serialized"].(string)
			break
		}
	}
	if theirs == "" {
		t.Fatal("the sandbox's history holds no received text in a direct chat")
	}
	r := e.Do("POST", "/v1/messages/edit/"+theirs, e.Key, map[string]any{"text": "mine now"})
	if r.Status != 409 || !cmp.Equal([]string{"not_own_message"}, detailCodes(r)) {
		t.Errorf("edit someone else's: %d %s", r.Status, r.Raw)
	}
	r = e.Do("POST", "/v1/messages/revoke/"+theirs, e.Key, nil)
	if r.Status != 409 || !cmp.Equal([]string{"not_own_message"}, detailCodes(r)) {
		t.Errorf("revoke someone else's: %d %s", r.Status, r.Raw)
	}
}

// Delete for everyone marks the stored message revoked through the engine's
// revoke event, which webhooks get as message_deleted_revoked_webhook.
func TestRevokeASentMessage(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "message_deleted_revoked_webhook")
	key := sendDirect(e, "+15550525555", "oops")

	if r := e.Do("POST", "/v1/messages/revoke/"+key, e.Key, nil); r.Status != 200 || r.Data()["text"] != nil {
		t.Fatalf("revoke: %d %s", r.Status, r.Raw)
	}
	revoked := e.Do("GET", "/v1/messages?messageTypes=revoked&chatId=15550525555@c.us", e.Key, nil).List()
	if len(revoked) != 1 || revoked[0]["waMessageKey"].(map[string]any)["_serialized"] != key {
		t.Errorf("revoked messages %v", revoked)
	}
	e.Eventually(5*time.Second, "message_deleted_revoked_webhook", func() bool { return len(rc.ofType("message_deleted_revoked_webhook")) == 1 })
	if d := rc.ofType("message_deleted_revoked_webhook")[0].payload["data"].(map[string]any); d["messageKey"] != key || d["fromMe"] != true {
		t.Errorf("revoked event data %v", d)
	}
	if r := e.Do("POST", "/v1/messages/revoke/"+key, e.Key, nil); r.Status != 409 || !cmp.Equal([]string{"revoked"}, detailCodes(r)) {
		t.Errorf("revoke twice: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/messages/edit/"+key, e.Key, map[string]any{"text": "x"}); r.Status != 409 {
		t.Errorf("edit a revoked message: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/messages/revoke/true_15550525555@c.us_NOPE", e.Key, nil); r.Status != 404 {
		t.Errorf("unknown key: %d %s", r.Status, r.Raw)
	}
}

// A forward is a new message to the other chat, delivered like a direct send
// and marked as forwarded.
func TestForwardAStoredMessage(t *testing.T) {
	e := newEnv(t)
	key := sendDirect(e, "+15550535555", "pass it on")

	r := e.Do("POST", "/v1/messages/forward/"+key, e.Key, map[string]any{"chatId": "+15550536666"})
	if r.Status != 201 {
		t.Fatalf("forward: %d %s", r.Status, r.Raw)
	}
	d := r.Data()
	if d["to"] != "15550536666@c.us" || d["text"] != "pass it on" || d["forwardedFrom"] != key || d["status"] != "confirmed" {
		t.Errorf("forwarded message %v", d)
	}
	fwd := d["waMessageKey"].(map[string]any)["_serialized"].(string)
	e.Eventually(5*time.Second, "the forward delivered", func() bool {
		m := e.Do("GET", "/v1/messages/"+fwd, e.Key, nil).Data()
		return m["ack"] != nil && m["ack"].(float64) >= float64(engine.AckDevice)
	})
	// A received image: its bytes downloaded through the engine first, then sent.
	img := e.Do("GET", "/v1/messages?messageTypes=image&limit=1", e.Key, nil).List()[0]
	ikey := img["waMessageKey"].(map[string]any)["_serialized"].(string)
	r = e.Do("POST", "/v1/messages/forward/"+ikey, e.Key, map[string]any{"chatId": "+15550536666"})
	if d := r.Data(); r.Status != 201 || d["type"] != "media" || d["mediaKind"] != "image" || d["mediaUrl"] == nil || d["forwardedFrom"] != ikey {
		t.Errorf("forward an image: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/messages/forward/true_15550535555@c.us_NOPE", e.Key, map[string]any{"chatId": "+15550536666"}); r.Status != 404 {
		t.Errorf("unknown key: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/messages/forward/"+key, e.Key, map[string]any{}); r.Status != 422 {
		t.Errorf("no chatId: %d %s", r.Status, r.Raw)
	}
	// A key that may send but not read the store cannot copy a received message
	// out; with chats:read as well it can.
	sender := e.NewKey("default", "messages:write")
	if r := e.Do("POST", "/v1/messages/forward/"+ikey, sender, map[string]any{"chatId": "+15550536666"}); r.Status != 403 || r.Error()["code"] != "insufficient_scope" {
		t.Errorf("forward with messages:write only: %d %s", r.Status, r.Raw)
	}
	both := e.NewKey("default", "messages:write", "chats:read")
	if r := e.Do("POST", "/v1/messages/forward/"+key, both, map[string]any{"chatId": "+15550536666"}); r.Status != 201 {
		t.Errorf("forward with messages:write and chats:read: %d %s", r.Status, r.Raw)
	}
}

// Presence goes to the engine, which the sandbox records.
func TestChatPresence(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	for _, s := range []string{"typing", "recording", "paused"} {
		if r := e.Do("POST", "/v1/chats/+15550545555/presence", e.Key, map[string]any{"state": s}); r.Status != 200 {
			t.Fatalf("%s: %d %s", s, r.Status, r.Raw)
		}
	}
	var got []string
	for _, ty := range e.App.Sandbox.Typing(ws) {
		got = append(got, ty.Chat+" "+string(ty.State))
	}
	want := []string{"15550545555@c.us typing", "15550545555@c.us recording", "15550545555@c.us paused"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("presence the sandbox saw (-want +got):\n%s", diff)
	}
	if r := e.Do("POST", "/v1/chats/+15550545555/presence", e.Key, map[string]any{"state": "dancing"}); r.Status != 422 {
		t.Errorf("unknown state: %d %s", r.Status, r.Raw)
	}
}

// GraphQL takes the same actions through the same core.
func TestGraphQLMessageActions(t *testing.T) {
	e := newEnv(t)
	key := sendDirect(e, "+15550555555", "draft")
	d := gqlData(t, e, `mutation($k: String!) {
		editMessage(key: $k, text: "final") { text }
		setChatPresence(chatId: "+15550555555", state: "typing")
		forwardMessage(key: $k, toChatId: "+15550556666") { to text forwardedFrom status }
	}`, map[string]any{"k": key})
	if d["editMessage"].(map[string]any)["text"] != "final" || d["setChatPresence"] != true {
		t.Errorf("edit, presence: %v", d)
	}
	if f := d["forwardMessage"].(map[string]any); f["to"] != "15550556666@c.us" || f["text"] != "final" || f["forwardedFrom"] != key {
		t.Errorf("forward: %v", f)
	}
	d = gqlData(t, e, `mutation($k: String!) { revokeMessage(key: $k) { text wireType } }`, map[string]any{"k": key})
	if r := d["revokeMessage"].(map[string]any); r["wireType"] != "revoked" || r["text"] != nil && r["text"] != "" {
		t.Errorf("revoke: %v", r)
	}
	res := gql(e, e.Key, `mutation($k: String!) { editMessage(key: $k, text: "again") { text } }`, map[string]any{"k": key})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "conflict" {
		t.Errorf("edit of a revoked message: %+v", res.Errors)
	}
}
