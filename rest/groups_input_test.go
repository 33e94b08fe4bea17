package rest_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// Bad input is a 400, 404, 409 or 422 naming the field, never a 500, and changes
// nothing; keys need the groups scopes; a workspace sees only its own groups.
func TestGroupBadInputScopesAndTenants(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Mine", "participants": []string{"+15550401001"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	id := r.Data()["id"].(string)
	before := total(t, e.Do("GET", "/v1/groups?includeArchive=true&limit=1", e.Key, nil))
	long := strings.Repeat("n", 101)
	bigImage := make([]byte, 20<<20+1)
	copy(bigImage, "\x89PNG\r\n\x1a\n")
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.png":
			_, _ = w.Write(bigImage)
		case "/ok.png":
			_, raw := pngDataURL(t, 8, 8)
			_, _ = w.Write(raw)
		default:
			http.NotFound(w, r)
		}
	}))
	defer images.Close()
	pic, raw := pngDataURL(t, 8, 8)
	for _, tc := range []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"group id of a contact", "GET", "/v1/groups/123@c.us", nil, "400 invalid_request id:invalid_string"},
		{"group id of nothing", "GET", "/v1/groups/abc", nil, "400 invalid_request id:invalid_string"},
		{"unknown group", "GET", "/v1/groups/120363999999999999@g.us", nil, "404 not_found id:not_found"},
		{"unknown include", "GET", "/v1/groups/" + id + "?include=members", nil, "400 invalid_request include:invalid_enum_value"},
		{"search too long", "GET", "/v1/groups?searchToken=" + strings.Repeat("x", 129), nil, "400 invalid_request searchToken:too_big"},
		{"limit", "GET", "/v1/groups?limit=201", nil, "400 invalid_request limit:too_big"},
		{"no body", "POST", "/v1/groups", nil, "400 invalid_request body:invalid_type"},
		{"no name", "POST", "/v1/groups", map[string]any{"participants": []string{"+15550401001"}}, "422 validation_failed name:invalid_type"},
		{"no participants", "POST", "/v1/groups", map[string]any{"name": "x"}, "422 validation_failed participants:invalid_type"},
		{"empty name", "POST", "/v1/groups", map[string]any{"name": "  ", "participants": []string{"+15550401001"}}, "422 validation_failed name:too_small"},
		{"long name", "POST", "/v1/groups", map[string]any{"name": long, "participants": []string{"+15550401001"}}, "422 validation_failed name:too_big"},
		{"not E.164", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"5550401001"}}, "422 validation_failed participants.0:invalid_string"},
		{"a group as participant", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{id}}, "422 validation_failed participants.0:invalid_string"},
		{"twice", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"+15550401001", "15550401001@c.us"}}, "422 validation_failed participants.1:duplicate"},
		{"none", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{}}, "422 validation_failed participants:too_big"},
		{"unknown field", "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"+15550401001"}, "topic": "y"}, "400 invalid_request topic:unrecognized_keys"},
		{"update nothing", "PATCH", "/v1/groups/" + id, map[string]any{}, "422 validation_failed body:too_small"},
		{"update long description", "PATCH", "/v1/groups/" + id, map[string]any{"settings": map[string]any{"description": strings.Repeat("d", 2049)}}, "422 validation_failed settings.description:too_big"},
		{"update contradiction", "PATCH", "/v1/groups/" + id, map[string]any{"settings": map[string]any{"restrict": true, "editInfoAdminsOnly": false}}, "422 validation_failed settings.editInfoAdminsOnly:invalid_value"},
		{"update empty name", "PATCH", "/v1/groups/" + id, map[string]any{"name": ""}, "422 validation_failed name:too_small"},
		{"update unknown", "PATCH", "/v1/groups/120363999999999999@g.us", map[string]any{"name": "x"}, "404 not_found id:not_found"},
		{"add not E.164", "POST", "/v1/groups/" + id + "/members", map[string]any{"participants": []string{"+1"}}, "422 validation_failed participants.0:invalid_string"},
		{"add both", "POST", "/v1/groups/" + id + "/members", map[string]any{"chatId": "+15550401002", "participants": []string{"+15550401003"}}, "422 validation_failed chatId:invalid_union"},
		{"add nobody", "POST", "/v1/groups/" + id + "/members", map[string]any{}, "422 validation_failed participants:invalid_type"},
		{"add to unknown", "POST", "/v1/groups/120363999999999999@g.us/members", map[string]any{"chatId": "+15550401002"}, "404 not_found id:not_found"},
		{"remove bad chatId", "DELETE", "/v1/groups/" + id + "/members/abc", nil, "400 invalid_request chatId:invalid_string"},
		{"promote bad chatId", "POST", "/v1/groups/" + id + "/members/" + id + "/admin", nil, "400 invalid_request chatId:invalid_string"},
		{"leave bad id", "DELETE", "/v1/groups/1@newsletter/members/me", nil, "400 invalid_request id:invalid_string"},
		{"leave unknown", "DELETE", "/v1/groups/120363999999999999@g.us/members/me", nil, "404 not_found id:not_found"},
		{"picture none", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileName": "a.png"}, "422 validation_failed fileDataUrl:invalid_type"},
		{"picture both", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": pic, "url": images.URL + "/ok.png"}, "422 validation_failed body:invalid_union"},
		{"picture not an image", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello, not a picture"))}, "422 validation_failed fileDataUrl:not_an_image"},
		{"picture truncated", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": base64.StdEncoding.EncodeToString(raw[:len(raw)-20])}, "422 validation_failed fileDataUrl:not_an_image"},
		{"picture not base64", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": "data:image/png;base64,***"}, "422 validation_failed fileDataUrl:invalid_string"},
		{"picture too big", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"url": images.URL + "/big.png"}, "422 validation_failed url:too_big"},
		{"picture url 404", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"url": images.URL + "/gone.png"}, "422 validation_failed url:fetch_failed"},
		{"picture wrong type", "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": pic, "fileMimeType": "image/gif"}, "422 validation_failed fileMimeType:invalid_enum_value"},
		{"picture of unknown", "PUT", "/v1/groups/120363999999999999@g.us/picture", map[string]any{"fileDataUrl": pic}, "404 not_found id:not_found"},
	} {
		if r := e.Do(tc.method, tc.path, e.Key, tc.body); errorOf(r) != tc.want {
			t.Errorf("%s: %s, want %s (%s)", tc.name, errorOf(r), tc.want, r.Raw)
		}
	}
	if r := e.Do("PUT", "/v1/groups/"+id+"/picture", e.Key, map[string]any{"url": images.URL + "/ok.png"}); r.Status != 200 {
		t.Errorf("picture by url: %d %s", r.Status, r.Raw)
	}
	if n := total(t, e.Do("GET", "/v1/groups?includeArchive=true&limit=1", e.Key, nil)); n != before {
		t.Errorf("groups after bad input: %d, want %d", n, before)
	}
	if g := e.Do("GET", "/v1/groups/"+id+"?include=participants", e.Key, nil).Data(); g["name"] != "Mine" || g["participantCount"].(float64) != 2 {
		t.Errorf("the group changed on bad input: %v", g)
	}

	// Scopes.
	read := e.NewKey("default", "groups:read")
	none := e.NewKey("default", "chats:read")
	for _, tc := range []struct {
		key, method, path string
		body              any
		want              int
	}{
		{read, "GET", "/v1/groups", nil, 200},
		{read, "GET", "/v1/groups/" + id, nil, 200},
		{read, "POST", "/v1/groups", map[string]any{"name": "x", "participants": []string{"+15550401001"}}, 403},
		{read, "PATCH", "/v1/groups/" + id, map[string]any{"name": "x"}, 403},
		{read, "POST", "/v1/groups/" + id + "/members", map[string]any{"chatId": "+15550401002"}, 403},
		{read, "DELETE", "/v1/groups/" + id + "/members/me", nil, 403},
		{read, "DELETE", "/v1/groups/" + id + "/members/+15550401001/admin", nil, 403},
		{read, "PUT", "/v1/groups/" + id + "/picture", map[string]any{"fileDataUrl": pic}, 403},
		{none, "GET", "/v1/groups", nil, 403},
		{none, "GET", "/v1/groups/" + id, nil, 403},
	} {
		if r := e.Do(tc.method, tc.path, tc.key, tc.body); r.Status != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.Status, tc.want)
		}
	}

	// Another workspace neither sees nor changes the group.
	other := e.NewKey("other", "*")
	if n := total(t, e.Do("GET", "/v1/groups?searchToken=Mine", other, nil)); n != 0 {
		t.Errorf("other workspace lists %d groups named Mine", n)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "", nil},
		{"PATCH", "", map[string]any{"name": "Theirs"}},
		{"POST", "/members", map[string]any{"chatId": "+15550401002"}},
		{"DELETE", "/members/+15550401001", nil},
		{"POST", "/members/+15550401001/admin", nil},
		{"DELETE", "/members/me", nil},
		{"PUT", "/picture", map[string]any{"fileDataUrl": pic}},
	} {
		if r := e.Do(tc.method, "/v1/groups/"+id+tc.path, other, tc.body); r.Status != 404 {
			t.Errorf("other workspace %s %s: %d %s", tc.method, tc.path, r.Status, r.Raw)
		}
	}
	if g := e.Do("GET", "/v1/groups/"+id+"?include=participants", e.Key, nil).Data(); g["name"] != "Mine" || g["participantCount"].(float64) != 2 {
		t.Errorf("another workspace changed the group: %v", g)
	}
}

