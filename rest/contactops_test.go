package rest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/numbercheck"
	"github.com/switchboardhq/switchboard/viewer"
)

// statusLine is the part of a number's answer a test compares.
func statusLines(items []any) []string {
	var out []string
	for _, it := range items {
		m := it.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v %v %v %v %v", m["phone"], m["onWhatsApp"], m["chatId"], m["lid"], m["isBusiness"], m["businessName"]))
	}
	return out
}

// TestCheckNumbersSandbox: the sandbox's numbers (…0000 not on the network,
// …5555 a business), in the order asked, with the LID; a second ask within the
// hour answers from the cache (the same checkedAt).
func TestCheckNumbersSandbox(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"phones": []string{"+15551230001", "15551235555@c.us", "+15551230000"}}
	r := e.Do("POST", "/v1/contacts/check", e.Key, body)
	if r.Status != 200 {
		t.Fatalf("check: %d %s", r.Status, r.Raw)
	}
	want := []string{
		"+15551230001 true 15551230001@c.us 910003215551@lid false <nil>",
		"15551235555@c.us true 15551235555@c.us 955553215551@lid true Sandbox Business 5555",
		"+15551230000 false <nil> <nil> false <nil>",
	}
	items := r.Data()["items"].([]any)
	if diff := cmp.Diff(want, statusLines(items)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if r.Data()["engineId"] == "" {
		t.Errorf("no engineId: %s", r.Raw)
	}
	again := e.Do("POST", "/v1/contacts/check", e.Key, map[string]any{"phones": []string{"+15551230000"}})
	if got := again.Data()["items"].([]any)[0].(map[string]any)["checkedAt"]; got != items[2].(map[string]any)["checkedAt"] {
		t.Errorf("second check at %v, first %v: not from the cache", got, items[2].(map[string]any)["checkedAt"])
	}
	if n := e.App.Client.NumberCheck.Query().CountX(systemCtx()); n != 3 {
		t.Errorf("%d cached checks, want 3", n)
	}
}

// TestCheckNumbersBadInput: a list with a bad entry names it by index; more than
// 100 numbers, none, or no phones at all are refused; an engineId that is
// malformed is 400, one the workspace does not have 404; the scope is contacts:read.
func TestCheckNumbersBadInput(t *testing.T) {
	e := newEnv(t)
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("+1555000%04d", i)
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		paths  []string
	}{
		{"bad entry", map[string]any{"phones": []string{"+15551230001", "hello", "+15551230001", "91003215551@lid"}}, 422, []string{"phones.1", "phones.2", "phones.3"}},
		{"too many", map[string]any{"phones": many}, 422, []string{"phones"}},
		{"none", map[string]any{"phones": []string{}}, 422, []string{"phones"}},
		{"missing", map[string]any{}, 422, []string{"phones"}},
		{"malformed engine", map[string]any{"phones": []string{"+15551230001"}, "engineId": "x"}, 400, []string{"engineId"}},
		{"unknown engine", map[string]any{"phones": []string{"+15551230001"}, "engineId": "eng_nope"}, 404, []string{"engineId"}},
	}
	for _, c := range cases {
		r := e.Do("POST", "/v1/contacts/check", e.Key, c.body)
		if r.Status != c.status || !cmp.Equal(c.paths, r.DetailPaths()) {
			t.Errorf("%s: %d %v, want %d %v: %s", c.name, r.Status, r.DetailPaths(), c.status, c.paths, r.Raw)
		}
	}
	if r := e.Do("POST", "/v1/contacts/check", e.NewKey("default", "chats:read"), map[string]any{"phones": []string{"+15551230001"}}); r.Status != 403 {
		t.Errorf("without contacts:read: %d", r.Status)
	}
}

// TestBlockListSandbox: block by number and by LID, list, unblock (twice is
// fine); a group id is 400; blocking needs contacts:write.
func TestBlockListSandbox(t *testing.T) {
	e := newEnv(t)
	list := func(r *apptest.Response) []any {
		t.Helper()
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		return r.Data()["items"].([]any)
	}
	list(e.Do("POST", "/v1/contacts/+15551230001/block", e.Key, nil))
	got := list(e.Do("POST", "/v1/contacts/91003215552@lid/block", e.Key, nil))
	if diff := cmp.Diff([]any{"15551230001@c.us", "2555123001@c.us"}, got); diff != "" {
		t.Errorf("after blocking (-want +got):\n%s", diff)
	}
	if got := list(e.Do("GET", "/v1/contacts/blocked", e.Key, nil)); len(got) != 2 {
		t.Errorf("blocked: %v", got)
	}
	list(e.Do("DELETE", "/v1/contacts/15551230001@c.us/block", e.Key, nil))
	got = list(e.Do("DELETE", "/v1/contacts/15551230001@c.us/block", e.Key, nil))
	if diff := cmp.Diff([]any{"2555123001@c.us"}, got); diff != "" {
		t.Errorf("after unblocking (-want +got):\n%s", diff)
	}
	if r := e.Do("POST", "/v1/contacts/120363000000000001@g.us/block", e.Key, nil); r.Status != 400 || !cmp.Equal(r.DetailPaths(), []string{"id"}) {
		t.Errorf("group id: %d %s", r.Status, r.Raw)
	}
	read := e.NewKey("default", "contacts:read")
	if r := e.Do("POST", "/v1/contacts/+15551230001/block", read, nil); r.Status != 403 {
		t.Errorf("block with contacts:read only: %d", r.Status)
	}
	if r := e.Do("GET", "/v1/contacts/blocked", read, nil); r.Status != 200 {
		t.Errorf("list with contacts:read: %d", r.Status)
	}
}

