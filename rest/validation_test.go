package rest_test

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestScheduleValidation(t *testing.T) {
	e := newEnv(t)
	future := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }
	tests := []struct {
		name     string
		chatID   string
		body     any
		want     int
		wantPath string
	}{
		{"bad chat id", "hello", map[string]any{"type": "text", "text": "x"}, 400, "chatId"},
		{"phone without plus", "15551234567", map[string]any{"type": "text", "text": "x"}, 400, "chatId"},
		{"bad jid domain", "123@s.whatsapp.net", map[string]any{"type": "text", "text": "x"}, 400, "chatId"},
		{"malformed json", "+15551234567", `{"type":`, 400, "body"},
		{"not an object", "+15551234567", `[1,2]`, 400, "body"},
		{"trailing data", "+15551234567", `{"type":"text","text":"x"} {}`, 400, "body"},
		{"unknown field", "+15551234567", map[string]any{"type": "text", "text": "x", "to": "y"}, 400, "to"},
		{"wrong type", "+15551234567", map[string]any{"type": "text", "text": 5}, 400, "text"},
		{"missing type", "+15551234567", map[string]any{"text": "x"}, 422, "type"},
		{"unknown type", "+15551234567", map[string]any{"type": "sticker"}, 422, "type"},
		{"text missing", "+15551234567", map[string]any{"type": "text"}, 422, "text"},
		{"text empty", "+15551234567", map[string]any{"type": "text", "text": ""}, 422, "text"},
		{"text too long", "+15551234567", map[string]any{"type": "text", "text": strings.Repeat("a", 4097)}, 422, "text"},
		{"media missing source", "+15551234567", map[string]any{"type": "media"}, 422, "mediaUrl"},
		{"media http url", "+15551234567", map[string]any{"type": "media", "mediaUrl": "http://example.com/a.png"}, 422, "mediaUrl"},
		{"media url too long", "+15551234567", map[string]any{"type": "media", "mediaUrl": "https://e.com/" + strings.Repeat("a", 2048)}, 422, "mediaUrl"},
		{"media bad base64", "+15551234567", map[string]any{"type": "media", "mediaBase64": "%%%"}, 422, "mediaBase64"},
		{"media bad kind", "+15551234567", map[string]any{"type": "media", "mediaUrl": "https://e.com/a.png", "mediaKind": "hologram"}, 422, "mediaKind"},
		{"media long filename", "+15551234567", map[string]any{"type": "media", "mediaUrl": "https://e.com/a.png", "mediaFilename": strings.Repeat("f", 256)}, 422, "mediaFilename"},
		{"media empty filename", "+15551234567", map[string]any{"type": "media", "mediaUrl": "https://e.com/a.png", "mediaFilename": ""}, 422, "mediaFilename"},
		{"poll no question", "+15551234567", map[string]any{"type": "poll", "pollOptions": []string{"a", "b"}}, 422, "pollQuestion"},
		{"poll one option", "+15551234567", map[string]any{"type": "poll", "pollQuestion": "q", "pollOptions": []string{"a"}}, 422, "pollOptions"},
		{"poll 13 options", "+15551234567", map[string]any{"type": "poll", "pollQuestion": "q", "pollOptions": strings.Split("a,b,c,d,e,f,g,h,i,j,k,l,m", ",")}, 422, "pollOptions"},
		{"poll empty option", "+15551234567", map[string]any{"type": "poll", "pollQuestion": "q", "pollOptions": []string{"a", ""}}, 422, "pollOptions.1"},
		{"poll long option", "+15551234567", map[string]any{"type": "poll", "pollQuestion": "q", "pollOptions": []string{"a", strings.Repeat("o", 101)}}, 422, "pollOptions.1"},
		{"poll duplicate option", "+15551234567", map[string]any{"type": "poll", "pollQuestion": "q", "pollOptions": []string{"a", "A"}}, 422, "pollOptions.1"},
		{"poll question too long", "+15551234567", map[string]any{"type": "poll", "pollQuestion": strings.Repeat("q", 256), "pollOptions": []string{"a", "b"}}, 422, "pollQuestion"},
		{"sendAt not a date", "+15551234567", map[string]any{"type": "text", "text": "x", "sendAt": "tomorrow"}, 422, "sendAt"},
		{"sendAt too soon", "+15551234567", map[string]any{"type": "text", "text": "x", "sendAt": future(5 * time.Second)}, 422, "sendAt"},
		{"sendAt past", "+15551234567", map[string]any{"type": "text", "text": "x", "sendAt": future(-time.Hour)}, 422, "sendAt"},
		{"sendAt too far", "+15551234567", map[string]any{"type": "text", "text": "x", "sendAt": future(366 * 24 * time.Hour)}, 422, "sendAt"},
		{"replyTo too long", "+15551234567", map[string]any{"type": "text", "text": "x", "replyTo": strings.Repeat("r", 257)}, 422, "replyTo"},
		{"secret empty", "+15551234567", map[string]any{"type": "text", "text": "x", "secret": ""}, 422, "secret"},
		{"secret too long", "+15551234567", map[string]any{"type": "text", "text": "x", "secret": strings.Repeat("s", 257)}, 422, "secret"},
		{"poll fields on text", "+15551234567", map[string]any{"type": "text", "text": "x", "pollQuestion": "q"}, 422, "pollQuestion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Do("POST", "/v1/scheduled-messages/"+tt.chatID, e.Key, tt.body)
			if resp.Status != tt.want {
				t.Fatalf("status = %d, want %d: %s", resp.Status, tt.want, resp.Raw)
			}
			if paths := resp.DetailPaths(); !slices.Contains(paths, tt.wantPath) {
				t.Errorf("details paths = %v, want %q: %s", paths, tt.wantPath, resp.Raw)
			}
		})
	}
	// Nothing was half-written.
	if list := e.Do("GET", "/v1/scheduled-messages", e.Key, nil); list.Body["total"].(float64) != 0 {
		t.Errorf("rejected requests stored %v messages", list.Body["total"])
	}
}

