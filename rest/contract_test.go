package rest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The contract's last gaps against the spec and the reference (issue 26, rows
// 14-22), each through the real router.

// GET /v1/chats carries lastMessageText and lastMessageFromMe only with
// includeLastMessage=true (the reference); one chat always carries them.
func TestChatsLastMessageOnlyWhenAsked(t *testing.T) {
	e := newEnv(t)
	has := func(path string) []bool {
		t.Helper()
		r := e.Do("GET", path, e.Key, nil)
		if r.Status != 200 {
			t.Fatalf("GET %s = %d %s", path, r.Status, r.Raw)
		}
		var out []bool
		for _, c := range r.List() {
			_, text := c["lastMessageText"]
			_, fromMe := c["lastMessageFromMe"]
			if text != fromMe {
				t.Errorf("%s: chat %v has one of the pair only", path, c["chatId"])
			}
			out = append(out, text)
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"", false},
		{"&includeLastMessage=false", false},
		{"&includeLastMessage=true", true},
	} {
		got := has("/v1/chats?limit=5" + tc.query)
		want := []bool{tc.want, tc.want, tc.want, tc.want, tc.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("includeLastMessage %q: last message present (-want +got):\n%s", tc.query, diff)
		}
	}
	if r := e.Do("GET", "/v1/chats?includeLastMessage=maybe", e.Key, nil); r.Status != 400 || !cmp.Equal(r.DetailPaths(), []string{"includeLastMessage"}) {
		t.Errorf("includeLastMessage=maybe = %d %v", r.Status, r.DetailPaths())
	}
	first := e.Do("GET", "/v1/chats?limit=1", e.Key, nil).List()[0]["chatId"].(string)
	if c := e.Do("GET", "/v1/chats/"+first, e.Key, nil).Data(); c["lastMessageText"] == nil || c["lastMessageFromMe"] == nil {
		t.Errorf("one chat without its last message: %v", c)
	}
}
