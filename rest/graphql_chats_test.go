package rest_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
)

// dig walks data down keys (object fields, or list indexes as ints).
func dig(data any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := data.(map[string]any)
			data = m[k]
		case int:
			l, _ := data.([]any)
			if k >= len(l) {
				return nil
			}
			data = l[k]
		}
	}
	return data
}

// gqlData runs a query that must succeed and returns its data.
func gqlData(t *testing.T, e *apptest.Env, query string, vars map[string]any) map[string]any {
	t.Helper()
	res := gql(e, e.Key, query, vars)
	if len(res.Errors) > 0 {
		t.Fatalf("%s: errors %+v", query, res.Errors)
	}
	return res.Data
}

// The conversation surface of GraphQL answers what REST answers: the same
// totals under the same filters, through the same core.
func TestGraphQLConversationTotalsMatchREST(t *testing.T) {
	e := newEnv(t)
	group := e.Do("GET", "/v1/chats?filter=groups&includeArchive=true&limit=1", e.Key, nil).List()[0]["chatId"].(string)
	contact := e.Do("GET", "/v1/chats?filter=contacts&includeWithoutName=true&limit=1", e.Key, nil).List()[0]["chatId"].(string)
	news := e.Do("GET", "/v1/newsletters?limit=1", e.Key, nil).List()[0]["chatId"].(string)
	for _, tc := range []struct {
		name, query string
		path        []any
		rest        string
	}{
		{"chatList by kind", `{ chatList(filter: {filter: "groups", includeArchive: true}, limit: 1) { total } }`,
			[]any{"chatList", "total"}, "/v1/chats?filter=groups&includeArchive=true&limit=1"},
		{"chatList non-archived with names", `{ chatList(limit: 1) { total } }`,
			[]any{"chatList", "total"}, "/v1/chats?limit=1"},
		{"chatConnection by kind", `{ chatConnection(first: 1, where: {kind: group}) { totalCount } }`,
			[]any{"chatConnection", "totalCount"}, "/v1/chats?filter=groups&includeArchive=true&limit=1"},
		{"storedMessages by type", `{ storedMessages(filter: {messageTypes: ["image", "chat"]}, limit: 1) { total } }`,
			[]any{"storedMessages", "total"}, "/v1/messages?messageTypes=image,chat&limit=1"},
		{"storedMessages of a chat, mine", fmt.Sprintf(`{ storedMessages(filter: {chatId: %q, sender: "me"}) { total } }`, contact),
			[]any{"storedMessages", "total"}, "/v1/messages?sender=me&chatId=" + contact},
		{"a chat's messageConnection by wire type", fmt.Sprintf(`{ chatConnection(first: 1, where: {jid: %q}) {
			edges { node { messageConnection(first: 1, where: {wireType: "chat"}) { totalCount } } } } }`, contact),
			[]any{"chatConnection", "edges", 0, "node", "messageConnection", "totalCount"}, "/v1/messages?messageTypes=chat&chatId=" + contact},
		{"contactList", `{ contactList(limit: 1) { total } }`, []any{"contactList", "total"}, "/v1/contacts?limit=1"},
		{"contactList search", `{ contactList(searchToken: "1", limit: 1) { total } }`,
			[]any{"contactList", "total"}, "/v1/contacts?searchToken=1&limit=1"},
		{"contactConnection", `{ contactConnection(first: 1) { totalCount } }`, []any{"contactConnection", "totalCount"}, "/v1/contacts?limit=1"},
		{"newsletterList", `{ newsletterList(limit: 1) { total } }`, []any{"newsletterList", "total"}, "/v1/newsletters?limit=1"},
		{"commonGroups", fmt.Sprintf(`{ commonGroups(contactId: %q) { total } }`, firstMember(t, e, group)),
			[]any{"commonGroups", "total"}, "/v1/contacts/" + firstMember(t, e, group) + "/common_groups"},
		{"chatParticipants", fmt.Sprintf(`{ chatParticipants(chatId: %q) { total } }`, group),
			[]any{"chatParticipants", "total"}, "/v1/chats/" + group + "/participants"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dig(gqlData(t, e, tc.query, nil), tc.path...)
			want := float64(total(t, e.Do("GET", tc.rest, e.Key, nil)))
			if diff := cmp.Diff(want, got); diff != "" || want == 0 {
				t.Errorf("GraphQL total differs from REST %s (-rest +graphql):\n%s", tc.rest, diff)
			}
		})
	}
	d := gqlData(t, e, `query($id: String!) { newsletter(id: $id) { jid kind } chat(id: $id) { jid } }`, map[string]any{"id": news})
	if diff := cmp.Diff(map[string]any{"newsletter": map[string]any{"jid": news, "kind": "newsletter"}, "chat": map[string]any{"jid": news}}, d); diff != "" {
		t.Errorf("newsletter (-want +got):\n%s", diff)
	}
}

func firstMember(t *testing.T, e *apptest.Env, group string) string {
	t.Helper()
	return e.Do("GET", "/v1/chats/"+group+"/participants?limit=1", e.Key, nil).List()[0]["chatId"].(string)
}

