package rest_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// waitStatus polls a scheduled message until it reaches status.
func waitStatus(e *apptest.Env, id, status string) map[string]any {
	e.T.Helper()
	var last map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if last = e.Do("GET", "/v1/scheduled-messages/"+id, e.Key, nil).Data(); last["status"] == status {
			return last
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.T.Fatalf("%s did not become %s within 10s; last seen: %v", id, status, last)
	return nil
}

func schedule(e *apptest.Env, chatID string, body map[string]any) map[string]any {
	e.T.Helper()
	resp := e.Do("POST", "/v1/scheduled-messages/"+chatID, e.Key, body)
	if resp.Status != 201 {
		e.T.Fatalf("schedule: %d %s", resp.Status, resp.Raw)
	}
	return resp.Data()
}

func TestLifecycleThroughSandbox(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name, to string
		body     map[string]any
		final    string
		stamps   []string
		noStamps []string
	}{
		{"read", "+15550001234", map[string]any{"type": "text", "text": "hi"}, "read",
			[]string{"confirmedAt", "receivedAt", "readAt"}, []string{"failedAt", "playedAt"}},
		{"never read", "+15550001111", map[string]any{"type": "text", "text": "hi"}, "received",
			[]string{"confirmedAt", "receivedAt"}, []string{"readAt"}},
		{"fails", "+15550000000", map[string]any{"type": "text", "text": "hi"}, "failed",
			[]string{"failedAt"}, []string{"confirmedAt", "waMessageKey"}},
		{"voice played", "+15550003333", map[string]any{"type": "media", "mediaUrl": "https://cdn.example.com/note.ogg"}, "played",
			[]string{"confirmedAt", "receivedAt", "readAt", "playedAt"}, nil},
		{"group", "120363000000000001@g.us", map[string]any{"type": "poll", "pollQuestion": "Lunch?", "pollOptions": []string{"Pizza", "Sushi"}}, "read",
			[]string{"readAt"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := schedule(e, tt.to, tt.body)
			if m["status"] != "pending" {
				t.Errorf("created status = %v, want pending", m["status"])
			}
			got := waitStatus(e, m["id"].(string), tt.final)
			time.Sleep(200 * time.Millisecond) // nothing moves it further
			got = e.Do("GET", "/v1/scheduled-messages/"+m["id"].(string), e.Key, nil).Data()
			if got["status"] != tt.final {
				t.Fatalf("status moved on to %v", got["status"])
			}
			for _, f := range tt.stamps {
				if got[f] == nil {
					t.Errorf("%s missing: %v", f, got)
				}
			}
			for _, f := range tt.noStamps {
				if got[f] != nil {
					t.Errorf("%s = %v, want absent", f, got[f])
				}
			}
			if tt.final == "failed" && got["failureReason"] == "" {
				t.Errorf("failed without failureReason")
			}
		})
	}
}

func TestPhoneNumberStoredAsJID(t *testing.T) {
	e := newEnv(t)
	m := schedule(e, "+447700900123", map[string]any{"type": "text", "text": "hello @[Jon Daw](447700900124@c.us)", "secret": "order-17", "replyTo": "false_447700900123@c.us_ABC"})
	if m["to"] != "447700900123@c.us" || m["secret"] != "order-17" {
		t.Errorf("message = %v", m)
	}
	list := e.Do("GET", "/v1/scheduled-messages?chatId=447700900123@c.us", e.Key, nil)
	if list.Body["total"].(float64) != 1 {
		t.Errorf("filter by chatId total = %v", list.Body["total"])
	}
}

func TestReplyFrom2222ArrivesAsIncomingMessage(t *testing.T) {
	e := newEnv(t)
	createWebhook(e, newReceiver(t, nil).URL, "reply_to_my_message_webhook", "new_message_received_webhook")
	m := schedule(e, "+15550002222", map[string]any{"type": "text", "text": "ping"})
	got := waitStatus(e, m["id"].(string), "read")
	key := got["waMessageKey"].(map[string]any)["_serialized"].(string)
	e.Eventually(5*time.Second, "reply event", func() bool {
		return countEvents(e, "reply_to_my_message_webhook") == 1
	})
	if countEvents(e, "new_message_received_webhook") != 1 {
		t.Errorf("no new_message_received_webhook event")
	}
	// The sent message is readable in the chat-message shape.
	resp := e.Do("GET", "/v1/messages/"+key, e.Key, nil)
	if resp.Status != 200 || resp.Data()["fromMe"] != true || resp.Data()["ack"].(float64) != 3 {
		t.Errorf("GET message = %d %s", resp.Status, resp.Raw)
	}
}

