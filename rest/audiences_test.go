package rest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every audience operation through the API, with contactCount exact throughout.
func TestAudienceOperations(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": " Q4 "})
	id := aud["id"].(string)
	if aud["name"] != "Q4" || aud["contactCount"] != float64(0) || aud["createdAt"] == nil {
		t.Fatalf("created %v", aud)
	}
	add := func(contacts ...map[string]any) map[string]any {
		t.Helper()
		r := e.Do("POST", "/v1/audiences/"+id+"/contacts", e.Key, map[string]any{"contacts": contacts})
		if r.Status != 200 {
			t.Fatalf("append: %d %s", r.Status, r.Raw)
		}
		return r.Data()
	}
	got := add(map[string]any{"to": "+15550300001", "variables": map[string]any{"firstName": "Ann"}},
		map[string]any{"to": "15550300001@c.us"}, // the same recipient as a JID
		map[string]any{"to": "+15550300002"}, map[string]any{"to": "120363000000000001@g.us"})
	if diff := cmp.Diff(map[string]any{"added": 3.0, "skipped": 1.0, "contactCount": 3.0}, got); diff != "" {
		t.Errorf("append (-want +got):\n%s", diff)
	}
	got = add(map[string]any{"to": "+15550300002"}, map[string]any{"to": "+15550300003"})
	if diff := cmp.Diff(map[string]any{"added": 1.0, "skipped": 1.0, "contactCount": 4.0}, got); diff != "" {
		t.Errorf("second append (-want +got):\n%s", diff)
	}
	if n := e.Do("GET", "/v1/audiences/"+id, e.Key, nil).Data()["contactCount"]; n != 4.0 {
		t.Errorf("contactCount = %v", n)
	}
	renamed := e.Do("PATCH", "/v1/audiences/"+id, e.Key, map[string]any{"name": "Q4 list"})
	if renamed.Status != 200 || renamed.Data()["name"] != "Q4 list" || renamed.Data()["contactCount"] != 4.0 {
		t.Errorf("rename: %d %s", renamed.Status, renamed.Raw)
	}
	list := e.Do("GET", "/v1/audiences?limit=1", e.Key, nil)
	if list.Status != 200 || list.Body["total"] != 1.0 || len(list.List()) != 1 || list.List()[0]["id"] != id {
		t.Errorf("list: %s", list.Raw)
	}
	contact := e.App.Client.AudienceContact.Query().AllX(systemCtx())[0]
	upd := e.Do("PATCH", "/v1/audiences/"+id+"/contacts/"+contact.ID, e.Key,
		map[string]any{"to": "15550300009@c.us", "variables": map[string]any{"plan": "pro"}})
	if upd.Status != 200 {
		t.Fatalf("update contact: %d %s", upd.Status, upd.Raw)
	}
	if diff := cmp.Diff(map[string]any{"id": contact.ID, "to": "+15550300009", "variables": map[string]any{"plan": "pro"},
		"addedAt": upd.Data()["addedAt"]}, upd.Data()); diff != "" {
		t.Errorf("updated contact (-want +got):\n%s", diff)
	}
	if r := e.Do("PATCH", "/v1/audiences/"+id+"/contacts/"+contact.ID, e.Key, map[string]any{"to": "+15550300002"}); r.Status != 409 {
		t.Errorf("recipient taken by another contact: %d %s", r.Status, r.Raw)
	}
	del := e.Do("DELETE", "/v1/audiences/"+id+"/contacts/"+contact.ID, e.Key, nil)
	if del.Status != 200 || del.Data()["id"] != contact.ID {
		t.Errorf("remove contact: %d %s", del.Status, del.Raw)
	}
	if r := e.Do("DELETE", "/v1/audiences/"+id+"/contacts/"+contact.ID, e.Key, nil); r.Status != 404 {
		t.Errorf("remove it again: %d", r.Status)
	}
	if n := e.Do("GET", "/v1/audiences/"+id, e.Key, nil).Data()["contactCount"]; n != 3.0 {
		t.Errorf("contactCount after removal = %v", n)
	}
	gone := e.Do("DELETE", "/v1/audiences/"+id, e.Key, nil)
	if gone.Status != 200 || gone.Data()["deleted"] != true || gone.Data()["id"] != id {
		t.Errorf("delete: %d %s", gone.Status, gone.Raw)
	}
	for _, r := range audienceRoutes(id) {
		if got := e.Do(r.method, r.path, e.Key, r.body); got.Status != 404 {
			t.Errorf("%s %s after delete: %d %s", r.method, r.path, got.Status, got.Raw)
		}
	}
	if list := e.Do("GET", "/v1/audiences", e.Key, nil); list.Body["total"] != 0.0 {
		t.Errorf("deleted audience listed: %s", list.Raw)
	}
}

