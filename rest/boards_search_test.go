package rest_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/boards"
	"github.com/switchboardhq/switchboard/ent/boarditem"
)

// TestBoardDedupeByFingerprint: the same fact (same normalized text from the same
// chat) is one item, seen again; bulk upserts merge by fingerprint.
func TestBoardDedupeByFingerprint(t *testing.T) {
	e := newEnv(t)
	b := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:dedupe"})["board_id"].(string)
	chat := map[string]any{"chat_id": "15550002222@c.us", "chat_name": "Bob"}
	first := addItem(e, b, map[string]any{"text": "Send Bob the contract", "source": chat})
	id := first.Data()["item_id"].(string)
	seen := first.Data()["last_seen_at"].(float64)

	again := addItem(e, b, map[string]any{"text": "send bob the CONTRACT!!", "status": "In progress", "source": map[string]any{"chat_id": "15550002222@c.us"}})
	if again.Status != 200 || again.Data()["item_id"] != id || again.Data()["text"] != "Send Bob the contract" ||
		again.Data()["status"] == nil || again.Data()["last_seen_at"].(float64) < seen {
		t.Errorf("same fact again = %d %s, want 200 with item %s seen again", again.Status, again.Raw, id)
	}
	if src := again.Data()["source"].(map[string]any); src["chat_name"] != "Bob" {
		t.Errorf("a poorer sighting lost the source: %v", src)
	}
	other := addItem(e, b, map[string]any{"text": "Send Bob the contract", "source": map[string]any{"chat_id": "15550003333@c.us"}})
	dup := addItem(e, b, map[string]any{"text": "Send Bob the contract", "source": chat, "allow_duplicate": true})
	if other.Status != 201 || dup.Status != 201 || other.Data()["item_id"] == id || dup.Data()["item_id"] == id {
		t.Errorf("another chat = %d, allow_duplicate = %d: want two new items", other.Status, dup.Status)
	}

	bulk := e.Do("POST", "/v1/boards/"+b+"/items/bulk", e.Key, map[string]any{"items": []any{
		map[string]any{"text": "Book the venue", "priority": "high"},
		map[string]any{"text": "book the venue", "priority": "High"},
		map[string]any{"text": "Pay the caterer"},
	}})
	if bulk.Status != 200 {
		t.Fatalf("bulk = %d %s", bulk.Status, bulk.Raw)
	}
	rep := bulk.Data()
	if len(rep["created"].([]any)) != 2 || len(rep["updated"].([]any)) != 0 || rep["unchanged"] != 1.0 || rep["board"].(map[string]any)["board_id"] != b {
		t.Errorf("first bulk = %s", bulk.Raw)
	}
	venue := rep["created"].([]any)[0].(map[string]any)
	before := e.Do("GET", "/v1/boards/"+b+"/items?limit=200", e.Key, nil).Body["total"]

	// The same facts twice: one changes (updated), one does not (unchanged); nothing is duplicated.
	bulk = e.Do("POST", "/v1/boards/"+b+"/items/bulk", e.Key, map[string]any{"mode": "upsert", "items": []any{
		map[string]any{"text": "Book the venue", "priority": "Urgent", "due_date": "2030-02-01"},
		map[string]any{"text": "pay the caterer."},
	}})
	rep = bulk.Data()
	if bulk.Status != 200 || len(rep["created"].([]any)) != 0 || len(rep["updated"].([]any)) != 1 || rep["unchanged"] != 1.0 {
		t.Fatalf("second bulk = %d %s", bulk.Status, bulk.Raw)
	}
	up := rep["updated"].([]any)[0].(map[string]any)
	if up["item_id"] != venue["item_id"] || up["priority"].(map[string]any)["label"] != "Urgent" || up["last_seen_at"].(float64) < venue["last_seen_at"].(float64) {
		t.Errorf("updated = %v, was %v", up, venue)
	}
	if after := e.Do("GET", "/v1/boards/"+b+"/items?limit=200", e.Key, nil).Body["total"]; after != before {
		t.Errorf("items went from %v to %v: the upsert duplicated", before, after)
	}
	caterer, err := e.App.Client.BoardItem.Query().Where(boarditem.Text("Pay the caterer")).Only(systemCtx())
	if err != nil || caterer.AiMeta.Sightings != 2 || caterer.AiMeta.Via != "bulk" || !caterer.LastSeenAt.After(caterer.CreatedAt) {
		t.Errorf("caterer = %+v, %v: want seen twice", caterer, err)
	}
}

