package rest_test

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/boards"
)

// openBoard finds or creates a board and returns it.
func openBoard(e *apptest.Env, key string, body map[string]any) map[string]any {
	e.T.Helper()
	resp := e.Do("POST", "/v1/boards", key, body)
	if resp.Status != 200 {
		e.T.Fatalf("open board %v: %d %s", body, resp.Status, resp.Raw)
	}
	return resp.Data()
}

// addItem creates an item and returns the answer.
func addItem(e *apptest.Env, boardID string, body map[string]any) *apptest.Response {
	e.T.Helper()
	resp := e.Do("POST", "/v1/boards/"+boardID+"/items", e.Key, body)
	if resp.Status != 201 && resp.Status != 200 {
		e.T.Fatalf("add item %v: %d %s", body, resp.Status, resp.Raw)
	}
	return resp
}

// keys lists the keys of a JSON object, sorted.
func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// labels lists the option labels of the board's column titled title.
func labels(board map[string]any, title string) []string {
	var out []string
	for _, c := range board["columns"].([]any) {
		if col := c.(map[string]any); col["title"] == title {
			for _, o := range col["options"].([]any) {
				out = append(out, o.(map[string]any)["label"].(string))
			}
		}
	}
	return out
}

func TestBoardFindOrCreate(t *testing.T) {
	e := newEnv(t)
	tasks := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:1"})
	id := tasks["board_id"].(string)
	want := []string{"agent_managed", "board_id", "columns", "created_at", "domain", "item_count", "memory_retention_days", "name", "updated_at", "web_url"}
	if diff := cmp.Diff(want, keys(tasks)); diff != "" {
		t.Errorf("board fields (-want +got):\n%s", diff)
	}
	if tasks["domain"] != "tasks" || tasks["name"] != "Tasks" || tasks["agent_managed"] != true ||
		tasks["memory_retention_days"] != 30.0 || tasks["item_count"] != 0.0 ||
		tasks["web_url"] != e.Server.URL+"/dashboard/boards/"+id {
		t.Errorf("tasks board = %v", tasks)
	}
	if diff := cmp.Diff([]string{"To do", "In progress", "Waiting", "Done", "Cancelled"}, labels(tasks, "Status")); diff != "" {
		t.Errorf("tasks statuses (-want +got):\n%s", diff)
	}
	for _, c := range tasks["columns"].([]any) {
		col := c.(map[string]any)
		for _, o := range col["options"].([]any) {
			if diff := cmp.Diff([]string{"bgcolor", "label"}, keys(o.(map[string]any))); diff != "" || !strings.HasPrefix(o.(map[string]any)["bgcolor"].(string), "#") {
				t.Errorf("option of %s = %v", col["title"], o)
			}
		}
	}

	// Find: the same pair is the same board, whatever else the call says.
	again := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:1", "name": "Other", "memory_retention_days": 5})
	if again["board_id"] != id || again["name"] != "Tasks" {
		t.Errorf("second open = %v, want board %s unchanged", again, id)
	}
	if other := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:2"}); other["board_id"] == id {
		t.Error("another agent got the same board")
	}
	if user := openBoard(e, e.Key, map[string]any{"domain": "tasks"}); user["board_id"] == id {
		t.Error("the default agent (user) got bot:1's board")
	}

	tests := []struct {
		name     string
		body     map[string]any
		domain   string
		boardNm  string
		statuses []string
		column   string
	}{
		{"leads", map[string]any{"domain": "leads", "memory_retention_days": 90}, "leads", "Leads",
			[]string{"New", "Contacted", "Qualified", "Proposal", "Won", "Lost"}, "Company"},
		{"invoices", map[string]any{"domain": "invoices"}, "invoices", "Invoices",
			[]string{"Draft", "Sent", "Overdue", "Paid", "Cancelled"}, "Amount"},
		{"custom kind", map[string]any{"entity_kind": "Follow-ups!", "description": "People to get back to"}, "custom:follow-ups", "🤖 Follow-ups!",
			[]string{"New", "In progress", "Done"}, "Source"},
		{"kind naming a built-in domain", map[string]any{"entity_kind": "Leads", "agent_id": "bot:3"}, "leads", "Leads",
			[]string{"New", "Contacted", "Qualified", "Proposal", "Won", "Lost"}, "Company"},
		{"custom domain found again", map[string]any{"domain": "custom:follow-ups"}, "custom:follow-ups", "🤖 Follow-ups!",
			[]string{"New", "In progress", "Done"}, "Source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := openBoard(e, e.Key, tt.body)
			if b["domain"] != tt.domain || b["name"] != tt.boardNm || !slices.Contains(titles(b), tt.column) {
				t.Errorf("board = %v", b)
			}
			if diff := cmp.Diff(tt.statuses, labels(b, "Status")); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}

	got := e.Do("GET", "/v1/boards/"+id, e.Key, nil)
	if got.Status != 200 || got.Data()["board_id"] != id || len(got.Data()["columns"].([]any)) != len(tasks["columns"].([]any)) {
		t.Errorf("GET board = %d %s", got.Status, got.Raw)
	}
	list := e.Do("GET", "/v1/boards?limit=2&order=asc", e.Key, nil)
	if list.Status != 200 || list.Body["total"] != 7.0 || len(list.List()) != 2 || list.List()[0]["board_id"] != id || list.List()[0]["columns"] != nil {
		t.Errorf("list = %d %s", list.Status, list.Raw)
	}
	if l := e.Do("GET", "/v1/boards?domain=leads", e.Key, nil); l.Body["total"] != 2.0 {
		t.Errorf("list by domain = %s", l.Raw)
	}
	if r := e.Do("GET", "/v1/boards/brd_missing", e.Key, nil); r.Status != 404 || r.Error()["code"] != "not_found" {
		t.Errorf("unknown board = %d %s", r.Status, r.Raw)
	}
}