// A GraphQL chat message carries the message it quotes, as REST renders it, in
// latestChats, storedMessages and a chat's message connection alike.
func TestGraphQLMessagesCarryTheirQuotedMessage(t *testing.T) {
	e := newEnv(t)
	// REST's replies and what they quote, by key.
	restQuotes := map[string]map[string]any{}
	for _, m := range e.Do("GET", "/v1/messages?messageTypes=chat&limit=200", e.Key, nil).List() {
		if q, ok := m["quotedMessage"].(map[string]any); ok {
			restQuotes[m["waMessageKey"].(map[string]any)["_serialized"].(string)] = q
		}
	}
	if len(restQuotes) == 0 {
		t.Fatal("no REST reply carries quotedMessage")
	}
	const fields = `waMessageKey { serialized } quotedMessage { waMessageKey { serialized fromMe } text type author }`
	// One query each: together they would pass the complexity bound.
	d := map[string]any{}
	for _, q := range []string{
		`{ storedMessages(filter: {messageTypes: ["chat"]}, limit: 200) { items { ` + fields + ` } } }`,
		`{ latestChats(numberOfChats: 20, numberOfMessages: 20) { chats { messages { ` + fields + ` } } } }`,
		`{ chatConnection(first: 10) { edges { node { messageConnection(first: 40) { edges { node { ` + fields + ` } } } } } } }`,
	} {
		for k, v := range gqlData(t, e, q, nil) {
			d[k] = v
		}
	}
	// rendered turns a GraphQL quotedMessage into REST's shape.
	rendered := func(q map[string]any) map[string]any {
		out := map[string]any{"waMessageKey": map[string]any{"_serialized": dig(q, "waMessageKey", "serialized")}}
		for _, f := range []string{"text", "type", "author"} {
			if q[f] != nil {
				out[f] = q[f]
			}
		}
		return out
	}
	restShape := func(q map[string]any) map[string]any {
		out := map[string]any{"waMessageKey": map[string]any{"_serialized": dig(q, "waMessageKey", "_serialized")}}
		for _, f := range []string{"text", "type", "author"} {
			if q[f] != nil {
				out[f] = q[f]
			}
		}
		return out
	}
	var all []any
	all = append(all, dig(d, "storedMessages", "items").([]any)...)
	for _, c := range dig(d, "latestChats", "chats").([]any) {
		all = append(all, dig(c, "messages").([]any)...)
	}
	for _, c := range dig(d, "chatConnection", "edges").([]any) {
		for _, m := range dig(c, "node", "messageConnection", "edges").([]any) {
			all = append(all, dig(m, "node"))
		}
	}
	checked := 0
	for _, m := range all {
		key, _ := dig(m, "waMessageKey", "serialized").(string)
		q, _ := dig(m, "quotedMessage").(map[string]any)
		want, isReply := restQuotes[key]
		switch {
		case isReply && q == nil:
			t.Errorf("%s: GraphQL has no quotedMessage, REST has %v", key, want)
		case isReply:
			checked++
			if diff := cmp.Diff(restShape(want), rendered(q)); diff != "" {
				t.Errorf("%s: quotedMessage differs (-rest +graphql):\n%s", key, diff)
			}
		}
	}
	if checked == 0 {
		t.Errorf("no GraphQL reply compared with REST")
	}
}

// Bad input and scopes answer the codes REST answers, naming the field.
func TestGraphQLConversationErrors(t *testing.T) {
	e := newEnv(t)
	reader := e.NewKey("default", "messages:read")
	for _, tc := range []struct {
		name, key, query string
		code             string
		paths            []any
	}{
		{"unknown kind", e.Key, `{ chatList(filter: {kinds: ["robot"]}) { total } }`, "invalid_request", []any{"kinds.0"}},
		{"since after until", e.Key, `{ storedMessages(filter: {since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z"}) { total } }`,
			"invalid_request", []any{"since"}},
		{"unknown message type", e.Key, `{ storedMessages(filter: {messageTypes: ["telegram"]}) { total } }`, "invalid_request", []any{"messageTypes.0"}},
		{"latestChats bound", e.Key, `{ latestChats(numberOfChats: 0) { totalChats } }`, "invalid_request", []any{"numberOfChats"}},
		{"malformed chat id", e.Key, `{ chat(id: "not-a-jid") { jid } }`, "invalid_request", []any{"id"}},
		{"unknown chat", e.Key, `{ chat(id: "1@c.us") { jid } }`, "not_found", []any{"id"}},
		{"newsletter id of a contact", e.Key, `{ newsletter(id: "1@c.us") { jid } }`, "invalid_request", []any{"id"}},
		{"no chats:read", reader, `{ latestChats { totalChats } }`, "insufficient_scope", nil},
		{"no chats:read for the connection", reader, `{ chatConnection { totalCount } }`, "insufficient_scope", nil},
		{"no contacts:read", reader, `{ contactList { total } }`, "insufficient_scope", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := gql(e, tc.key, tc.query, nil)
			if len(res.Errors) != 1 {
				t.Fatalf("errors = %+v", res.Errors)
			}
			ext := res.Errors[0].Extensions
			var paths []any
			if tc.paths != nil {
				for _, d := range ext["details"].([]any) {
					paths = append(paths, d.(map[string]any)["path"])
				}
			}
			if diff := cmp.Diff(tc.code, ext["code"]); diff != "" {
				t.Errorf("code (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.paths, paths); diff != "" {
				t.Errorf("detail paths (-want +got):\n%s", diff)
			}
		})
	}
	// A chat is a node, for the keys that read chats.
	id := dig(gqlData(t, e, `{ chatConnection(first: 1) { edges { node { id } } } }`, nil), "chatConnection", "edges", 0, "node", "id")
	d := gqlData(t, e, `query($id: ID!) { node(id: $id) { ... on Chat { id jid } } }`, map[string]any{"id": id})
	if dig(d, "node", "id") != id {
		t.Errorf("node(chat) = %v", d)
	}
	if res := gql(e, reader, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}); len(res.Errors) != 1 ||
		res.Errors[0].Extensions["code"] != "insufficient_scope" {
		t.Errorf("node(chat) without chats:read = %+v", res)
	}
}