// TestBlockEventsAreWebhooks: a block-list change an engine reports (made on
// the phone) is a contact.blocked or contact.unblocked event.
func TestBlockEventsAreWebhooks(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "contact.blocked", "contact.unblocked")
	ws := workspaceOf(e)
	eng := e.App.Sandbox.Engine(ws)
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	for i, blocked := range []bool{true, false} {
		err := eng.Simulate(ctx, engine.Event{Type: engine.EventBlock, Block: &engine.BlockChange{ChatID: "15551230001@c.us", Blocked: blocked}})
		if err != nil {
			t.Fatal(err)
		}
		e.Eventually(10*time.Second, fmt.Sprint("event ", i), func() bool { return len(rc.all()) == i+1 })
	}
	for _, typ := range []string{"contact.blocked", "contact.unblocked"} {
		got := rc.ofType(typ)
		if len(got) != 1 {
			t.Fatalf("%d %s", len(got), typ)
		}
		d := got[0].payload["data"].(map[string]any)
		if d["chatId"] != "15551230001@c.us" || d["engineId"] != eng.ID() || d["at"] == nil {
			t.Errorf("%s data %v", typ, d)
		}
	}
}

// bareEngine serves nothing but sending: the contact operations answer 501.
type bareEngine struct{ engine.Engine }

// recordingChecker is an engine whose number checks are recorded.
type recordingChecker struct {
	engine.Engine
	mu   sync.Mutex
	asks [][]string
}

func (r *recordingChecker) CheckNumbers(ctx context.Context, phones []string) ([]engine.NumberStatus, error) {
	r.mu.Lock()
	r.asks = append(r.asks, slices.Clone(phones))
	r.mu.Unlock()
	return r.Engine.(engine.NumberChecker).CheckNumbers(ctx, phones)
}

// attach makes eng the workspace's engine, with its row.
func attach(e *apptest.Env, ws string, eng engine.Engine) {
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	e.App.Client.Engine.Create().SetID(eng.ID()).SetWorkspaceID(ws).SetKind(entengine.KindRemote).SetName("n").SaveX(ctx)
	e.App.Engines.Attach(ctx, ws, eng)
}

// TestContactOpsNotSupported: an engine without the capability answers 501
// not_supported naming it.
func TestContactOpsNotSupported(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	attach(e, ws, bareEngine{e.App.Sandbox.EngineFor(ws, "eng_bare")})
	for _, c := range []struct{ method, path, capability string }{
		{"POST", "/v1/contacts/check", "check_numbers"},
		{"GET", "/v1/contacts/blocked", "block_list"},
		{"POST", "/v1/contacts/+15551230001/block", "block_list"},
		{"DELETE", "/v1/contacts/+15551230001/block", "block_list"},
	} {
		r := e.Do(c.method, c.path, e.Key, map[string]any{"phones": []string{"+15551230001"}})
		d, _ := r.Error()["details"].([]any)
		if r.Status != 501 || r.Error()["code"] != "not_supported" || len(d) != 1 || d[0].(map[string]any)["message"] != "capability "+c.capability {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
}

// TestCheckNumbersCachePerEngine: the engine named by engineId is asked only
// the numbers its cache lacks; answers expire after an hour.
func TestCheckNumbersCachePerEngine(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	rec := &recordingChecker{Engine: e.App.Sandbox.EngineFor(ws, "eng_checker")}
	attach(e, ws, rec)
	ask := func(phones ...string) {
		t.Helper()
		r := e.Do("POST", "/v1/contacts/check", e.Key, map[string]any{"phones": phones, "engineId": "eng_checker"})
		if r.Status != 200 || r.Data()["engineId"] != "eng_checker" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
	}
	ask("+15551230001", "+15551230002")
	ask("+15551230002", "+15551230003")
	old := time.Now().Add(-61 * time.Minute)
	e.App.Client.NumberCheck.Update().Where(numbercheck.Phone("15551230001")).SetCheckedAt(old).ExecX(systemCtx())
	ask("+15551230001", "+15551230003")
	want := [][]string{{"15551230001", "15551230002"}, {"15551230003"}, {"15551230001"}}
	if diff := cmp.Diff(want, rec.asks); diff != "" {
		t.Errorf("asks (-want +got):\n%s", diff)
	}
}

// TestContactOpsGraphQL: the GraphQL fields share the core with REST: a block
// made in GraphQL is in the REST list, a check answers the same.
func TestContactOpsGraphQL(t *testing.T) {
	e := newEnv(t)
	res := gql(e, e.Key, `mutation { blockContact(id: "+15551230001") { total items } }`, nil)
	if len(res.Errors) > 0 || res.Data["blockContact"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("block: %+v", res)
	}
	if got := e.Do("GET", "/v1/contacts/blocked", e.Key, nil).Data()["items"]; !cmp.Equal(got, []any{"15551230001@c.us"}) {
		t.Errorf("REST list %v", got)
	}
	res = gql(e, e.Key, `{ checkNumbers(phones: ["+15551230000", "bad"]) { items { phone } } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "validation_failed" {
		t.Errorf("bad check: %+v", res)
	}
	res = gql(e, e.Key, `{ checkNumbers(phones: ["+15551235555"]) { items { onWhatsApp isBusiness businessName chatId } } blockedContacts { items } }`, nil)
	item := res.Data["checkNumbers"].(map[string]any)["items"].([]any)[0].(map[string]any)
	if item["businessName"] != "Sandbox Business 5555" || item["chatId"] != "15551235555@c.us" {
		t.Errorf("check: %+v", res)
	}
	res = gql(e, e.NewKey("default", "contacts:read"), `mutation { unblockContact(id: "+15551230001") { total } }`, nil)
	if len(res.Errors) != 1 {
		t.Errorf("unblock without contacts:write: %+v", res)
	}
}