func TestScheduledSendWaitsForSendAt(t *testing.T) {
	e := newEnv(t)
	// Validate against a clock 15 s behind, so a sendAt 2 s away is legal here.
	e.App.Resolver.Now = func() time.Time { return time.Now().Add(-15 * time.Second) }
	sendAt := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
	m := schedule(e, "+15550004444", map[string]any{"type": "text", "text": "later", "sendAt": sendAt.Format(time.RFC3339)})
	if m["sendAt"] != sendAt.Format(time.RFC3339) {
		t.Errorf("sendAt = %v, want %s", m["sendAt"], sendAt.Format(time.RFC3339))
	}
	time.Sleep(time.Until(sendAt) - 500*time.Millisecond)
	if s := e.Do("GET", "/v1/scheduled-messages/"+m["id"].(string), e.Key, nil).Data()["status"]; s != "pending" {
		t.Fatalf("status before sendAt = %v, want pending", s)
	}
	got := waitStatus(e, m["id"].(string), "read")
	confirmed, _ := time.Parse(time.RFC3339Nano, got["confirmedAt"].(string))
	if confirmed.Before(sendAt) {
		t.Errorf("confirmed at %s, before sendAt %s", confirmed, sendAt)
	}
}

func TestEditAndCancel(t *testing.T) {
	e := newEnv(t)
	sendAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	m := schedule(e, "+15550005555", map[string]any{"type": "text", "text": "draft", "sendAt": sendAt})
	id := m["id"].(string)

	resp := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"text": "final"})
	if resp.Status != 200 || resp.Data()["text"] != "final" || resp.Data()["sendAt"] != sendAt {
		t.Fatalf("patch text = %d %s", resp.Status, resp.Raw)
	}
	resp = e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"type": "poll", "pollQuestion": "Q?", "pollOptions": []string{"a", "b"}})
	if resp.Status != 200 || resp.Data()["type"] != "poll" || resp.Data()["text"] != nil {
		t.Fatalf("patch to poll = %d %s", resp.Status, resp.Raw)
	}
	if resp := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"pollOptions": []string{"only"}}); resp.Status != 422 {
		t.Errorf("invalid patch = %d, want 422", resp.Status)
	}
	if resp := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"sendAt": "soon"}); resp.Status != 422 {
		t.Errorf("bad sendAt patch = %d, want 422", resp.Status)
	}

	del := e.Do("DELETE", "/v1/scheduled-messages/"+id, e.Key, nil)
	if del.Status != 200 || del.Data()["deleted"] != true || del.Data()["id"] != id {
		t.Fatalf("delete = %d %s", del.Status, del.Raw)
	}
	if got := e.Do("GET", "/v1/scheduled-messages/"+id, e.Key, nil).Data()["status"]; got != "cancelled" {
		t.Errorf("status after delete = %v, want cancelled", got)
	}
	if resp := e.Do("DELETE", "/v1/scheduled-messages/"+id, e.Key, nil); resp.Status != 409 {
		t.Errorf("second delete = %d, want 409", resp.Status)
	}
	if resp := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"text": "x"}); resp.Status != 409 {
		t.Errorf("patch after cancel = %d, want 409", resp.Status)
	}
	if resp := e.Do("GET", "/v1/scheduled-messages/msg_nope", e.Key, nil); resp.Status != 404 {
		t.Errorf("unknown id = %d, want 404", resp.Status)
	}

	// A message already dispatched can no longer be edited.
	sent := schedule(e, "+15550006666", map[string]any{"type": "text", "text": "now"})
	waitStatus(e, sent["id"].(string), "read")
	if resp := e.Do("PATCH", "/v1/scheduled-messages/"+sent["id"].(string), e.Key, map[string]any{"text": "late"}); resp.Status != 409 {
		t.Errorf("patch after dispatch = %d, want 409", resp.Status)
	}
}

