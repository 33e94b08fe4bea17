package rest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Statuses on the sandbox: a text and an image status are posted and listed
// newest first with the account's; a contact's status (simulated) is stored,
// listed by contact and delivered as status.received; the account's own can be
// deleted, a contact's cannot.
func TestStatusesOnTheSandbox(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "status.received")

	r := e.Do("POST", "/v1/status", e.Key, map[string]any{"type": "text", "text": "Open today 9-17", "backgroundColor": "#1e88e5", "font": 2})
	if r.Status != 201 {
		t.Fatalf("post text status: %d %s", r.Status, r.Raw)
	}
	text := r.Data()
	if text["status"] != "sent" || text["fromMe"] != true || text["backgroundColor"] != "#1E88E5" || text["font"] != float64(2) ||
		text["type"] != "text" || text["waMessageId"] == "" || text["expired"] != false {
		t.Errorf("text status: %s", r.Raw)
	}
	png, _ := pngDataURL(t, 2, 2)
	r = e.Do("POST", "/v1/status", e.Key, map[string]any{"type": "image", "caption": "New in store", "mediaBase64": png,
		"audience": []string{"+15550401001", "15550401002@c.us"}})
	if r.Status != 201 {
		t.Fatalf("post image status: %d %s", r.Status, r.Raw)
	}
	image := r.Data()
	if image["type"] != "image" || image["text"] != "New in store" || image["mediaUrl"] == nil ||
		fmt.Sprint(image["audience"]) != "[15550401001@c.us 15550401002@c.us]" {
		t.Errorf("image status: %s", r.Raw)
	}
	r = e.Do("POST", "/v1/status", e.Key, map[string]any{"type": "text", "text": "to everyone", "audience": "contacts"})
	if r.Status != 201 || r.Data()["audience"] != nil {
		t.Errorf("post to contacts: %d %s", r.Status, r.Raw)
	}

	r = e.Do("POST", "/v1/sandbox/statuses", e.Key, map[string]any{"from": "+15550401003", "text": "Hello from my status", "backgroundColor": "#000000"})
	if r.Status != 201 || r.Data()["from"] != "15550401003@c.us" || r.Data()["status"] != "received" {
		t.Fatalf("simulate status: %d %s", r.Status, r.Raw)
	}
	theirs := r.Data()["id"].(string)
	e.Eventually(15*time.Second, "the contact's status is stored", func() bool {
		return len(e.Do("GET", "/v1/status?contact=%2B15550401003", e.Key, nil).List()) == 1
	})
	got := e.Do("GET", "/v1/status?contact=%2B15550401003", e.Key, nil).List()[0]
	if got["id"] != theirs || got["text"] != "Hello from my status" || got["fromMe"] != false || got["backgroundColor"] != "#000000" {
		t.Errorf("the contact's status: %v", got)
	}
	e.Eventually(15*time.Second, "status.received", func() bool { return len(rc.ofType("status.received")) == 1 })
	data := rc.ofType("status.received")[0].payload["data"].(map[string]any)
	if data["id"] != theirs || data["from"] != "15550401003@c.us" || data["text"] != "Hello from my status" || data["status"] != "received" {
		t.Errorf("status.received data: %v", data)
	}

	all := e.Do("GET", "/v1/status", e.Key, nil)
	var texts []string
	for _, s := range all.List() {
		texts = append(texts, s["text"].(string))
	}
	if diff := cmp.Diff([]string{"Hello from my status", "to everyone", "New in store", "Open today 9-17"}, texts); diff != "" {
		t.Errorf("list newest first (-want +got):\n%s", diff)
	}
	if n := len(e.Do("GET", "/v1/status?fromMe=true&limit=2", e.Key, nil).List()); n != 2 {
		t.Errorf("fromMe page of 2: %d", n)
	}

	r = e.Do("DELETE", "/v1/status/"+text["id"].(string), e.Key, nil)
	if r.Status != 200 || r.Data()["status"] != "revoked" {
		t.Errorf("delete own status: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/v1/status/"+text["id"].(string), e.Key, nil); r.Data()["status"] != "revoked" {
		t.Errorf("deleted status reads %s", r.Raw)
	}

	reader := e.NewKey("default", "status:read")
	tooMany := make([]string, 257)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("+1555040%04d", i)
	}
	for _, tc := range []struct {
		name, key, method, path string
		body                    any
		want                    string
	}{
		{"bad audience entry", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "audience": []string{"+15550401001", "nobody"}}, "422 validation_failed audience.1:invalid_string"},
		{"too many", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "audience": tooMany}, "422 validation_failed audience:too_big"},
		{"empty audience", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "audience": []string{}}, "422 validation_failed audience:too_small"},
		{"audience not a list", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "audience": 7}, "422 validation_failed audience:invalid_type"},
		{"bad type", e.Key, "POST", "/v1/status", map[string]any{"type": "poll", "text": "x"}, "422 validation_failed type:invalid_enum_value"},
		{"type missing", e.Key, "POST", "/v1/status", map[string]any{"text": "x"}, "422 validation_failed type:invalid_type"},
		{"text missing", e.Key, "POST", "/v1/status", map[string]any{"type": "text"}, "422 validation_failed text:too_big"},
		{"text too long", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": strings.Repeat("t", 701)}, "422 validation_failed text:too_big"},
		{"bad colour", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "backgroundColor": "blue"}, "422 validation_failed backgroundColor:invalid_string"},
		{"bad font", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "font": 3}, "422 validation_failed font:invalid_enum_value"},
		{"media missing", e.Key, "POST", "/v1/status", map[string]any{"type": "image"}, "422 validation_failed mediaUrl:invalid_type"},
		{"media not an image", e.Key, "POST", "/v1/status", map[string]any{"type": "image", "mediaBase64": "data:text/plain;base64,aGVsbG8="}, "422 validation_failed mediaKind:invalid_type"},
		{"media url not https", e.Key, "POST", "/v1/status", map[string]any{"type": "video", "mediaUrl": "ftp://example.com/a.mp4"}, "422 validation_failed mediaUrl:invalid_string"},
		{"media on a text status", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "mediaUrl": "https://example.com/a.jpg"}, "422 validation_failed mediaUrl:unrecognized_keys"},
		{"unknown field", e.Key, "POST", "/v1/status", map[string]any{"type": "text", "text": "x", "colour": "#000000"}, "400"},
		{"read-only key", reader, "POST", "/v1/status", map[string]any{"type": "text", "text": "x"}, "403 insufficient_scope"},
		{"unknown status", e.Key, "DELETE", "/v1/status/status_nope", nil, "404 not_found id:not_found"},
		{"a contact's status", e.Key, "DELETE", "/v1/status/" + theirs, nil, "409 conflict"},
		{"bad contact filter", e.Key, "GET", "/v1/status?contact=nobody", nil, "400 invalid_request contact:invalid_string"},
		{"bad limit", e.Key, "GET", "/v1/status?limit=500", nil, "400 invalid_request limit:too_big"},
		{"simulating needs admin", reader, "POST", "/v1/sandbox/statuses", map[string]any{"from": "+15550401003", "text": "x"}, "403 insufficient_scope"},
		{"simulated author not a number", e.Key, "POST", "/v1/sandbox/statuses", map[string]any{"from": "nobody", "text": "x"}, "422 validation_failed from:invalid_string"},
	} {
		if r := e.Do(tc.method, tc.path, tc.key, tc.body); !strings.HasPrefix(errorOf(r), tc.want) {
			t.Errorf("%s: %s, want %s (%s)", tc.name, errorOf(r), tc.want, r.Raw)
		}
	}
	if r := e.Do("GET", "/v1/status", reader, nil); r.Status != 200 {
		t.Errorf("status:read lists: %d %s", r.Status, r.Raw)
	}
}
