package rest_test

import (
	"fmt"
	"net/url"
	"testing"

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
