package rest_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A contact WhatsApp reports by LID (<digits>@lid, the address that hides a
// phone number) is a chat id like any other on every route and filter that takes
// one; a malformed one is a 400 naming the field.
func TestLIDChatIDsAreAccepted(t *testing.T) {
	e := newEnv(t)
	const lid = "188450464616609@lid"
	sent := e.Do("POST", "/v1/messages/"+url.PathEscape(lid), e.Key, map[string]any{"type": "text", "text": "hi by lid", "withTyping": false})
	if sent.Status != 201 || sent.Data()["to"] != lid {
		t.Fatalf("send to a LID = %d %s", sent.Status, sent.Raw)
	}
	queued := schedule(e, lid, map[string]any{"type": "text", "text": "later by lid"})
	waitStatus(e, queued["id"].(string), "confirmed")

	status := func(method, path string, body any) string {
		r := e.Do(method, path, e.Key, body)
		if r.Status >= 400 {
			d := r.Error()
			detail := ""
			if ds, _ := d["details"].([]any); len(ds) > 0 {
				first := ds[0].(map[string]any)
				detail = fmt.Sprintf(" %v:%v", first["path"], first["code"])
			}
			return fmt.Sprintf("%d %v%s", r.Status, d["code"], detail)
		}
		return fmt.Sprint(r.Status)
	}
	esc := url.PathEscape(lid)
	tests := []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"the chat", "GET", "/v1/chats/" + esc + "/participants", nil, "200"},
		{"mark read", "POST", "/v1/chats/" + esc + "/mark_read", nil, "200"},
		{"pinned", "GET", "/v1/messages/pinned/" + esc, nil, "200"},
		{"queue filter", "GET", "/v1/scheduled-messages?chatId=" + url.QueryEscape(lid), nil, "200"},
		{"history filter", "GET", "/v1/messages?chatId=" + url.QueryEscape(lid), nil, "200"},
		{"a letter in a LID", "POST", "/v1/messages/" + url.PathEscape("18845a@lid"), map[string]any{"type": "text", "text": "x"}, "400 invalid_request chatId:invalid_string"},
		{"a LID in group form", "POST", "/v1/messages/" + url.PathEscape("1-2@lid"), map[string]any{"type": "text", "text": "x"}, "400 invalid_request chatId:invalid_string"},
		{"an empty LID", "POST", "/v1/messages/" + url.PathEscape("@lid"), map[string]any{"type": "text", "text": "x"}, "400 invalid_request chatId:invalid_string"},
	}
	for _, tc := range tests {
		if got := status(tc.method, tc.path, tc.body); got != tc.want {
			t.Errorf("%s: %s %s = %s, want %s", tc.name, tc.method, tc.path, got, tc.want)
		}
	}

	// The history holds both messages in the LID chat, under the address used.
	var got []string
	for _, m := range e.Do("GET", "/v1/messages?chatId="+url.QueryEscape(lid), e.Key, nil).List() {
		got = append(got, fmt.Sprint(m["chatId"]))
	}
	if diff := cmp.Diff([]string{lid, lid}, got); diff != "" {
		t.Errorf("chat ids of the LID chat's history (-want +got):\n%s", diff)
	}
}

// A sandbox contact WhatsApp first shows by LID only (a number ending in 77) is
// replied to by LID; it then reveals its number, and its LID chat is merged
// into the phone chat: every message once, under the key the network used, the
// reply in the phone chat, the LID chat gone, chat.merged told; the contact and
// the chat answer by either form, and a later send by LID goes to the phone chat.
func TestLIDOnlyContactIsMergedIntoThePhoneChat(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "chat.merged")
	// The world's LID-only contact with a chat.
	var lid string
	for _, c := range e.Do("GET", "/v1/contacts?limit=-1", e.Key, nil).List() {
		id, _ := c["chatId"].(string)
		if strings.HasSuffix(id, "@lid") && c["lid"] == id && e.Do("GET", "/v1/chats/"+url.PathEscape(id), e.Key, nil).Status == 200 {
			lid = id
		}
	}
	if lid == "" {
		t.Fatal("the sandbox world has no LID-only contact with a chat")
	}
	history := func(chat string) []map[string]any {
		return e.Do("GET", "/v1/messages?limit=200&chatId="+url.QueryEscape(chat), e.Key, nil).List()
	}
	before := history(lid)
	if len(before) == 0 {
		t.Fatal("the LID chat has no history")
	}
	sent := e.Do("POST", "/v1/messages/"+url.PathEscape(lid), e.Key, map[string]any{"type": "text", "text": "hi by LID", "withTyping": false})
	if sent.Status != 201 || sent.Data()["to"] != lid {
		t.Fatalf("reply by LID = %d %s", sent.Status, sent.Raw)
	}
	// The number is revealed with the contact's reply: the chats merge.
	var phone string
	e.Eventually(10*time.Second, "the merge", func() bool {
		c := e.Do("GET", "/v1/chats/"+url.PathEscape(lid), e.Key, nil)
		phone, _ = c.Data()["chatId"].(string)
		return c.Status == 200 && strings.HasSuffix(phone, "@c.us") && len(history(phone)) == len(before)+2
	})
	after := history(phone)
	keys := map[string]int{}
	var lidKeys, chats []string
	for _, m := range after {
		k := m["waMessageKey"].(map[string]any)
		keys[k["_serialized"].(string)]++
		if k["remote"] == lid {
			lidKeys = append(lidKeys, k["_serialized"].(string))
		}
		chats = append(chats, m["chatId"].(string))
	}
	for k, n := range keys {
		if n > 1 {
			t.Errorf("message %s is stored %d times", k, n)
		}
	}
	if len(lidKeys) != len(after) {
		t.Errorf("%d of %d messages keep their LID key; want all (the network used the LID)", len(lidKeys), len(after))
	}
	if diff := cmp.Diff(slices.Repeat([]string{phone}, len(after)), chats); diff != "" {
		t.Errorf("chat ids after the merge (-want +got):\n%s", diff)
	}
	if n := len(history(lid)); n != 0 {
		t.Errorf("the LID chat still holds %d messages", n)
	}
	if n := countEvents(e, "chat.merged"); n != 1 {
		t.Errorf("chat.merged recorded %d times, want once", n)
	}
	for _, id := range []string{lid, phone} {
		c := e.Do("GET", "/v1/contacts/"+url.PathEscape(id), e.Key, nil)
		if c.Status != 200 || c.Data()["chatId"] != phone || c.Data()["lid"] != lid {
			t.Errorf("contact by %s = %d %s; want chatId %s, lid %s", id, c.Status, c.Raw, phone, lid)
		}
	}
	if c := e.Do("GET", "/v1/contacts/"+url.PathEscape("15550009999@lid"), e.Key, nil); c.Status != 404 {
		t.Errorf("unknown contact = %d %s, want 404", c.Status, c.Raw)
	}
	// A later send by LID goes to the one chat of the person.
	again := e.Do("POST", "/v1/messages/"+url.PathEscape(lid), e.Key, map[string]any{"type": "text", "text": "again", "withTyping": false})
	if again.Status != 201 || again.Data()["to"] != phone {
		t.Errorf("send by LID after the merge = %d %s; want it to the phone chat", again.Status, again.Raw)
	}
	if c := e.Do("GET", "/v1/chats?includeWithoutName=true&includeArchive=true&limit=200&searchToken="+url.QueryEscape(lid), e.Key, nil); len(c.List()) != 0 {
		t.Errorf("chats by LID after the merge: %s", c.Raw)
	}
}