func titles(board map[string]any) []string {
	var out []string
	for _, c := range board["columns"].([]any) {
		out = append(out, c.(map[string]any)["title"].(string))
	}
	return out
}

// TestBoardFindOrCreateConcurrent: calls racing for the same pair all get the one
// board the unique index lets exist.
func TestBoardFindOrCreateConcurrent(t *testing.T) {
	e := newEnv(t)
	const n = 12
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := e.Do("POST", "/v1/boards", e.Key, map[string]any{"domain": "leads", "agent_id": "bot:race"})
			if resp.Status != 200 {
				t.Errorf("call %d = %d %s", i, resp.Status, resp.Raw)
				return
			}
			ids[i] = resp.Data()["board_id"].(string)
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id != ids[0] {
			t.Fatalf("call %d got board %s, call 0 got %s", i, id, ids[0])
		}
	}
	if l := e.Do("GET", "/v1/boards?agent_id=bot:race", e.Key, nil); l.Body["total"] != 1.0 {
		t.Errorf("boards of the pair = %v, want 1", l.Body["total"])
	}
}

func TestBoardBadInput(t *testing.T) {
	e := newEnv(t)
	tasks := openBoard(e, e.Key, map[string]any{"domain": "tasks"})["board_id"].(string)
	leads := openBoard(e, e.Key, map[string]any{"domain": "leads"})["board_id"].(string)
	item := addItem(e, tasks, map[string]any{"text": "exists"}).Data()["item_id"].(string)
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name, method, path string
		body               any
		status             int
		field, says        string
	}{
		{"no domain or kind", "POST", "/v1/boards", map[string]any{"agent_id": "a"}, 422, "domain", "entity_kind"},
		{"unknown domain", "POST", "/v1/boards", map[string]any{"domain": "recipes"}, 422, "domain", "tasks, leads, invoices"},
		{"both domain and kind", "POST", "/v1/boards", map[string]any{"domain": "tasks", "entity_kind": "x"}, 422, "entity_kind", "not both"},
		{"kind too long", "POST", "/v1/boards", map[string]any{"entity_kind": long(41), "description": "d"}, 422, "entity_kind", "1-40"},
		{"kind without letters", "POST", "/v1/boards", map[string]any{"entity_kind": "!!", "description": "d"}, 422, "entity_kind", "letters"},
		{"custom without description", "POST", "/v1/boards", map[string]any{"entity_kind": "orders"}, 422, "description", "required"},
		{"name too long", "POST", "/v1/boards", map[string]any{"domain": "tasks", "name": long(121)}, 422, "name", "1-120"},
		{"description too long", "POST", "/v1/boards", map[string]any{"domain": "tasks", "description": long(501)}, 422, "description", "1-500"},
		{"agent too long", "POST", "/v1/boards", map[string]any{"domain": "tasks", "agent_id": long(201)}, 422, "agent_id", "1-200"},
		{"retention too long", "POST", "/v1/boards", map[string]any{"domain": "tasks", "memory_retention_days": 3651}, 422, "memory_retention_days", "3650"},
		{"retention negative", "POST", "/v1/boards", map[string]any{"domain": "tasks", "memory_retention_days": -1}, 422, "memory_retention_days", "3650"},
		{"unknown board field", "POST", "/v1/boards", map[string]any{"domain": "tasks", "color": "red"}, 400, "color", "accepted fields"},
		{"retention not a number", "POST", "/v1/boards", map[string]any{"domain": "tasks", "memory_retention_days": "30"}, 400, "memory_retention_days", "number"},
		{"no text", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"status": "Done"}, 422, "text", "required"},
		{"blank text", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "  "}, 422, "text", "required"},
		{"text too long", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": long(2001)}, 422, "text", "1-2000"},
		{"unknown status label", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "status": "Finished"}, 422, "status", "To do, In progress, Waiting, Done, Cancelled"},
		{"unknown priority label", "POST", "/v1/boards/" + leads + "/items", map[string]any{"text": "t", "priority": "High"}, 422, "priority", "Cold, Warm, Hot"},
		{"label too long", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "status": long(121)}, 422, "status", "120"},
		{"confidence above 1", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "confidence": 1.5}, 422, "confidence", "between 0 and 1"},
		{"confidence below 0", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "confidence": -0.1}, 422, "confidence", "between 0 and 1"},
		{"cell of no column", "POST", "/v1/boards/" + leads + "/items", map[string]any{"text": "t", "cells": map[string]any{"Shoe size": "42"}}, 422, "cells.Shoe size", "Company, Email, Phone, Value, Source"},
		{"cell of the status column", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "cells": map[string]any{"Status": "Done"}}, 422, "cells.Status", "own field"},
		{"cell not a number", "POST", "/v1/boards/" + leads + "/items", map[string]any{"text": "t", "cells": map[string]any{"Value": "lots"}}, 422, "cells.Value", "numbers"},
		{"cell of another type", "POST", "/v1/boards/" + leads + "/items", map[string]any{"text": "t", "cells": map[string]any{"Value": true}}, 400, "cells.Value", "string or a number"},
		{"bad due date", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "due_date": "next Tuesday"}, 422, "due_date", "YYYY-MM-DD"},
		{"chat name too long", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "source": map[string]any{"chat_name": long(201)}}, 422, "source.chat_name", "200"},
		{"excerpt too long", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "source": map[string]any{"excerpt": long(2001)}}, 422, "source.excerpt", "2000"},
		{"unknown source field", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "source": map[string]any{"url": "x"}}, 400, "url", "Unknown field"},
		{"note on create", "POST", "/v1/boards/" + tasks + "/items", map[string]any{"text": "t", "note": "n"}, 400, "note", "updating"},
		{"item on no board", "POST", "/v1/boards/brd_nope/items", map[string]any{"text": "t"}, 404, "", "No board"},
		{"bulk without items", "POST", "/v1/boards/" + tasks + "/items/bulk", map[string]any{}, 422, "items", "1-500"},
		{"bulk bad item named", "POST", "/v1/boards/" + tasks + "/items/bulk", map[string]any{"items": []any{map[string]any{"text": "ok"}, map[string]any{"text": "t", "status": "Nope"}}}, 422, "items.1.status", "valid labels"},
		{"bulk mode", "POST", "/v1/boards/" + tasks + "/items/bulk", map[string]any{"items": []any{map[string]any{"text": "t"}}, "mode": "replace"}, 422, "mode", "upsert"},
		{"bulk over 500", "POST", "/v1/boards/" + tasks + "/items/bulk", map[string]any{"items": make([]map[string]any, 501)}, 422, "items", "1-500"},
		{"similar without candidates", "POST", "/v1/boards/" + tasks + "/items/find-similar", map[string]any{"candidates": []any{}}, 422, "candidates", "1-500"},
		{"similar blank candidate", "POST", "/v1/boards/" + tasks + "/items/find-similar", map[string]any{"candidates": []any{map[string]any{"text": ""}}}, 422, "candidates.0.text", "1-2000"},
		{"patch nothing", "PATCH", "/v1/boards/" + tasks + "/items/" + item, map[string]any{}, 422, "body", "at least one"},
		{"patch note too long", "PATCH", "/v1/boards/" + tasks + "/items/" + item, map[string]any{"note": long(501)}, 422, "note", "500"},
		{"patch unknown label", "PATCH", "/v1/boards/" + tasks + "/items/" + item, map[string]any{"status": "nope"}, 422, "status", "valid labels"},
		{"patch allow_duplicate", "PATCH", "/v1/boards/" + tasks + "/items/" + item, map[string]any{"allow_duplicate": true}, 400, "allow_duplicate", "creating"},
		{"patch unknown item", "PATCH", "/v1/boards/" + tasks + "/items/itm_nope", map[string]any{"text": "x"}, 404, "", "No item"},
		{"patch item of another board", "PATCH", "/v1/boards/" + leads + "/items/" + item, map[string]any{"text": "x"}, 404, "", "No item"},
		{"list limit", "GET", "/v1/boards/" + tasks + "/items?limit=201", nil, 400, "limit", "200"},
		{"list skip", "GET", "/v1/boards?skip=-1", nil, 400, "skip", "0 or more"},
		{"list order", "GET", "/v1/boards?order=up", nil, 400, "order", "asc or desc"},
		{"list active_only", "GET", "/v1/boards/" + tasks + "/items?active_only=maybe", nil, 400, "active_only", "true or false"},
		{"list updated_since", "GET", "/v1/boards/" + tasks + "/items?updated_since=yesterday", nil, 400, "updated_since", "RFC 3339"},
		{"list unknown status", "GET", "/v1/boards/" + tasks + "/items?status=nope", nil, 422, "status", "valid labels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Do(tt.method, tt.path, e.Key, tt.body)
			msg, _ := resp.Error()["message"].(string)
			if resp.Status != tt.status || !strings.Contains(msg, tt.says) ||
				(tt.field != "" && !slices.Contains(resp.DetailPaths(), tt.field)) {
				t.Errorf("= %d %s, want %d naming %q and saying %q", resp.Status, resp.Raw, tt.status, tt.field, tt.says)
			}
		})
	}
	if n := e.Do("GET", "/v1/boards/"+tasks, e.Key, nil).Data()["item_count"]; n != 1.0 {
		t.Errorf("bad input left items behind: item_count = %v", n)
	}
}