func TestBoardFindSimilarRanking(t *testing.T) {
	e := newEnv(t)
	b := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:similar"})["board_id"].(string)
	ids := map[string]string{}
	for _, text := range []string{"Call Maria about the invoice", "Call Mario about the new office", "Send the contract to Bob", "Buy milk"} {
		ids[text] = addItem(e, b, map[string]any{"text": text}).Data()["item_id"].(string)
	}
	resp := e.Do("POST", "/v1/boards/"+b+"/items/find-similar", e.Key, map[string]any{"candidates": []any{
		map[string]any{"text": "call maria re the invoices"},
		map[string]any{"text": "Quarterly tax filing deadline"},
		map[string]any{"text": "buy milk"},
	}})
	if resp.Status != 200 {
		t.Fatalf("find-similar = %d %s", resp.Status, resp.Raw)
	}
	type match struct {
		Candidate int
		Text      string
	}
	var got []match
	var scores []float64
	for _, m := range resp.Data()["matches"].([]any) {
		mm := m.(map[string]any)
		got = append(got, match{int(mm["candidate_index"].(float64)), mm["text"].(string)})
		scores = append(scores, mm["score"].(float64))
		if mm["item_id"] != ids[mm["text"].(string)] {
			t.Errorf("match %v names the wrong item", mm)
		}
	}
	want := []match{{0, "Call Maria about the invoice"}, {2, "Buy milk"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matches (-want +got):\n%s\n%s", diff, resp.Raw)
	}
	if len(scores) == 2 && (scores[0] <= boards.MinScore || scores[0] >= 1 || scores[1] != 1) {
		t.Errorf("scores = %v, want a partial match and an exact one", scores)
	}
	if diff := cmp.Diff([]any{1.0}, resp.Data()["misses"]); diff != "" {
		t.Errorf("misses (-want +got):\n%s", diff)
	}
	// Ranked best first: the closer of two similar items comes first.
	resp = e.Do("POST", "/v1/boards/"+b+"/items/find-similar", e.Key, map[string]any{"candidates": []any{map[string]any{"text": "Call Mario about the office"}}})
	ms := resp.Data()["matches"].([]any)
	if len(ms) == 0 || ms[0].(map[string]any)["text"] != "Call Mario about the new office" {
		t.Errorf("ranking = %s", resp.Raw)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].(map[string]any)["score"].(float64) > ms[i-1].(map[string]any)["score"].(float64) {
			t.Errorf("not best first: %s", resp.Raw)
		}
	}
}