func TestRescheduleMovesDispatch(t *testing.T) {
	e := newEnv(t)
	e.App.Resolver.Now = func() time.Time { return time.Now().Add(-15 * time.Second) }
	m := schedule(e, "+15550007777", map[string]any{"type": "text", "text": "x", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	soon := time.Now().Add(1 * time.Second).UTC().Format(time.RFC3339)
	if resp := e.Do("PATCH", "/v1/scheduled-messages/"+m["id"].(string), e.Key, map[string]any{"sendAt": soon}); resp.Status != 200 {
		t.Fatalf("reschedule = %d %s", resp.Status, resp.Raw)
	}
	waitStatus(e, m["id"].(string), "read")
}

func TestListPaginationAndFilters(t *testing.T) {
	e := newEnv(t)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var ids []string
	for i := 0; i < 7; i++ {
		m := schedule(e, fmt.Sprintf("+1555000%04d", 8000+i), map[string]any{"type": "text", "text": fmt.Sprintf("note %d", i), "sendAt": later})
		ids = append(ids, m["id"].(string))
	}
	schedule(e, "+15550008100", map[string]any{"type": "poll", "pollQuestion": "Dinner plans?", "pollOptions": []string{"a", "b"}, "sendAt": later})
	e.Do("DELETE", "/v1/scheduled-messages/"+ids[0], e.Key, nil)

	page := e.Do("GET", "/v1/scheduled-messages?limit=3&skip=2&order=asc", e.Key, nil)
	if page.Body["total"].(float64) != 8 || page.Body["limit"].(float64) != 3 || page.Body["skip"].(float64) != 2 {
		t.Fatalf("page envelope = %s", page.Raw)
	}
	if got := page.List(); len(got) != 3 || got[0]["id"] != ids[2] || got[2]["id"] != ids[4] {
		t.Errorf("asc page = %v", page.Raw)
	}
	desc := e.Do("GET", "/v1/scheduled-messages?limit=1", e.Key, nil).List()
	if len(desc) != 1 || desc[0]["type"] != "poll" {
		t.Errorf("desc first = %v", desc)
	}
	beyond := e.Do("GET", "/v1/scheduled-messages?skip=100", e.Key, nil)
	if len(beyond.List()) != 0 || beyond.Body["total"].(float64) != 8 {
		t.Errorf("beyond the end = %s", beyond.Raw)
	}
	if n := e.Do("GET", "/v1/scheduled-messages?status=cancelled", e.Key, nil).Body["total"]; n.(float64) != 1 {
		t.Errorf("status=cancelled total = %v", n)
	}
	if n := e.Do("GET", "/v1/scheduled-messages?searchToken=DINNER", e.Key, nil).Body["total"]; n.(float64) != 1 {
		t.Errorf("searchToken total = %v", n)
	}
	if n := e.Do("GET", "/v1/scheduled-messages?searchToken=note", e.Key, nil).Body["total"]; n.(float64) != 7 {
		t.Errorf("searchToken=note total = %v", n)
	}
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"type": "text", "text": "once"}
	first := e.Do("POST", "/v1/scheduled-messages/+15550009999", e.Key, body, "Idempotency-Key", "order-1")
	if first.Status != 201 {
		t.Fatalf("first = %d %s", first.Status, first.Raw)
	}
	time.Sleep(300 * time.Millisecond) // let the message move on: the replay is of the first answer
	again := e.Do("POST", "/v1/scheduled-messages/+15550009999", e.Key, body, "Idempotency-Key", "order-1")
	if again.Status != 200 || !bytes.Equal(again.Raw, first.Raw) {
		t.Errorf("replay = %d %s, want 200 with %s", again.Status, again.Raw, first.Raw)
	}
	other := e.Do("POST", "/v1/scheduled-messages/+15550009999", e.Key, map[string]any{"type": "text", "text": "twice"}, "Idempotency-Key", "order-1")
	if other.Status != 409 {
		t.Errorf("different body = %d, want 409", other.Status)
	}
	// Keys are per workspace: another workspace may use the same key.
	acme := e.NewKey("acme", "*")
	if r := e.Do("POST", "/v1/scheduled-messages/+15550009999", acme, body, "Idempotency-Key", "order-1"); r.Status != 201 {
		t.Errorf("same key in another workspace = %d, want 201", r.Status)
	}
	if n := e.Do("GET", "/v1/scheduled-messages", e.Key, nil).Body["total"]; n.(float64) != 1 {
		t.Errorf("messages = %v, want 1", n)
	}
}

func TestIdempotencyConcurrent(t *testing.T) {
	e := newEnv(t)
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	ids := make([]any, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.Do("POST", "/v1/scheduled-messages/+15550001212", e.Key, map[string]any{"type": "text", "text": "race"}, "Idempotency-Key", "race-1")
			statuses[i], ids[i] = r.Status, r.Data()["id"]
		}(i)
	}
	wg.Wait()
	created := 0
	for i := range statuses {
		if statuses[i] == 201 {
			created++
		} else if statuses[i] != 200 {
			t.Errorf("request %d = %d", i, statuses[i])
		}
		if ids[i] != ids[0] {
			t.Errorf("request %d got id %v, want %v", i, ids[i], ids[0])
		}
	}
	if created != 1 {
		t.Errorf("%d requests created a message, want 1", created)
	}
	if total := e.Do("GET", "/v1/scheduled-messages", e.Key, nil).Body["total"]; total.(float64) != 1 {
		t.Errorf("messages = %v, want 1", total)
	}
}