func TestBoardItemLabelsCellsAndProvenance(t *testing.T) {
	e := newEnv(t)
	leads := openBoard(e, e.Key, map[string]any{"domain": "leads", "agent_id": "bot:sales"})["board_id"].(string)
	src := map[string]any{"chat_id": "15550001111@c.us", "chat_name": "Maria Lopez", "message_key": "false_15550001111@c.us_ABC",
		"excerpt": "we need 40 seats", "extracted_at": 1767225600000.0}
	resp := addItem(e, leads, map[string]any{"text": "Maria wants 40 seats", "status": "qualified", "priority": "HOT",
		"due_date": "2030-01-15", "cells": map[string]any{"company": "Acme", "Value": 1200.5}, "source": src, "confidence": 0.8})
	if resp.Status != 201 {
		t.Fatalf("create = %d %s", resp.Status, resp.Raw)
	}
	it := resp.Data()
	want := map[string]any{
		"text":       "Maria wants 40 seats",
		"status":     map[string]any{"label": "Qualified", "bgcolor": "#a25ddc"},
		"priority":   map[string]any{"label": "Hot", "bgcolor": "#e2445c"},
		"due_date":   "2030-01-15",
		"cells":      map[string]any{"Company": "Acme", "Value": "1200.5", "Source": "Maria Lopez"},
		"source":     src,
		"confidence": 0.8,
	}
	got := map[string]any{}
	for k := range want {
		got[k] = it[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("item (-want +got):\n%s", diff)
	}
	id := it["item_id"].(string)
	if it["web_url"] != e.Server.URL+"/dashboard/boards/"+leads+"/items/"+id || it["last_seen_at"].(float64) < float64(time.Now().Add(-time.Minute).UnixMilli()) {
		t.Errorf("item = %v", it)
	}
	// The fingerprint and the provenance are stamped into the AI metadata record.
	row, err := e.App.Client.BoardItem.Get(systemCtx(), id)
	if err != nil {
		t.Fatal(err)
	}
	if row.AiMeta.Fingerprint != boards.Fingerprint("maria wants 40 SEATS!", "15550001111@c.us") || row.Fingerprint != row.AiMeta.Fingerprint ||
		row.AiMeta.Source == nil || row.AiMeta.Source.MessageKey != "false_15550001111@c.us_ABC" || row.AiMeta.Via != "create" || row.AiMeta.Sightings != 1 {
		t.Errorf("ai meta = %+v", row.AiMeta)
	}

	// Patch: labels again by any case, a cell cleared, a note in the history.
	p := e.Do("PATCH", "/v1/boards/"+leads+"/items/"+id, e.Key, map[string]any{"status": "WON", "cells": map[string]any{"Value": nil, "Email": "m@acme.test"}, "note": "signed today"})
	if p.Status != 200 || p.Data()["status"].(map[string]any)["label"] != "Won" {
		t.Fatalf("patch = %d %s", p.Status, p.Raw)
	}
	if diff := cmp.Diff(map[string]any{"Company": "Acme", "Email": "m@acme.test", "Source": "Maria Lopez"}, p.Data()["cells"]); diff != "" {
		t.Errorf("patched cells (-want +got):\n%s", diff)
	}
	row, _ = e.App.Client.BoardItem.Get(systemCtx(), id)
	if h := row.AiMeta.History; len(h) != 1 || h[0].Note != "signed today" || !slices.Equal(h[0].Fields, []string{"status", "cells"}) {
		t.Errorf("history = %+v", h)
	}
	// Soft delete hides the item; restore brings it back.
	if d := e.Do("PATCH", "/v1/boards/"+leads+"/items/"+id, e.Key, map[string]any{"deleted": true}); d.Status != 200 {
		t.Fatalf("delete = %d %s", d.Status, d.Raw)
	}
	if l := e.Do("GET", "/v1/boards/"+leads+"/items", e.Key, nil); l.Body["total"] != 0.0 || e.Do("GET", "/v1/boards/"+leads, e.Key, nil).Data()["item_count"] != 0.0 {
		t.Errorf("deleted item still listed: %s", l.Raw)
	}
	e.Do("PATCH", "/v1/boards/"+leads+"/items/"+id, e.Key, map[string]any{"deleted": false})
	if l := e.Do("GET", "/v1/boards/"+leads+"/items?status=won", e.Key, nil); l.Body["total"] != 1.0 {
		t.Errorf("restored item by status = %s", l.Raw)
	}
}
