package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
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

// GET /v1/contacts pages 10 by default (the reference), and limit=-1 answers
// every contact in one list, read and written a chunk at a time: more contacts
// than a chunk come back once each, in the paged order, with the exact total.
func TestContactsDefaultPageAndEveryContact(t *testing.T) {
	e := newEnv(t)
	ctx := viewer.WorkspaceContext(context.Background(), workspaceOf(e))
	first := e.Do("GET", "/v1/contacts", e.Key, nil)
	if first.Status != 200 || len(first.List()) != 10 || first.Body["limit"] != 10.0 {
		t.Fatalf("default page = %d, %d contacts, limit %v", first.Status, len(first.List()), first.Body["limit"])
	}
	// More than two chunks of the stream.
	creates := make([]*ent.ContactCreate, 2100)
	for i := range creates {
		creates[i] = e.App.Client.Contact.Create().SetJid(fmt.Sprintf("1555099%05d@c.us", i)).SetName(fmt.Sprintf("Bulk %05d", i))
	}
	for start := 0; start < len(creates); start += 500 {
		if err := e.App.Client.Contact.CreateBulk(creates[start:min(start+500, len(creates))]...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	all := e.Do("GET", "/v1/contacts?limit=-1", e.Key, nil)
	if all.Status != 200 {
		t.Fatalf("limit=-1 = %d %s", all.Status, all.Raw)
	}
	got := all.List()
	total := int(all.Body["total"].(float64))
	if len(got) != total || total < 2100 || all.Body["limit"] != -1.0 || all.Body["skip"] != 0.0 {
		t.Fatalf("limit=-1: %d contacts, limit %v skip %v total %d", len(got), all.Body["limit"], all.Body["skip"], total)
	}
	var paged []string
	for skip := 0; skip < total; skip += 200 {
		for _, c := range e.Do("GET", fmt.Sprintf("/v1/contacts?limit=200&skip=%d", skip), e.Key, nil).List() {
			paged = append(paged, c["chatId"].(string))
		}
	}
	var streamed []string
	for _, c := range got {
		streamed = append(streamed, c["chatId"].(string))
	}
	if diff := cmp.Diff(paged, streamed); diff != "" {
		t.Errorf("limit=-1 differs from the pages (-paged +streamed):\n%s", diff)
	}
	tail := e.Do("GET", fmt.Sprintf("/v1/contacts?limit=-1&skip=%d", total-3), e.Key, nil)
	if len(tail.List()) != 3 || tail.Body["skip"] != float64(total-3) {
		t.Errorf("limit=-1 with skip: %d contacts, skip %v", len(tail.List()), tail.Body["skip"])
	}
	search := e.Do("GET", "/v1/contacts?limit=-1&searchToken=Bulk%20020", e.Key, nil)
	if len(search.List()) != 100 || search.Body["total"] != 100.0 {
		t.Errorf("limit=-1 with searchToken: %d contacts, total %v", len(search.List()), search.Body["total"])
	}
	for _, q := range []string{"limit=-2", "limit=0", "limit=201", "limit=-1&skip=-1"} {
		r := e.Do("GET", "/v1/contacts?"+q, e.Key, nil)
		if r.Status != 400 || r.Body["success"] != false {
			t.Errorf("%s = %d %s", q, r.Status, r.Raw)
		}
	}
	if r := e.Do("GET", "/v1/contacts?limit=-1", e.NewKey("default", "chats:read"), nil); r.Status != 403 {
		t.Errorf("limit=-1 without contacts:read = %d", r.Status)
	}
}

// POST /v1/newsletters takes a description (at most 2048 characters, the
// reference's bound) that the newsletter keeps: in the create answer, the get and
// the list, through the in-process sandbox and through a remote engine.
func TestNewsletterDescription(t *testing.T) {
	e := remoteEnv(t)
	remoteKey := e.NewKey("acme", "*")
	rem := createEngine(e, remoteKey, "remote")
	runSandbox(t, e.Server.URL, rem["token"].(string))
	e.Eventually(10*time.Second, "the remote engine in ping", func() bool { return pinged(e, remoteKey, rem["id"].(string)) })

	for _, tc := range []struct{ name, key string }{{"sandbox", e.Key}, {"remote", remoteKey}} {
		t.Run(tc.name, func(t *testing.T) {
			desc := "Launches and fixes, " + strings.Repeat("é", 2000)
			made := e.Do("POST", "/v1/newsletters", tc.key, map[string]any{"name": "Release notes", "description": desc})
			if made.Status != 201 {
				t.Fatalf("create = %d %s", made.Status, made.Raw)
			}
			id, _ := made.Data()["newsletterId"].(string)
			if made.Data()["description"] != desc {
				t.Errorf("create answered description %q", made.Data()["description"])
			}
			if got := e.Do("GET", "/v1/newsletters/"+id, tc.key, nil).Data(); got["description"] != desc {
				t.Errorf("get: description %q", got["description"])
			}
			found := false
			for _, n := range e.Do("GET", "/v1/newsletters?limit=200&searchToken=Release", tc.key, nil).List() {
				found = found || (n["chatId"] == id && n["description"] == desc)
			}
			if !found {
				t.Errorf("the list does not show %s with its description", id)
			}
			plain := e.Do("POST", "/v1/newsletters", tc.key, map[string]any{"name": "No words"})
			if _, has := plain.Data()["description"]; plain.Status != 201 || has {
				t.Errorf("without description = %d %s", plain.Status, plain.Raw)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		path   string
	}{
		{"too long", map[string]any{"name": "n", "description": strings.Repeat("d", 2049)}, 422, "description"},
		{"NUL", map[string]any{"name": "n", "description": "a\x00b"}, 400, "description"},
		{"not a string", map[string]any{"name": "n", "description": 7}, 400, "description"},
	} {
		r := e.Do("POST", "/v1/newsletters", e.Key, tc.body)
		if r.Status != tc.status || !cmp.Equal(r.DetailPaths(), []string{tc.path}) {
			t.Errorf("%s: %d %v %s", tc.name, r.Status, r.DetailPaths(), r.Raw)
		}
	}
}

// A remote engine has one type everywhere: what its hello said (regular or
// gateway), in /v1/engines and in ping alike, also when the engine connects again
// with another kind while its first connection is still live.
func TestEngineTypeAgreesWithPing(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	rem := createEngine(e, key, "remote")
	id := rem["id"].(string)
	if rem["type"] != "regular" {
		t.Errorf("a remote engine that never connected has type %v, want regular", rem["type"])
	}
	types := func() (listed string, pinged []string) {
		t.Helper()
		for _, c := range e.Do("GET", "/v1/ping", key, nil).Data()["whatsappConnections"].([]any) {
			if c := c.(map[string]any); c["id"] == id {
				pinged = append(pinged, c["type"].(string))
			}
		}
		for _, x := range e.Do("GET", "/v1/engines", key, nil).List() {
			if x["id"] == id {
				listed = x["type"].(string)
			}
		}
		return listed, pinged
	}
	connect := func(kind string) context.CancelFunc {
		url := "sqlite://" + t.TempDir() + "/engine.db"
		db, err := storage.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		if err := storage.Migrate(context.Background(), db, url); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		c := &remote.Client{URL: e.Server.URL, Token: rem["token"].(string), Kind: kind, NoReconnect: true}
		go func() { _ = sandbox.ServeRemote(ctx, c, db, 50*time.Millisecond); close(done) }()
		t.Cleanup(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("the sandbox client did not stop")
			}
			db.Close()
		})
		return cancel
	}
	for _, step := range []struct {
		name, kind string
	}{
		{"first connection", "regular"},
		{"connected again, as a gateway, the first still live", "gateway"},
		{"and again as regular", "regular"},
	} {
		connect(step.kind)
		var listed string
		var pinged []string
		e.Eventually(10*time.Second, step.name, func() bool {
			listed, pinged = types()
			return listed == step.kind && len(pinged) > 0 && pinged[len(pinged)-1] == step.kind
		})
		listed, pinged = types()
		if diff := cmp.Diff([]string{step.kind}, pinged); diff != "" || listed != step.kind {
			t.Errorf("%s: /v1/engines type %q, ping (-want +got):\n%s", step.name, listed, diff)
		}
	}
	// Presence holds the engine once, under its last kind: the member of the kind
	// it left would lapse later and be reaped as the end of the live session.
	members, err := e.App.Redis.ZRange(context.Background(), "switchboard:presence:"+workspaceOfKey(e, key), 0, -1).Result()
	if err != nil || !cmp.Equal(members, []string{"regular|" + id}) {
		t.Errorf("presence members = %v, %v", members, err)
	}
	if got := e.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["connected"] != true || got["state"] != "CONNECTED" {
		t.Errorf("engine after the reconnections: %v", got)
	}
}

func workspaceOfKey(e *apptest.Env, key string) string {
	e.T.Helper()
	return e.Do("GET", "/v1/account", key, nil).Data()["id"].(string)
}

// A direct send makes its chat in the transaction that stores the message: the
// chat answers as soon as the send is (pinned messages, the chat itself), with
// the message as its last and nothing unread; the delivery and the contact's
// reply later count as they always did (one unread, for the reply).
func TestDirectSendMakesItsChat(t *testing.T) {
	// Acks slow enough that nothing of the network has come back when the
	// chat is first read.
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.SandboxAckDelay = time.Second }})
	if r := e.Do("GET", "/v1/chats?limit=1", e.Key, nil); r.Status != 200 { // the first read syncs the world
		t.Fatalf("chats = %d", r.Status)
	}
	for _, tc := range []struct {
		name, to, jid string
	}{
		{"a number that replies", "+15550162222", "15550162222@c.us"},
		{"a number the network refuses", "+15550160000", "15550160000@c.us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := e.Do("POST", "/v1/messages/"+tc.to, e.Key, map[string]any{"type": "text", "text": "first words"})
			if sent.Status != 201 {
				t.Fatalf("send = %d %s", sent.Status, sent.Raw)
			}
			pinned := e.Do("GET", "/v1/messages/pinned/"+tc.jid, e.Key, nil)
			if pinned.Status != 200 || len(pinned.List()) != 0 {
				t.Errorf("pinned right after the send = %d %s", pinned.Status, pinned.Raw)
			}
			c := e.Do("GET", "/v1/chats/"+tc.jid, e.Key, nil)
			if c.Status != 200 {
				t.Fatalf("chat right after the send = %d %s", c.Status, c.Raw)
			}
			got := c.Data()
			if got["lastMessageText"] != "first words" || got["lastMessageFromMe"] != true || got["unreadCount"] != 0.0 || got["chatType"] != "contact" {
				t.Errorf("chat right after the send: %v", got)
			}
		})
	}
	// The replying number: its reply is the one unread message.
	e.Eventually(10*time.Second, "the reply in the chat", func() bool {
		c := e.Do("GET", "/v1/chats/15550162222@c.us", e.Key, nil).Data()
		return c["lastMessageFromMe"] == false
	})
	c := e.Do("GET", "/v1/chats/15550162222@c.us", e.Key, nil).Data()
	if c["unreadCount"] != 1.0 {
		t.Errorf("chat after the reply: %v", c)
	}
	if n := total(t, e.Do("GET", "/v1/chats?searchToken=15550162222&includeWithoutName=true&includeArchive=true", e.Key, nil)); n != 1 {
		t.Errorf("%d chats for the number, want 1", n)
	}
}