// A picture URL is fetched only through the private-address guard.
func TestGroupPictureURLGuard(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.MediaAllowPrivate = false }})
	id := e.Do("POST", "/v1/groups", e.Key, map[string]any{"name": "Guarded", "participants": []string{"+15550401001"}}).Data()["id"].(string)
	fetched := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched = true }))
	defer srv.Close()
	for _, u := range []string{srv.URL + "/a.png", "https://127.0.0.1/a.png", "https://169.254.169.254/latest", "ftp://example.com/a.png"} {
		if r := e.Do("PUT", "/v1/groups/"+id+"/picture", e.Key, map[string]any{"url": u}); errorOf(r) != "422 validation_failed url:invalid_string" {
			t.Errorf("%s: %s", u, errorOf(r))
		}
	}
	if fetched {
		t.Errorf("a private address was fetched")
	}
}

// GraphQL has the same groups and mutations as REST.
func TestGroupsOverGraphQL(t *testing.T) {
	e := newEnv(t)
	gql := func(query string, vars map[string]any) map[string]any {
		t.Helper()
		r := e.Do("POST", "/graphql", e.Key, map[string]any{"query": query, "variables": vars})
		if r.Status != 200 || r.Body["errors"] != nil {
			t.Fatalf("graphql: %d %s", r.Status, r.Raw)
		}
		return r.Body["data"].(map[string]any)
	}
	d := gql(`mutation($p: [String!]!) { createGroup(name: "Graph", participants: $p) {
		group { id name owner participantCount participants { chatId isAdmin isSuperAdmin } }
		failedParticipants { participant code } } }`, map[string]any{"p": []string{"+15550401001", "+15550400000"}})
	res := d["createGroup"].(map[string]any)
	g := res["group"].(map[string]any)
	id := g["id"].(string)
	if g["participantCount"].(float64) != 2 || len(res["failedParticipants"].([]any)) != 1 {
		t.Fatalf("createGroup: %v", res)
	}
	rest := e.Do("GET", "/v1/groups/"+id+"?include=participants", e.Key, nil).Data()
	if diff := cmp.Diff(rest["participants"], g["participants"]); diff != "" {
		t.Errorf("participants: GraphQL and REST differ:\n%s", diff)
	}
	gql(`mutation($id: String!) { updateGroup(id: $id, input: {name: "Graph 2", announce: true}) { id } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { addGroupParticipants(id: $id, participants: ["+15550401002"]) { group { id } } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { promoteGroupParticipant(id: $id, participant: "+15550401002") { id } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { demoteGroupParticipant(id: $id, participant: "+15550401002") { id } }`, map[string]any{"id": id})
	gql(`mutation($id: String!) { removeGroupParticipant(id: $id, participant: "+15550401001") { id } }`, map[string]any{"id": id})
	d = gql(`query($id: String!) { group(id: $id) { name announce participantCount participants { chatId isAdmin } chat { kind } }
		groupList(searchToken: "Graph") { total items { id } } }`, map[string]any{"id": id})
	got := d["group"].(map[string]any)
	if got["name"] != "Graph 2" || got["announce"] != true || got["participantCount"].(float64) != 2 ||
		got["chat"].(map[string]any)["kind"] != "group" || d["groupList"].(map[string]any)["total"].(float64) != 1 {
		t.Errorf("group after mutations: %v", d)
	}
	// A list's participants (read for the whole page at once) are each group's own.
	list := gql(`{ groupList(limit: 200, includeArchive: true) { items { id participants { chatId name isAdmin isSuperAdmin } } } }`, nil)
	items := list["groupList"].(map[string]any)["items"].([]any)
	if len(items) < 3 {
		t.Fatalf("groupList: %v", list)
	}
	for _, it := range []any{items[0], items[len(items)/2], items[len(items)-1]} {
		it := it.(map[string]any)
		own := e.Do("GET", "/v1/groups/"+it["id"].(string)+"?include=participants", e.Key, nil).Data()
		for _, p := range it["participants"].([]any) { // REST leaves out a name it does not know
			if p := p.(map[string]any); p["name"] == nil {
				delete(p, "name")
			}
		}
		if diff := cmp.Diff(own["participants"], it["participants"]); diff != "" {
			t.Errorf("participants of %s: REST and groupList differ:\n%s", it["id"], diff)
		}
	}
	if d := gql(`mutation($id: String!) { leaveGroup(id: $id) }`, map[string]any{"id": id}); d["leaveGroup"] != true {
		t.Errorf("leaveGroup: %v", d)
	}
	r := e.Do("POST", "/graphql", e.Key, map[string]any{"query": `mutation($id: String!) { updateGroup(id: $id, input: {name: "x"}) { id } }`,
		"variables": map[string]any{"id": id}})
	errs, _ := r.Body["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "conflict" {
		t.Errorf("update after leaving over GraphQL: %s", r.Raw)
	}
}