// TestBoardRetention: items past the board's window leave the active view at
// once and are deleted by the purge; a board kept forever loses nothing.
func TestBoardRetention(t *testing.T) {
	e := newEnv(t)
	week := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:ret", "memory_retention_days": 7})["board_id"].(string)
	forever := openBoard(e, e.Key, map[string]any{"domain": "leads", "agent_id": "bot:ret", "memory_retention_days": 0})["board_id"].(string)
	fresh := addItem(e, week, map[string]any{"text": "fresh"}).Data()["item_id"].(string)
	done := addItem(e, week, map[string]any{"text": "done", "status": "Done"}).Data()["item_id"].(string)
	stale := addItem(e, week, map[string]any{"text": "stale"}).Data()["item_id"].(string)
	kept := addItem(e, forever, map[string]any{"text": "kept"}).Data()["item_id"].(string)
	old := time.Now().Add(-8 * 24 * time.Hour)
	for _, id := range []string{stale, kept} {
		if err := e.App.Client.BoardItem.UpdateOneID(id).SetLastSeenAt(old).Exec(systemCtx()); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(path string) []string {
		var out []string
		for _, it := range e.Do("GET", path, e.Key, nil).List() {
			out = append(out, it["item_id"].(string))
		}
		sort.Strings(out)
		return out
	}
	sorted := func(s ...string) []string { sort.Strings(s); return s }
	if diff := cmp.Diff([]string{fresh}, ids("/v1/boards/"+week+"/items?active_only=true")); diff != "" {
		t.Errorf("active view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(fresh, done, stale), ids("/v1/boards/"+week+"/items")); diff != "" {
		t.Errorf("full view before the purge (-want +got):\n%s", diff)
	}
	// A stale fact is not matched any more: telling it again makes a new item.
	if r := addItem(e, week, map[string]any{"text": "stale"}); r.Status != 201 || r.Data()["item_id"] == stale {
		t.Errorf("stale fact told again = %d %s", r.Status, r.Raw)
	}
	n, err := boards.Purge(systemCtx(), e.App.Client, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1", n, err)
	}
	if got := ids("/v1/boards/" + week + "/items"); slices.Contains(got, stale) || len(got) != 3 {
		t.Errorf("after the purge: %v", got)
	}
	if diff := cmp.Diff([]string{kept}, ids("/v1/boards/"+forever+"/items?active_only=true")); diff != "" {
		t.Errorf("a board kept forever (-want +got):\n%s", diff)
	}
	if n, _ := boards.Purge(systemCtx(), e.App.Client, time.Now()); n != 0 {
		t.Errorf("second purge = %d, want 0", n)
	}
}

func TestBoardTenantIsolationAndScopes(t *testing.T) {
	e := newEnv(t)
	b := openBoard(e, e.Key, map[string]any{"domain": "tasks", "agent_id": "bot:iso"})["board_id"].(string)
	item := addItem(e, b, map[string]any{"text": "secret plan"}).Data()["item_id"].(string)
	other := e.NewKey("acme", "*")
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/boards/" + b, nil},
		{"GET", "/v1/boards/" + b + "/items", nil},
		{"POST", "/v1/boards/" + b + "/items", map[string]any{"text": "injected"}},
		{"PATCH", "/v1/boards/" + b + "/items/" + item, map[string]any{"text": "hijacked"}},
		{"POST", "/v1/boards/" + b + "/items/bulk", map[string]any{"items": []any{map[string]any{"text": "x"}}}},
		{"POST", "/v1/boards/" + b + "/items/find-similar", map[string]any{"candidates": []any{map[string]any{"text": "secret plan"}}}},
	} {
		if resp := e.Do(tc.method, tc.path, other, tc.body); resp.Status != 404 {
			t.Errorf("%s %s from another workspace = %d, want 404: %s", tc.method, tc.path, resp.Status, resp.Raw)
		}
	}
	if l := e.Do("GET", "/v1/boards", other, nil); l.Body["total"] != 0.0 {
		t.Errorf("other workspace lists %v boards", l.Body["total"])
	}
	theirs := openBoard(e, other, map[string]any{"domain": "tasks", "agent_id": "bot:iso"})
	if theirs["board_id"] == b || theirs["item_count"] != 0.0 {
		t.Errorf("the same pair in another workspace = %v", theirs)
	}
	if res := gql(e, other, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": item}); res.Data["node"] != nil {
		t.Errorf("node from another workspace = %v", res.Data)
	}

	writer := e.NewKey("default", "boards:write")
	reader := e.NewKey("default", "boards:read")
	for _, tc := range []struct {
		method, path, key string
		body              any
		want              int
		scope             string
	}{
		{"POST", "/v1/boards", writer, map[string]any{"domain": "tasks", "agent_id": "bot:iso"}, 200, ""},
		{"POST", "/v1/boards/" + b + "/items", writer, map[string]any{"text": "by the writer"}, 201, ""},
		{"GET", "/v1/boards", writer, nil, 403, "boards:read"},
		{"GET", "/v1/boards/" + b + "/items", writer, nil, 403, "boards:read"},
		{"POST", "/v1/boards/" + b + "/items/find-similar", writer, map[string]any{"candidates": []any{map[string]any{"text": "x"}}}, 403, "boards:read"},
		{"GET", "/v1/boards/" + b, reader, nil, 200, ""},
		{"POST", "/v1/boards/" + b + "/items/find-similar", reader, map[string]any{"candidates": []any{map[string]any{"text": "x"}}}, 200, ""},
		{"POST", "/v1/boards", reader, map[string]any{"domain": "tasks"}, 403, "boards:write"},
		{"PATCH", "/v1/boards/" + b + "/items/" + item, reader, map[string]any{"text": "x"}, 403, "boards:write"},
		{"POST", "/v1/boards/" + b + "/items/bulk", reader, map[string]any{"items": []any{map[string]any{"text": "x"}}}, 403, "boards:write"},
	} {
		resp := e.Do(tc.method, tc.path, tc.key, tc.body)
		if msg, _ := resp.Error()["message"].(string); resp.Status != tc.want || !strings.Contains(msg, tc.scope) {
			t.Errorf("%s %s = %d %s, want %d naming %q", tc.method, tc.path, resp.Status, resp.Raw, tc.want, tc.scope)
		}
	}
}

// TestBoardsInGraphQL: boards with their columns and items, filterable, and the
// same core as REST (the same 422 for an unknown label).
func TestBoardsInGraphQL(t *testing.T) {
	e := newEnv(t)
	res := gql(e, e.Key, `mutation { openBoard(input: {domain: "tasks", agent_id: "bot:gql"}) { id webUrl columns { title options { label bgcolor terminal } } } }`, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("openBoard: %+v", res.Errors)
	}
	id := res.Data["openBoard"].(map[string]any)["id"].(string)
	for i, status := range []string{"done", "to do", "Waiting"} {
		res = gql(e, e.Key, `mutation($b: ID!, $in: BoardItemInput!) { createBoardItem(boardId: $b, input: $in) { merged item { id status { label } } } }`,
			map[string]any{"b": id, "in": map[string]any{"text": fmt.Sprintf("task %d", i), "status": status, "cells": []any{map[string]any{"column": "Owner", "value": "ann"}}}})
		if len(res.Errors) > 0 {
			t.Fatalf("createBoardItem: %+v", res.Errors)
		}
	}
	res = gql(e, e.Key, `mutation($b: ID!) { createBoardItem(boardId: $b, input: {text: "x", status: "Nope"}) { merged } }`, map[string]any{"b": id})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "validation_failed" || !strings.Contains(res.Errors[0].Message, "To do, In progress") {
		t.Errorf("unknown label over GraphQL = %+v", res.Errors)
	}
	res = gql(e, e.Key, `{ boards(first: 5, where: {domain: "tasks", agentID: "bot:gql"}) { totalCount edges { node { id itemCount
		columns { title }
		items(first: 10, where: {statusLabelIn: ["Done", "Waiting"]}, orderBy: {field: CREATED_AT, direction: ASC}) { totalCount edges { node { text status { label bgcolor } cells { column value } webUrl } } } } } } }`, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("boards: %+v", res.Errors)
	}
	conn := res.Data["boards"].(map[string]any)
	node := conn["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)
	items := node["items"].(map[string]any)
	if conn["totalCount"] != 1.0 || node["itemCount"] != 3.0 || items["totalCount"] != 2.0 {
		t.Errorf("boards = %v", conn)
	}
	first := items["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"label": "Done", "bgcolor": "#00c875"}, first["status"]); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	res = gql(e, e.Key, `query($b: ID!) { boardItems(boardId: $b, filter: {active_only: true}) { total items { text } } }`, map[string]any{"b": id})
	if len(res.Errors) > 0 || res.Data["boardItems"].(map[string]any)["total"] != 2.0 {
		t.Errorf("active items over GraphQL = %v %+v", res.Data, res.Errors)
	}
	reader := e.NewKey("default", "messages:read")
	if res := gql(e, reader, `{ boards(first: 1) { totalCount } }`, nil); len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "boards:read") {
		t.Errorf("boards without boards:read = %+v", res.Errors)
	}
}

// TestBoardBadTextIsNamed: NUL bytes and invalid UTF-8 in any board argument
// answer 400 naming the field, before anything reaches the database.
func TestBoardBadTextIsNamed(t *testing.T) {
	e := newEnv(t)
	b := openBoard(e, e.Key, map[string]any{"domain": "tasks"})["board_id"].(string)
	tests := []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"board domain", "POST", "/v1/boards", `{"domain":"tasks\u0000"}`, "domain"},
		{"board agent", "POST", "/v1/boards", `{"domain":"tasks","agent_id":"a\u0000"}`, "agent_id"},
		{"board id", "GET", "/v1/boards/brd_%00", nil, "id"},
		{"item text", "POST", "/v1/boards/" + b + "/items", `{"text":"a\u0000b"}`, "text"},
		{"item cell", "POST", "/v1/boards/" + b + "/items", `{"text":"t","cells":{"Owner":"\u0000"}}`, "cells.Owner"}, // the body's own key
		{"item source", "POST", "/v1/boards/" + b + "/items", `{"text":"t","source":{"excerpt":"\u0000"}}`, "source.excerpt"},
		{"item id", "PATCH", "/v1/boards/" + b + "/items/itm_%C0%AF", map[string]any{"text": "x"}, "itemId"},
		{"bulk item", "POST", "/v1/boards/" + b + "/items/bulk", `{"items":[{"text":"ok"},{"text":"\u0000"}]}`, "items.1.text"},
		{"candidate", "POST", "/v1/boards/" + b + "/items/find-similar", `{"candidates":[{"text":"\u0000"}]}`, "candidates.0.text"},
		{"status filter", "GET", "/v1/boards/" + b + "/items?status=%FF", nil, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.Do(tt.method, tt.path, e.Key, tt.body)
			if resp.Status != 400 || !slices.Contains(resp.DetailPaths(), tt.field) {
				t.Errorf("= %d %s, want 400 naming %s", resp.Status, resp.Raw, tt.field)
			}
		})
	}
}