// POST /v1/campaigns with the spec's whole body (name and audienceId, what the
// official SDK sends) creates a pending campaign. With nothing to send, its
// first step holds it: paused, with the reason, no message made; resume refuses
// it (422 naming text) until PATCH gives it content; then it starts and runs.
func TestCampaignWithoutContent(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, campaignEvents...)
	// One contact: the default pace (8-20 s between messages) never comes into it.
	aud := createAudience(e, e.Key, map[string]any{"name": "Bare", "contacts": phones(700, 1)})
	created := e.Do("POST", "/v1/campaigns", e.Key, map[string]any{"name": "Bare", "audienceId": aud["id"]})
	if created.Status != 200 || created.Data()["status"] != "pending" || created.Data()["totalCount"] != 1.0 {
		t.Fatalf("create = %d %s", created.Status, created.Raw)
	}
	id := created.Data()["cmpId"].(string)
	held := waitCampaign(e, id, "paused")
	if reason, _ := held["pauseReason"].(string); !strings.Contains(reason, "no text or mediaUrl") || held["startedAt"] != nil {
		t.Errorf("held campaign: %v", held)
	}
	if ms := campaignMessages(e, id); len(ms) != 0 {
		t.Errorf("a campaign without content made %d messages", len(ms))
	}
	e.Eventually(10*time.Second, "campaign.paused", func() bool { return len(rc.ofType("campaign.paused")) == 1 })
	if d := rc.ofType("campaign.paused")[0].payload["data"].(map[string]any); d["cmpId"] != id || d["pauseReason"] == nil {
		t.Errorf("campaign.paused data: %v", d)
	}

	resume := e.Do("POST", "/v1/campaigns/"+id+"/resume", e.Key, nil)
	if resume.Status != 422 || !cmp.Equal(resume.DetailPaths(), []string{"text"}) {
		t.Errorf("resume without content = %d %s", resume.Status, resume.Raw)
	}
	for _, tc := range []struct {
		name   string
		key    string
		path   string
		body   map[string]any
		status int
		paths  []string
	}{
		{"caption without media", e.Key, id, map[string]any{"mediaCaption": "c"}, 422, []string{"mediaCaption"}},
		{"text too long", e.Key, id, map[string]any{"text": strings.Repeat("x", 4097)}, 422, []string{"text"}},
		{"missing variable", e.Key, id, map[string]any{"text": "Hi {plan}"}, 400, []string{"contacts."}},
		{"unknown field", e.Key, id, map[string]any{"audienceId": "aud_x"}, 400, []string{"audienceId"}},
		{"unknown campaign", e.Key, "cmp_nope", map[string]any{"text": "x"}, 404, nil},
		{"read-only key", e.NewKey("default", "campaigns:read"), id, map[string]any{"text": "x"}, 403, nil},
	} {
		r := e.Do("PATCH", "/v1/campaigns/"+tc.path, tc.key, tc.body)
		var got []string
		for _, p := range r.DetailPaths() {
			if strings.HasPrefix(p, "contacts.") {
				p = "contacts."
			}
			got = append(got, p)
		}
		if r.Status != tc.status || (tc.paths != nil && !cmp.Equal(got, tc.paths)) {
			t.Errorf("PATCH %s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	edited := e.Do("PATCH", "/v1/campaigns/"+id, e.Key, map[string]any{"text": "Hi {firstName}", "name": "Dressed"})
	if edited.Status != 200 || edited.Data()["status"] != "paused" || edited.Data()["name"] != "Dressed" {
		t.Fatalf("PATCH text = %d %s", edited.Status, edited.Raw)
	}
	if r := e.Do("POST", "/v1/campaigns/"+id+"/resume", e.Key, nil); r.Status != 200 || r.Data()["status"] != "running" {
		t.Fatalf("resume with content = %d %s", r.Status, r.Raw)
	}
	done := waitCampaign(e, id, "complete_delivered")
	if done["startedAt"] == nil || done["sentCount"] != 1.0 {
		t.Errorf("campaign after its content: %v", done)
	}
	var texts []string
	for _, m := range campaignMessages(e, id) {
		texts = append(texts, m.Text)
	}
	sort.Strings(texts)
	if diff := cmp.Diff([]string{"Hi N700"}, texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	// Held then started: campaign.started once, no campaign.resumed.
	e.Eventually(10*time.Second, "campaign.completed", func() bool { return len(rc.ofType("campaign.completed")) == 1 })
	if s, r := len(rc.ofType("campaign.started")), len(rc.ofType("campaign.resumed")); s != 1 || r != 0 {
		t.Errorf("%d campaign.started, %d campaign.resumed; want 1, 0", s, r)
	}
	if r := e.Do("PATCH", "/v1/campaigns/"+id, e.Key, map[string]any{"text": "late"}); r.Status != 409 {
		t.Errorf("PATCH of a finished campaign = %d %s", r.Status, r.Raw)
	}
}

// POST /v1/messages/{chatId} takes withTyping (default true) and typingSeconds
// (0-25): a text message is preceded by "typing…" in its chat for 0.4-0.8 s plus
// typingSeconds, which the sandbox records; media and polls, and withTyping false,
// show none. A scheduled send takes the fields too (TestScheduledSendKeepsItsTyping).
func TestDirectSendShowsTyping(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	typed := func() []sandbox.Typing { return e.App.Sandbox.Typing(ws) }
	send := func(to string, body map[string]any) {
		t.Helper()
		if r := e.Do("POST", "/v1/messages/"+to, e.Key, body); r.Status != 201 {
			t.Fatalf("send %v = %d %s", body, r.Status, r.Raw)
		}
	}
	between := func(got, lo, hi time.Duration) bool { return got >= lo && got <= hi }

	send("+15550170001", map[string]any{"type": "text", "text": "hello"})
	send("+15550170002", map[string]any{"type": "text", "text": "a long answer", "typingSeconds": 2.5})
	send("+15550170003", map[string]any{"type": "text", "text": "at once", "withTyping": false, "typingSeconds": 3})
	send("+15550170004", map[string]any{"type": "media", "mediaBase64": base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n")), "mediaFilename": "a.png"})
	send("+15550170005", map[string]any{"type": "poll", "pollQuestion": "Lunch?", "pollOptions": []string{"yes", "no"}, "withTyping": true})
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "text")
	_ = mw.WriteField("text", "from a form")
	_ = mw.WriteField("typingSeconds", "1")
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+"/v1/messages/+15550170006", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.Key)
	if r := e.Send(req); r.Status != 201 {
		t.Fatalf("multipart send = %d %s", r.Status, r.Raw)
	}

	got := typed()
	var chats []string
	for _, ty := range got {
		chats = append(chats, ty.Chat)
	}
	if diff := cmp.Diff([]string{"15550170001@c.us", "15550170002@c.us", "15550170006@c.us"}, chats); diff != "" {
		t.Fatalf("typing shown in (-want +got):\n%s", diff)
	}
	ms := time.Millisecond
	if !between(got[0].For, 400*ms, 800*ms) || !between(got[1].For, 2900*ms, 3300*ms) || !between(got[2].For, 1400*ms, 1800*ms) {
		t.Errorf("typing durations %v, %v, %v; want 0.4-0.8 s, +2.5 s, +1 s", got[0].For, got[1].For, got[2].For)
	}
	for _, tc := range []struct {
		name   string
		path   string
		body   map[string]any
		status int
		detail string
	}{
		{"too long", "/v1/messages/+15550170007", map[string]any{"type": "text", "text": "x", "typingSeconds": 25.5}, 422, "typingSeconds"},
		{"negative", "/v1/messages/+15550170007", map[string]any{"type": "text", "text": "x", "typingSeconds": -1}, 422, "typingSeconds"},
		{"not a number", "/v1/messages/+15550170007", map[string]any{"type": "text", "text": "x", "typingSeconds": "2"}, 400, "typingSeconds"},
		{"not a boolean", "/v1/messages/+15550170007", map[string]any{"type": "text", "text": "x", "withTyping": "yes"}, 400, "withTyping"},
		{"scheduled, not a boolean", "/v1/scheduled-messages/+15550170007", map[string]any{"type": "text", "text": "x", "withTyping": 1}, 400, "withTyping"},
		{"a message field of the wrong type", "/v1/messages/+15550170007", map[string]any{"type": "text", "text": 5}, 400, "text"},
	} {
		r := e.Do("POST", tc.path, e.Key, tc.body)
		if r.Status != tc.status || !cmp.Equal(r.DetailPaths(), []string{tc.detail}) {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Raw)
		}
	}
	if n := len(typed()); n != 3 {
		t.Errorf("refused sends showed typing: %d records", n)
	}
}

// GET /v1/webhooks takes order (desc, newest first, by default; asc), and POST
// /v1/music/songs takes captchaToken, accepted and ignored (the reference's).
func TestWebhookOrderAndCaptchaToken(t *testing.T) {
	e := newMusicEnv(t, nil)
	var made []string
	for i := range 3 {
		h := createWebhook(e, fmt.Sprintf("https://hooks.example.com/order/%d", i), "message.read")
		made = append(made, h["id"].(string))
	}
	ids := func(query string) []string {
		t.Helper()
		r := e.Do("GET", "/v1/webhooks"+query, e.Key, nil)
		if r.Status != 200 {
			t.Fatalf("GET /v1/webhooks%s = %d %s", query, r.Status, r.Raw)
		}
		var out []string
		for _, h := range r.List() {
			out = append(out, h["id"].(string))
		}
		return out
	}
	newest := []string{made[2], made[1], made[0]}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", newest}, {"?order=desc", newest}, {"?order=asc", made}, {"?order=asc&limit=1&skip=1", made[1:2]},
	} {
		if diff := cmp.Diff(tc.want, ids(tc.query)); diff != "" {
			t.Errorf("webhooks%s (-want +got):\n%s", tc.query, diff)
		}
	}
	if r := e.Do("GET", "/v1/webhooks?order=up", e.Key, nil); r.Status != 400 || !cmp.Equal(r.DetailPaths(), []string{"order"}) {
		t.Errorf("order=up = %d %s", r.Status, r.Raw)
	}

	song := e.Do("POST", "/v1/music/songs", e.Key, map[string]any{"lyrics": "[Verse]\nla la", "style": "pop", "captchaToken": "0.turnstile-token"})
	if song.Status != 200 || len(song.Data()["clips"].([]any)) != 2 {
		t.Errorf("song with captchaToken = %d %s", song.Status, song.Raw)
	}
	if r := e.Do("POST", "/v1/music/songs", e.Key, map[string]any{"lyrics": "x", "style": "pop", "captchaToken": 5}); r.Status != 400 || !cmp.Equal(r.DetailPaths(), []string{"captchaToken"}) {
		t.Errorf("captchaToken 5 = %d %s", r.Status, r.Raw)
	}
}