func TestMediaUploads(t *testing.T) {
	e := newEnv(t)
	png := []byte("\x89PNG\r\n\x1a\n fake image bytes")
	cases := []struct {
		name     string
		body     map[string]any
		wantKind string
	}{
		{"base64", map[string]any{"type": "media", "mediaBase64": base64.StdEncoding.EncodeToString(png), "mediaFilename": "pic.png", "text": "caption"}, "image"},
		{"data url", map[string]any{"type": "media", "mediaBase64": "data:application/pdf;base64," + base64.StdEncoding.EncodeToString([]byte("%PDF-1.4")), "mediaFilename": "invoice.pdf"}, "document"},
		{"url with kind", map[string]any{"type": "media", "mediaUrl": "https://cdn.example.com/v.bin", "mediaKind": "video"}, "video"},
		{"url detected", map[string]any{"type": "media", "mediaUrl": "https://cdn.example.com/clip.mp4"}, "video"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := schedule(e, "+15550001313", tc.body)
			if m["mediaKind"] != tc.wantKind {
				t.Errorf("mediaKind = %v, want %s", m["mediaKind"], tc.wantKind)
			}
			u, _ := m["mediaUrl"].(string)
			if _, ok := tc.body["mediaBase64"]; ok {
				if !strings.HasPrefix(u, e.Server.URL+"/media/") {
					t.Fatalf("mediaUrl = %q, want a server URL", u)
				}
				resp, err := http.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || len(got) == 0 {
					t.Errorf("GET media = %d (%d bytes)", resp.StatusCode, len(got))
				}
			}
		})
	}

	// multipart/form-data with a mediaFile part.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "media")
	_ = mw.WriteField("text", "from a form")
	fw, _ := mw.CreateFormFile("mediaFile", "song.mp3")
	_, _ = fw.Write(bytes.Repeat([]byte{1, 2, 3}, 4<<20)) // 12 MB: above the JSON limit
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+"/v1/scheduled-messages/+15550001313", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.Key)
	resp := e.Send(req)
	if resp.Status != 201 || resp.Data()["mediaKind"] != "audio" || resp.Data()["text"] != "from a form" {
		t.Fatalf("multipart = %d %s", resp.Status, resp.Raw)
	}
	head, err := http.Head(resp.Data()["mediaUrl"].(string))
	if err != nil || head.ContentLength != 12<<20 {
		t.Errorf("served upload: %v, length %d", err, head.ContentLength)
	}
	if r, _ := http.Get(e.Server.URL + "/media/guess"); r.StatusCode != 404 {
		t.Errorf("unknown media token = %d, want 404", r.StatusCode)
	}
}