// The groups the sandbox network keeps, and what their members plan, outlive a
// restart of Switchboard.
func TestGroupsOutliveARestart(t *testing.T) {
	dbURL := "sqlite://" + t.TempDir() + "/sb.db"
	cfg := func(c *app.Config) {
		c.DatabaseURL, c.RedisURL = dbURL, ""
		c.SandboxAckDelay = 500 * time.Millisecond
	}
	first := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	r := first.Do("POST", "/v1/groups", first.Key, map[string]any{"name": "Durable", "participants": []string{"+15550401001", "+15550403333"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	id := r.Data()["id"].(string)
	if r := first.Do("POST", "/v1/groups/"+id+"/members/+15550401001/admin", first.Key, nil); r.Status != 200 {
		t.Fatalf("promote: %d %s", r.Status, r.Raw)
	}
	first.Server.Close()
	first.App.Close() // before 3333 joined
	second := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: cfg})
	second.Key = first.Key
	second.Eventually(10*time.Second, "3333 joins after the restart", func() bool {
		return members(t, second, second.Key, id)["15550403333@c.us"] != nil
	})
	if r := second.Do("POST", "/v1/groups/"+id+"/members/+15550401001/admin", second.Key, nil); errorOf(r) != "409 conflict chatId:already_an_admin" {
		t.Errorf("promote again after the restart: %s", errorOf(r))
	}
}