// Bad audience input is refused whole, naming every field at fault; nothing is
// stored.
func TestAudienceValidation(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "v"})
	many := make([]any, 1001)
	for i := range many {
		many[i] = map[string]any{"to": fmt.Sprintf("+1555040%04d", i)}
	}
	tooMany := map[string]any{}
	for i := 0; i < 33; i++ {
		tooMany[fmt.Sprintf("k%d", i)] = "v"
	}
	for _, tc := range []struct {
		name   string
		path   string
		body   any
		status int
		paths  []string
	}{
		{"no name", "/v1/audiences", map[string]any{}, 422, []string{"name"}},
		{"long name", "/v1/audiences", map[string]any{"name": strings.Repeat("n", 121)}, 422, []string{"name"}},
		{"too many contacts", "/v1/audiences", map[string]any{"name": "x", "contacts": many}, 422, []string{"contacts"}},
		{"malformed to", "/v1/audiences", map[string]any{"name": "x", "contacts": []any{
			map[string]any{"to": "+15550400001"}, map[string]any{"to": "555-0100"}, map[string]any{}}}, 422,
			[]string{"contacts[1].to", "contacts[2].to"}},
		{"bad variable key", "/v1/audiences", map[string]any{"name": "x", "contacts": []any{
			map[string]any{"to": "+15550400001", "variables": map[string]any{"first-name": "a", "9x": "b"}}}}, 422,
			[]string{"contacts[0].variables.9x", "contacts[0].variables.first-name"}},
		{"too many variables", "/v1/audiences", map[string]any{"name": "x", "contacts": []any{
			map[string]any{"to": "+15550400001", "variables": tooMany}}}, 422, []string{"contacts[0].variables"}},
		{"long value", "/v1/audiences", map[string]any{"name": "x", "contacts": []any{
			map[string]any{"to": "+15550400001", "variables": map[string]any{"a": strings.Repeat("v", 1025)}}}}, 422,
			[]string{"contacts[0].variables.a"}},
		{"keys equal ignoring case", "/v1/audiences", map[string]any{"name": "x", "contacts": []any{
			map[string]any{"to": "+15550400001", "variables": map[string]any{"Plan": "a", "plan": "b"}}}}, 422,
			[]string{"contacts[0].variables.plan"}},
		{"non-string variable", "/v1/audiences", map[string]any{"name": "x", "contacts": []any{
			map[string]any{"to": "+15550400001", "variables": map[string]any{"a": 1}}}}, 400, []string{"contacts.variables"}},
		{"unknown field", "/v1/audiences", map[string]any{"name": "x", "color": "red"}, 400, []string{"color"}},
		{"append nothing", "/v1/audiences/" + aud["id"].(string) + "/contacts", map[string]any{"contacts": []any{}}, 422, []string{"contacts"}},
		{"append no list", "/v1/audiences/" + aud["id"].(string) + "/contacts", map[string]any{}, 422, []string{"contacts"}},
		{"append too many", "/v1/audiences/" + aud["id"].(string) + "/contacts", map[string]any{"contacts": many}, 422, []string{"contacts"}},
		{"append unknown audience", "/v1/audiences/aud_unknown/contacts", map[string]any{"contacts": []any{map[string]any{"to": "+15550400001"}}}, 404, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do("POST", tc.path, e.Key, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Raw)
			}
			got := r.DetailPaths()
			if diff := cmp.Diff(tc.paths, got); tc.paths != nil && diff != "" {
				t.Errorf("detail paths (-want +got):\n%s\n%s", diff, r.Raw)
			}
		})
	}
	if n := e.Do("GET", "/v1/audiences", e.Key, nil).Body["total"]; n != 1.0 {
		t.Errorf("%v audiences stored, want only the valid one", n)
	}
	if n := e.App.Client.AudienceContact.Query().CountX(systemCtx()); n != 0 {
		t.Errorf("%d contacts stored by refused requests", n)
	}
}

// Keys need audiences:read to read and audiences:write to change; another
// workspace sees nothing of them.
func TestAudienceScopesAndTenants(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "mine", "contacts": phones(1, 2)})
	id := aud["id"].(string)
	reader := e.NewKey("default", "audiences:read")
	if r := e.Do("GET", "/v1/audiences/"+id, reader, nil); r.Status != 200 {
		t.Errorf("reader get: %d", r.Status)
	}
	if r := e.Do("POST", "/v1/audiences", reader, map[string]any{"name": "x"}); r.Status != 403 {
		t.Errorf("reader create: %d", r.Status)
	}
	writer := e.NewKey("default", "audiences:write")
	if r := e.Do("GET", "/v1/audiences", writer, nil); r.Status != 403 {
		t.Errorf("writer list: %d", r.Status)
	}
	other := e.NewKey("other", "*")
	for _, r := range audienceRoutes(id) {
		if got := e.Do(r.method, r.path, other, r.body); got.Status != 404 {
			t.Errorf("other workspace %s %s: %d %s", r.method, r.path, got.Status, got.Raw)
		}
	}
	if r := e.Do("GET", "/v1/audiences", other, nil); r.Body["total"] != 0.0 {
		t.Errorf("other workspace lists %s", r.Raw)
	}
	if r := e.Do("POST", "/v1/campaigns", other, map[string]any{"name": "x", "audienceId": id, "text": "hi"}); r.Status != 404 {
		t.Errorf("campaign on another workspace's audience: %d %s", r.Status, r.Raw)
	}
	if n := e.Do("GET", "/v1/audiences/"+id, e.Key, nil).Data()["contactCount"]; n != 2.0 {
		t.Errorf("contactCount = %v after the other workspace's attempts", n)
	}
}

type route struct {
	method, path string
	body         any
}

// audienceRoutes are the operations on audience id, each with a valid body.
func audienceRoutes(id string) []route {
	return []route{
		{"GET", "/v1/audiences/" + id, nil},
		{"PATCH", "/v1/audiences/" + id, map[string]any{"name": "x"}},
		{"DELETE", "/v1/audiences/" + id, nil},
		{"POST", "/v1/audiences/" + id + "/contacts", map[string]any{"contacts": []any{map[string]any{"to": "+15550300005"}}}},
	}
}