func TestLinkPreviewAttachedAtDispatch(t *testing.T) {
	e := newEnv(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>fallback</title><meta property="og:title" content="Spring Sale"><meta property="og:description" content="50% off &amp; more"><meta property="og:image" content="https://img.example/x.png"></head></html>`)
	}))
	defer page.Close()
	m := schedule(e, "+15550001414", map[string]any{"type": "text", "text": "see " + page.URL + "/sale, today"})
	got := waitStatus(e, m["id"].(string), "read")
	lp, _ := got["linkPreview"].(map[string]any)
	if lp["title"] != "Spring Sale" || lp["description"] != "50% off & more" || lp["thumbnail"] != "https://img.example/x.png" || lp["canonicalUrl"] != page.URL+"/sale" {
		t.Errorf("linkPreview = %v", lp)
	}
}

func TestDirectSend(t *testing.T) {
	e := newEnv(t)
	resp := e.Do("POST", "/v1/messages/+15550001515", e.Key, map[string]any{"type": "text", "text": "now"})
	if resp.Status != 201 {
		t.Fatalf("direct send = %d %s", resp.Status, resp.Raw)
	}
	d := resp.Data()
	key, _ := d["waMessageKey"].(map[string]any)
	if d["status"] != "confirmed" || key == nil || d["id"] != key["_serialized"] {
		t.Fatalf("direct send data = %v", d)
	}
	e.Eventually(5*time.Second, "read ack", func() bool {
		return e.Do("GET", "/v1/messages/"+d["id"].(string), e.Key, nil).Data()["ack"] == float64(3)
	})
	// Direct sends are not queue records.
	if n := e.Do("GET", "/v1/scheduled-messages", e.Key, nil).Body["total"]; n.(float64) != 0 {
		t.Errorf("queue has %v entries after a direct send", n)
	}
	if r := e.Do("POST", "/v1/messages/+15550001515", e.Key, map[string]any{"type": "text", "text": "x", "sendAt": time.Now().Add(time.Hour).Format(time.RFC3339)}); r.Status != 422 {
		t.Errorf("direct send with sendAt = %d, want 422", r.Status)
	}
	failed := e.Do("POST", "/v1/messages/+15550000000", e.Key, map[string]any{"type": "text", "text": "x"})
	if failed.Status != 201 || failed.Data()["status"] != "failed" || failed.Data()["failureReason"] == "" {
		t.Errorf("direct send to a failing number = %d %s", failed.Status, failed.Raw)
	}
}

func TestDirectSendWithoutEngine(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.SandboxWorkspaces = []string{"nobody"} }})
	ping := e.Do("GET", "/v1/ping", e.Key, nil)
	if conns := ping.Data()["whatsappConnections"].([]any); len(conns) != 0 || ping.Data()["message"] == nil {
		t.Errorf("ping without engine = %s", ping.Raw)
	}
	if r := e.Do("POST", "/v1/messages/+15550001616", e.Key, map[string]any{"type": "text", "text": "x"}); r.Status != 503 {
		t.Errorf("direct send without engine = %d, want 503", r.Status)
	}
	// Queued sends are accepted and wait.
	m := schedule(e, "+15550001616", map[string]any{"type": "text", "text": "x"})
	time.Sleep(300 * time.Millisecond)
	if s := e.Do("GET", "/v1/scheduled-messages/"+m["id"].(string), e.Key, nil).Data()["status"]; s != "pending" {
		t.Errorf("status without engine = %v, want pending", s)
	}
}

func TestPingAndAccount(t *testing.T) {
	e := newEnv(t)
	ping := e.Do("GET", "/v1/ping", e.Key, nil)
	d := ping.Data()
	conns, _ := d["whatsappConnections"].([]any)
	if ping.Status != 200 || d["api"] != "ok" || d["accountId"] == "" || len(conns) != 1 || d["message"] != nil {
		t.Fatalf("ping = %d %s", ping.Status, ping.Raw)
	}
	c := conns[0].(map[string]any)
	if c["type"] != "gateway" || c["connected"] != true || c["id"] == "" {
		t.Errorf("connection = %v", c)
	}
	acct := e.Do("GET", "/v1/account", e.Key, nil)
	a := acct.Data()
	if acct.Status != 200 || a["id"] != d["accountId"] || a["name"] != "default" || a["createdAt"] == nil {
		t.Errorf("account = %s", acct.Raw)
	}
	if _, ok := a["userEmail"]; !ok {
		t.Errorf("account lacks userEmail (null): %s", acct.Raw)
	}
}