func TestRequestFormatErrors(t *testing.T) {
	e := newEnv(t)
	resp := e.Do("POST", "/v1/scheduled-messages/+15551234567", e.Key, nil, "Content-Type", "text/plain")
	if resp.Status != 415 {
		t.Errorf("text/plain = %d, want 415", resp.Status)
	}
	big := `{"type":"media","mediaBase64":"` + strings.Repeat("A", 11<<20) + `"}`
	if resp := e.Do("POST", "/v1/scheduled-messages/+15551234567", e.Key, big); resp.Status != 413 {
		t.Errorf("11 MB JSON = %d, want 413: %.200s", resp.Status, resp.Raw)
	}
	if resp := e.Do("POST", "/v1/scheduled-messages/+15551234567", e.Key, `{"type":"text","text":"x"}`, "Idempotency-Key", strings.Repeat("k", 65)); resp.Status != 400 {
		t.Errorf("65-char idempotency key = %d, want 400", resp.Status)
	}
}

func TestListValidation(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		query, path string
	}{
		{"limit=0", "limit"},
		{"limit=201", "limit"},
		{"limit=ten", "limit"},
		{"skip=-1", "skip"},
		{"order=sideways", "order"},
		{"status=lost", "status"},
		{"chatId=bob", "chatId"},
		{"searchToken=" + strings.Repeat("s", 201), "searchToken"},
	}
	for _, tt := range tests {
		resp := e.Do("GET", "/v1/scheduled-messages?"+tt.query, e.Key, nil)
		if resp.Status != 400 || !slices.Contains(resp.DetailPaths(), tt.path) {
			t.Errorf("?%s = %d %s, want 400 naming %s", tt.query, resp.Status, resp.Raw, tt.path)
		}
	}
}
