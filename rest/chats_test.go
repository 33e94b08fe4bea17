package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/viewer"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
)

func total(t *testing.T, resp *apptest.Response) int {
	t.Helper()
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Raw)
	}
	return int(resp.Body["total"].(float64))
}

func TestLatestChatsFromTheSandboxWorld(t *testing.T) {
	e := newEnv(t)
	// A chat of our own messages carries the fields the world's history lacks:
	// an attachment, a link preview, a reply, network confirmation.
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><meta property="og:title" content="Spring Sale"></head></html>`)
	}))
	defer page.Close()
	media := schedule(e, "+15550001234", map[string]any{"type": "media", "mediaUrl": "https://cdn.example.com/menu.pdf", "mediaFilename": "menu.pdf"})
	key := waitStatus(e, media["id"].(string), "read")["waMessageKey"].(map[string]any)["_serialized"].(string)
	for _, body := range []map[string]any{
		{"type": "text", "text": "see " + page.URL + "/sale"},
		{"type": "text", "text": "this one", "replyTo": key},
	} {
		waitStatus(e, schedule(e, "+15550001234", body)["id"].(string), "read")
	}
	resp := e.Do("GET", "/v1/latest-chats?numberOfChats=200&numberOfMessages=5", e.Key, nil)
	if resp.Status != 200 {
		t.Fatalf("latest-chats: %d %s", resp.Status, resp.Raw)
	}
	d := resp.Data()
	chats := d["chats"].([]any)
	if len(chats) == 0 || int(d["totalChats"].(float64)) >= sandbox.WorldChats || d["numberOfMessages"].(float64) != 5 {
		t.Fatalf("chats=%d totalChats=%v (world %d)", len(chats), d["totalChats"], sandbox.WorldChats)
	}
	pinnedDone := false
	var prev time.Time
	for i, raw := range chats {
		c := raw.(map[string]any)
		if c["archived"] != false {
			t.Errorf("chat %d archived", i)
		}
		if c["pinned"] == true {
			if pinnedDone {
				t.Errorf("pinned chat %d after an unpinned one", i)
			}
			continue
		}
		at, _ := time.Parse(time.RFC3339, fmt.Sprint(c["lastMessageAt"]))
		if pinnedDone && at.After(prev) {
			t.Errorf("chat %d newer than the one before it", i)
		}
		pinnedDone, prev = true, at
		msgs := c["messages"].([]any)
		if len(msgs) == 0 || len(msgs) > 5 {
			t.Errorf("chat %d has %d messages", i, len(msgs))
		}
		var last time.Time
		for j, m := range msgs {
			ts, _ := time.Parse(time.RFC3339, m.(map[string]any)["timestamp"].(string))
			if j > 0 && ts.After(last) {
				t.Errorf("chat %d messages not newest first", i)
			}
			last = ts
		}
	}
	// Each chat's messages are its newest ones, rendered field for field as the
	// chat's own message list (which reads whole rows) has them.
	for i := range chats {
		c := chats[i].(map[string]any)
		own := e.Do("GET", "/v1/messages?limit=5&chatId="+c["chatId"].(string), e.Key, nil)
		if diff := cmp.Diff(toAny(own.List()), c["messages"].([]any)); diff != "" {
			t.Errorf("chat %d (%s) latest messages differ from its message list (-list +latest):\n%s", i, c["chatId"], diff)
		}
	}
	if r := e.Do("GET", "/v1/latest-chats?numberOfChats=3&numberOfMessages=0", e.Key, nil); r.Status != 200 ||
		len(r.Data()["chats"].([]any)) != 3 || len(r.Data()["chats"].([]any)[0].(map[string]any)["messages"].([]any)) != 0 {
		t.Errorf("numberOfMessages=0: %d %s", r.Status, r.Raw)
	}
	// Bounds.
	for _, q := range []string{"numberOfChats=0", "numberOfChats=201", "numberOfMessages=101", "numberOfMessages=-1", "numberOfChats=x"} {
		if r := e.Do("GET", "/v1/latest-chats?"+q, e.Key, nil); r.Status != 400 {
			t.Errorf("%s: %d", q, r.Status)
		}
	}
}

func TestChatsListFiltersWithExactTotal(t *testing.T) {
	e := newEnv(t)
	all := total(t, e.Do("GET", "/v1/chats?includeWithoutName=true&includeArchive=true&limit=1", e.Key, nil))
	if all != sandbox.WorldChats {
		t.Fatalf("all chats total = %d, want %d", all, sandbox.WorldChats)
	}
	groups := total(t, e.Do("GET", "/v1/chats?filter=groups&includeArchive=true", e.Key, nil))
	if groups != sandbox.WorldGroups {
		t.Errorf("groups = %d, want %d", groups, sandbox.WorldGroups)
	}
	news := total(t, e.Do("GET", "/v1/chats?kinds=newsletter&includeArchive=true", e.Key, nil))
	if news != sandbox.WorldNewsletters {
		t.Errorf("newsletters = %d", news)
	}
	nonArchived := total(t, e.Do("GET", "/v1/chats?includeWithoutName=true", e.Key, nil))
	if nonArchived >= all || nonArchived == 0 {
		t.Errorf("non archived = %d of %d", nonArchived, all)
	}
	// Pages add up to the total, with no repeats.
	seen := map[string]bool{}
	for skip := 0; skip < all; skip += 100 {
		r := e.Do("GET", fmt.Sprintf("/v1/chats?includeWithoutName=true&includeArchive=true&limit=100&skip=%d", skip), e.Key, nil)
		for _, c := range r.List() {
			seen[c["chatId"].(string)] = true
		}
	}
	if len(seen) != all {
		t.Errorf("paged %d distinct chats, want %d", len(seen), all)
	}
	for _, tc := range []struct{ q, path string }{
		{"kinds=robot", "kinds.0"}, {"filter=people", "filter"}, {"since=yesterday", "since"}, {"limit=0", "limit"},
	} {
		r := e.Do("GET", "/v1/chats?"+tc.q, e.Key, nil)
		if r.Status != 400 || !cmp.Equal(r.DetailPaths(), []string{tc.path}) {
			t.Errorf("%s: %d %v", tc.q, r.Status, r.DetailPaths())
		}
	}
	one := e.Do("GET", "/v1/chats?filter=groups&limit=1", e.Key, nil).List()[0]
	got := e.Do("GET", "/v1/chats/"+one["chatId"].(string), e.Key, nil)
	if got.Status != 200 || got.Data()["chatType"] != "group" {
		t.Errorf("get chat: %d %s", got.Status, got.Raw)
	}
	if r := e.Do("GET", "/v1/chats/123@c.us", e.Key, nil); r.Status != 404 {
		t.Errorf("unknown chat: %d", r.Status)
	}
	if r := e.Do("GET", "/v1/chats/not-a-jid", e.Key, nil); r.Status != 400 {
		t.Errorf("bad chat id: %d", r.Status)
	}
	parts := e.Do("GET", "/v1/chats/"+one["chatId"].(string)+"/participants", e.Key, nil)
	if total(t, parts) < 3 {
		t.Errorf("participants: %s", parts.Raw)
	}
}

func TestMessagesFiltersAndAcks(t *testing.T) {
	e := newEnv(t)
	all := total(t, e.Do("GET", "/v1/messages?limit=1", e.Key, nil))
	images := total(t, e.Do("GET", "/v1/messages?messageTypes=image", e.Key, nil))
	text := total(t, e.Do("GET", "/v1/messages?messageTypes=chat", e.Key, nil))
	both := total(t, e.Do("GET", "/v1/messages?messageTypes=image,chat", e.Key, nil))
	if images == 0 || text == 0 || both != images+text || both >= all {
		t.Errorf("all=%d images=%d text=%d both=%d", all, images, text, both)
	}
	media := total(t, e.Do("GET", "/v1/messages?hasMedia=true", e.Key, nil))
	noMedia := total(t, e.Do("GET", "/v1/messages?hasMedia=false", e.Key, nil))
	if media+noMedia != all {
		t.Errorf("media %d + no media %d != %d", media, noMedia, all)
	}
	pngs := total(t, e.Do("GET", "/v1/messages?mime=image/png", e.Key, nil))
	if pngs != images {
		t.Errorf("png %d != images %d", pngs, images)
	}
	asc := e.Do("GET", "/v1/messages?order=asc&limit=50", e.Key, nil).List()
	for i := 1; i < len(asc); i++ {
		if asc[i]["timestamp"].(string) < asc[i-1]["timestamp"].(string) {
			t.Fatalf("asc order broken at %d", i)
		}
	}
	since := time.Now().Add(-3 * 24 * time.Hour).UTC().Format(time.RFC3339)
	recent := total(t, e.Do("GET", "/v1/messages?since="+since, e.Key, nil))
	older := total(t, e.Do("GET", "/v1/messages?until="+since, e.Key, nil))
	if recent == 0 || older == 0 || recent+older < all {
		t.Errorf("since %d + until %d vs %d", recent, older, all)
	}
	for _, tc := range []struct{ q, path string }{
		{"messageTypes=telegram", "messageTypes.0"}, {"order=up", "order"},
		{"since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", "since"}, {"chatId=abc", "chatId"},
	} {
		r := e.Do("GET", "/v1/messages?"+tc.q, e.Key, nil)
		if r.Status != 400 || !cmp.Equal(r.DetailPaths(), []string{tc.path}) {
			t.Errorf("%s: %d %v", tc.q, r.Status, r.DetailPaths())
		}
	}
	// Replies carry their quoted message.
	quoted := false
	for _, m := range e.Do("GET", "/v1/messages?messageTypes=chat&limit=200", e.Key, nil).List() {
		if q, ok := m["quotedMessage"].(map[string]any); ok && q["waMessageKey"] != nil {
			quoted = true
		}
	}
	if !quoted {
		t.Errorf("no reply carries quotedMessage")
	}
	// Acks.
	mine := e.Do("GET", "/v1/messages?sender=me&limit=2", e.Key, nil).List()
	key := mine[0]["waMessageKey"].(map[string]any)["_serialized"].(string)
	if r := e.Do("GET", "/v1/messages/ack/"+key, e.Key, nil); r.Status != 200 || r.Data()["ack"] == nil {
		t.Errorf("ack: %d %s", r.Status, r.Raw)
	}
	r := e.Do("POST", "/v1/messages/acks", e.Key, map[string]any{"messageKeys": []string{key, "false_1@c.us_NOPE"}})
	if r.Status != 200 || len(r.List()) != 2 || r.List()[0]["found"] != true || r.List()[1]["found"] != false {
		t.Errorf("acks: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/messages/acks", e.Key, map[string]any{"messageKeys": []string{}}); r.Status != 422 {
		t.Errorf("empty acks: %d", r.Status)
	}
	if r := e.Do("POST", "/v1/messages/acks", e.Key, map[string]any{"messageKeys": []string{key}, "x": 1}); r.Status != 400 {
		t.Errorf("unknown key: %d", r.Status)
	}
	if r := e.Do("GET", "/v1/messages/ack/false_1@c.us_NOPE", e.Key, nil); r.Status != 404 {
		t.Errorf("unknown ack: %d", r.Status)
	}
}

func TestMediaBytesAndActions(t *testing.T) {
	e := newEnv(t)
	img := e.Do("GET", "/v1/messages?messageTypes=image&limit=1", e.Key, nil).List()[0]
	key := img["waMessageKey"].(map[string]any)["_serialized"].(string)
	// The media answer says where the bytes are served (docs/conversations.md).
	bytesOf := func(key string) *apptest.Response {
		t.Helper()
		m := e.Do("GET", "/v1/messages/media/"+key, e.Key, nil)
		u, _ := m.Data()["url"].(string)
		if m.Status != 200 || u == "" {
			t.Fatalf("media of %s = %d %s", key, m.Status, m.Raw)
		}
		req, _ := http.NewRequest("GET", u, nil)
		return e.Send(req)
	}
	resp := bytesOf(key)
	if resp.Status != 200 || resp.Header.Get("Content-Type") != "image/png" || http.DetectContentType(resp.Raw) != "image/png" ||
		resp.Header.Get("Content-Disposition")[:6] != "inline" {
		t.Errorf("image: %d %v", resp.Status, resp.Header)
	}
	doc := e.Do("GET", "/v1/messages?messageTypes=document&limit=1", e.Key, nil).List()[0]
	dkey := doc["waMessageKey"].(map[string]any)["_serialized"].(string)
	resp = bytesOf(dkey)
	if resp.Status != 200 || resp.Header.Get("Content-Type") != "application/pdf" || string(resp.Raw[:5]) != "%PDF-" ||
		resp.Header.Get("Content-Disposition")[:10] != "attachment" {
		t.Errorf("document: %d %v", resp.Status, resp.Header)
	}
	// React, pin, unpin.
	if r := e.Do("POST", "/v1/messages/reactions/"+key, e.Key, map[string]any{"emoji": "🔥"}); r.Status != 200 {
		t.Fatalf("react: %d %s", r.Status, r.Raw)
	}
	chatID := img["chatId"].(string)
	pinned := func() bool {
		for _, p := range e.Do("GET", "/v1/messages/pinned/"+chatID, e.Key, nil).List() {
			if p["key"] == key {
				return true
			}
		}
		return false
	}
	if r := e.Do("POST", "/v1/messages/pin/"+key, e.Key, map[string]any{"duration": 3600}); r.Status != 200 {
		t.Fatalf("pin: %d %s", r.Status, r.Raw)
	}
	if !pinned() {
		t.Errorf("not pinned after pin")
	}
	if r := e.Do("POST", "/v1/messages/unpin/"+key, e.Key, nil); r.Status != 200 {
		t.Fatalf("unpin: %d %s", r.Status, r.Raw)
	}
	if pinned() {
		t.Errorf("pinned after unpin")
	}
	if r := e.Do("POST", "/v1/messages/pin/"+key, e.Key, map[string]any{"duration": 0}); r.Status != 422 {
		t.Errorf("pin 0: %d", r.Status)
	}
	// Mark read, archive, unarchive.
	chats := e.Do("GET", "/v1/chats?includeWithoutName=true&limit=200", e.Key, nil).List()
	var unread string
	for _, c := range chats {
		if c["unreadCount"].(float64) > 0 {
			unread = c["chatId"].(string)
			break
		}
	}
	if r := e.Do("POST", "/v1/chats/"+unread+"/mark_read", e.Key, nil); r.Status != 200 {
		t.Fatalf("mark read: %d %s", r.Status, r.Raw)
	}
	if c := e.Do("GET", "/v1/chats/"+unread, e.Key, nil).Data(); c["unreadCount"].(float64) != 0 {
		t.Errorf("unread after mark_read = %v", c["unreadCount"])
	}
	n := total(t, e.Do("GET", "/v1/chats?includeWithoutName=true", e.Key, nil))
	if r := e.Do("POST", "/v1/chats/"+unread+"/archive", e.Key, nil); r.Status != 200 {
		t.Fatalf("archive: %d", r.Status)
	}
	if got := total(t, e.Do("GET", "/v1/chats?includeWithoutName=true", e.Key, nil)); got != n-1 {
		t.Errorf("after archive %d, want %d", got, n-1)
	}
	e.Do("POST", "/v1/chats/"+unread+"/unarchive", e.Key, nil)
	if got := total(t, e.Do("GET", "/v1/chats?includeWithoutName=true", e.Key, nil)); got != n {
		t.Errorf("after unarchive %d, want %d", got, n)
	}
}

func TestLoadOlderToTheEnd(t *testing.T) {
	e := newEnv(t)
	pace := time.Duration(0)
	e.App.Resolver.LoadOlderPace = &pace
	chats := e.Do("GET", "/v1/chats?includeWithoutName=true&includeArchive=true&limit=200&filter=contacts", e.Key, nil).List()
	chatID := chats[0]["chatId"].(string)
	var res map[string]any
	for i := 0; i < 20; i++ {
		r := e.Do("POST", "/v1/messages/load_older/"+chatID, e.Key, map[string]any{"pages": 2})
		if r.Status != 200 {
			t.Fatalf("load older: %d %s", r.Status, r.Raw)
		}
		res = r.Data()
		if res["canLoadMore"] == false {
			break
		}
	}
	if res["canLoadMore"] != false || res["coverage"].(map[string]any)["oldestLoadedIso"] == nil {
		t.Fatalf("never reached the end: %v", res)
	}
	n := total(t, e.Do("GET", "/v1/messages?chatId="+chatID, e.Key, nil))
	if n != int(res["totalMessages"].(float64)) {
		t.Errorf("stored %d, result says %v", n, res["totalMessages"])
	}
	again := e.Do("POST", "/v1/messages/load_older/"+chatID, e.Key, nil).Data()
	if again["added"].(float64) != 0 || again["pagesExecuted"].(float64) != 0 {
		t.Errorf("after the end: %v", again)
	}
	for _, body := range []map[string]any{{"pages": 0}, {"pages": 11}, {"until_date": "soon"}} {
		if r := e.Do("POST", "/v1/messages/load_older/"+chatID, e.Key, body); r.Status != 422 {
			t.Errorf("%v: %d", body, r.Status)
		}
	}
}

func TestContactsGroupsNewsletters(t *testing.T) {
	e := newEnv(t)
	contacts := total(t, e.Do("GET", "/v1/contacts?limit=1", e.Key, nil))
	if contacts != sandbox.WorldContacts+sandbox.WorldStrangers {
		t.Errorf("contacts = %d", contacts)
	}
	groups := e.Do("GET", "/v1/chats?filter=groups&limit=1&includeArchive=true", e.Key, nil).List()
	member := e.Do("GET", "/v1/chats/"+groups[0]["chatId"].(string)+"/participants", e.Key, nil).List()[0]["chatId"].(string)
	common := e.Do("GET", "/v1/contacts/"+member+"/common_groups", e.Key, nil)
	if total(t, common) < 1 {
		t.Errorf("common groups: %s", common.Raw)
	}
	if r := e.Do("GET", "/v1/contacts/1@g.us/common_groups", e.Key, nil); r.Status != 400 {
		t.Errorf("group as contact: %d", r.Status)
	}
	news := total(t, e.Do("GET", "/v1/newsletters", e.Key, nil))
	created := e.Do("POST", "/v1/newsletters", e.Key, map[string]any{"name": "Switchboard news"})
	if created.Status != 201 || created.Data()["name"] != "Switchboard news" {
		t.Fatalf("create newsletter: %d %s", created.Status, created.Raw)
	}
	if got := total(t, e.Do("GET", "/v1/newsletters", e.Key, nil)); got != news+1 {
		t.Errorf("newsletters %d, want %d", got, news+1)
	}
	id := created.Data()["newsletterId"].(string)
	if r := e.Do("GET", "/v1/newsletters/"+id, e.Key, nil); r.Status != 200 {
		t.Errorf("get newsletter: %d", r.Status)
	}
	if r := e.Do("GET", "/v1/newsletters/1@c.us", e.Key, nil); r.Status != 400 {
		t.Errorf("contact as newsletter: %d", r.Status)
	}
	if r := e.Do("POST", "/v1/newsletters", e.Key, map[string]any{"name": ""}); r.Status != 422 {
		t.Errorf("empty name: %d", r.Status)
	}
}

func TestConversationScopesIsolationAndNoEngine(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.SandboxWorkspaces = []string{"default"}
	}})
	mine := total(t, e.Do("GET", "/v1/chats?includeWithoutName=true&includeArchive=true", e.Key, nil))
	other := e.NewKey("other", "*")
	if n := total(t, e.Do("GET", "/v1/chats", other, nil)); n != 0 || mine == 0 {
		t.Errorf("other workspace sees %d chats (mine %d)", n, mine)
	}
	if r := e.Do("POST", "/v1/chats/1555@c.us/mark_read", other, nil); r.Status != 404 {
		t.Errorf("mark read elsewhere: %d", r.Status)
	}
	if r := e.Do("POST", "/v1/newsletters", other, map[string]any{"name": "x"}); r.Status != 503 || r.Error()["code"] != "engine_unavailable" {
		t.Errorf("no engine: %d %s", r.Status, r.Raw)
	}
	reader := e.NewKey("default", "messages:read")
	for _, p := range []string{"/v1/chats", "/v1/latest-chats", "/v1/messages", "/v1/contacts", "/v1/newsletters"} {
		if r := e.Do("GET", p, reader, nil); r.Status != 403 {
			t.Errorf("%s without scope: %d", p, r.Status)
		}
	}
	chatsRead := e.NewKey("default", "chats:read")
	if r := e.Do("POST", "/v1/chats/1555@c.us/archive", chatsRead, nil); r.Status != 403 {
		t.Errorf("archive with chats:read: %d", r.Status)
	}
}

// An engine event that keeps failing waits on its backoff; it does not hold every
// phone action of the workspace until it times out.
func TestPhoneActionsDoNotWaitForAFailingEvent(t *testing.T) {
	e := newEnv(t)
	chats := e.Do("GET", "/v1/chats?includeWithoutName=true&limit=5", e.Key, nil).List()
	if len(chats) == 0 {
		t.Fatal("the sandbox world has no chats")
	}
	ws := e.Do("GET", "/v1/account", e.Key, nil).Data()["id"].(string)
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	err := e.App.Client.InboxEvent.Create().SetDedupeKey("failing").SetType("ack").SetSubject("message:x").
		SetPayload(json.RawMessage(`{"at":"not a time"}`)).SetAt(time.Now()).SetAttempts(3).
		SetNextAttemptAt(time.Now().Add(time.Hour)).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if r := e.Do("POST", "/v1/chats/"+chats[0]["chatId"].(string)+"/mark_read", e.Key, nil); r.Status != 200 {
		t.Fatalf("mark read beside a failing event = %d %s (after %s)", r.Status, r.Raw, time.Since(start))
	}
}

func toAny(items []map[string]any) []any {
	out := make([]any, len(items))
	for i, m := range items {
		out[i] = m
	}
	return out
}

// Someone the account only sent to is a contact (the reference's contact book is
// everyone the account messaged), once the network took the message; a failed
// send makes none, and groups are not contacts.
func TestNumbersMessagedBecomeContacts(t *testing.T) {
	e := newEnv(t)
	before := total(t, e.Do("GET", "/v1/contacts?limit=1", e.Key, nil))
	sent := schedule(e, "+15550442233", map[string]any{"type": "text", "text": "hello, new number"})
	failed := schedule(e, "+15550440000", map[string]any{"type": "text", "text": "to a number that fails"})
	waitStatus(e, sent["id"].(string), "read")
	waitStatus(e, failed["id"].(string), "failed")
	got := e.Do("GET", "/v1/contacts?searchToken=1555044", e.Key, nil)
	// The number that sent it, and so made the contact: the sandbox.
	sandbox := e.Do("GET", "/v1/scheduled-messages/"+sent["id"].(string), e.Key, nil).Data()["engineId"]
	if s, _ := sandbox.(string); !strings.HasPrefix(s, "eng_sandbox_") {
		t.Errorf("the message's engine = %v, want the sandbox", sandbox)
	}
	if diff := cmp.Diff([]map[string]any{{"chatId": "15550442233@c.us", "isBusiness": false, "engineId": sandbox}}, got.List()); diff != "" {
		t.Errorf("contacts matching 1555044 (-want +got):\n%s", diff)
	}
	if n := total(t, e.Do("GET", "/v1/contacts?limit=1", e.Key, nil)); n != before+1 {
		t.Errorf("contacts = %d, want %d", n, before+1)
	}
}

// A reaction's emoji is required (the reference's body requires it; "" removes
// the reaction): no body is a 400 naming the body, {} a 422 naming emoji.
func TestReactionBodyIsRequired(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		paths  []string
	}{
		{"no body", nil, 400, []string{"body"}},
		{"empty object", map[string]any{}, 422, []string{"emoji"}},
		{"emoji not a string", map[string]any{"emoji": 1}, 400, []string{"emoji"}},
		{"unknown field", map[string]any{"emoji": "👍", "x": 1}, 400, []string{"x"}},
		{"too long", map[string]any{"emoji": strings.Repeat("👍", 33)}, 422, []string{"emoji"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", "/v1/messages/reactions/false_1555@c.us_NOPE", e.Key, tc.body)
			if diff := cmp.Diff(tc.status, r.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s\n%s", diff, r.Raw)
			}
			if diff := cmp.Diff(tc.paths, r.DetailPaths()); diff != "" {
				t.Errorf("detail paths (-want +got):\n%s", diff)
			}
		})
	}
}

// A chat's summary follows its newest message whatever order the messages are
// applied in, and every incoming message counts as unread; a delivered message
// of the account's own makes its chat.
func TestChatSummaryFollowsTheNewestMessage(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	const jid = "15550104242@c.us"
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type summary struct {
		Unread int
		Text   string
		At     time.Time
	}
	steps := []struct {
		name string
		text string
		at   time.Time
		want summary
	}{
		{"first message", "second", base.Add(2 * time.Minute), summary{1, "second", base.Add(2 * time.Minute)}},
		{"an older one applied later", "first", base.Add(time.Minute), summary{2, "second", base.Add(2 * time.Minute)}},
		{"a newer one", "third", base.Add(3 * time.Minute), summary{3, "third", base.Add(3 * time.Minute)}},
	}
	for i, st := range steps {
		in := &engine.Incoming{Key: engine.Key{Remote: jid, ID: fmt.Sprintf("3EBSUM%d", i)}, From: jid, Type: "text", Text: st.text}
		id := fmt.Sprintf("summary-%d", i)
		if err := e.App.Inbox.HandleEvent(context.Background(),
			engine.Event{ID: id, Type: engine.EventMessage, WorkspaceID: ws, Message: in, At: st.at}); err != nil {
			t.Fatal(err)
		}
		e.Eventually(5*time.Second, st.name+" applied", func() bool {
			n, _ := e.App.Client.InboxEvent.Query().Where(inboxevent.AppliedAtNotNil(), inboxevent.DedupeKey(id)).Count(systemCtx())
			return n == 1
		})
		c := e.Do("GET", "/v1/chats/"+jid, e.Key, nil).Data()
		at, _ := time.Parse(time.RFC3339, fmt.Sprint(c["lastMessageAt"]))
		got := summary{int(c["unreadCount"].(float64)), fmt.Sprint(c["lastMessageText"]), at}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", st.name, diff)
		}
	}
	// The account's own message: the chat appears with it once it is delivered.
	to := "+15550104343"
	sent := e.Do("POST", "/v1/scheduled-messages/"+to, e.Key, map[string]any{"type": "text", "text": "mine"})
	if sent.Status != http.StatusCreated && sent.Status != http.StatusOK {
		t.Fatalf("send: %d %s", sent.Status, sent.Raw)
	}
	var c map[string]any
	e.Eventually(10*time.Second, "the recipient's chat made by the delivery", func() bool {
		r := e.Do("GET", "/v1/chats/15550104343@c.us", e.Key, nil)
		if r.Status != http.StatusOK {
			return false
		}
		c = r.Data()
		return c["lastMessageText"] == "mine"
	})
	if c["lastMessageFromMe"] != true || c["unreadCount"].(float64) != 0 {
		t.Errorf("own message's chat: %v", c)
	}
	// An older message of the account's, delivered now, changes nothing there
	// (the upsert writes no row) and its ack applies.
	key := engine.Key{FromMe: true, Remote: "15550104343@c.us", ID: "3EBOLDER"}
	old, err := e.App.Client.Message.Create().SetOrigin(message.OriginScheduled).SetTo(key.Remote).SetType("text").
		SetText("older").SetStatus(string(messaging.StatusConfirmed)).SetWaID(key.ID).SetWaSerialized(key.Serialized()).
		SetCreatedAt(base).Save(viewer.WorkspaceContext(context.Background(), ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.App.Inbox.HandleEvent(context.Background(), engine.Event{ID: "summary-older-ack", Type: engine.EventAck,
		WorkspaceID: ws, Key: key, Ack: engine.AckDevice, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	e.Eventually(5*time.Second, "the older message's ack applied", func() bool {
		n, _ := e.App.Client.InboxEvent.Query().Where(inboxevent.AppliedAtNotNil(), inboxevent.DedupeKey("summary-older-ack")).Count(systemCtx())
		return n == 1
	})
	if m, err := e.App.Client.Message.Get(systemCtx(), old.ID); err != nil || messaging.StatusOf(m) != messaging.StatusReceived {
		t.Errorf("older message after its ack: %v, %v", m, err)
	}
	c = e.Do("GET", "/v1/chats/15550104343@c.us", e.Key, nil).Data()
	if c["lastMessageText"] != "mine" || c["unreadCount"].(float64) != 0 {
		t.Errorf("chat after an older message's delivery: %v", c)
	}
}
