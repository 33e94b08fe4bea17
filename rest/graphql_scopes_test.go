package rest_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/graph"
)

// refusedFor reports why res is not the refusal of a key lacking scope (for
// field, when not empty): one insufficient_scope error naming both, no data.
func refusedFor(res gqlResult, scope, field string) string {
	if len(res.Errors) != 1 {
		return fmt.Sprintf("%d errors, want 1: %+v", len(res.Errors), res.Errors)
	}
	err := res.Errors[0]
	switch {
	case err.Extensions["code"] != switchboard.EFORBIDDEN:
		return fmt.Sprintf("code %v, want %s: %s", err.Extensions["code"], switchboard.EFORBIDDEN, err.Message)
	case !strings.Contains(err.Message, " "+scope+" ") || !strings.Contains(err.Message, field):
		return fmt.Sprintf("message %q names neither %s nor %s", err.Message, scope, field)
	case res.Data != nil:
		return fmt.Sprintf("data %v: the operation ran", res.Data)
	}
	return ""
}

// The edges of the issue: a key reads another resource through a nested field
// only with that resource's scope, and message content only with chats:read.
func TestGraphQLEdgesNeedTheirScope(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "edges", "contacts": phones(700, 2)})
	c := createCampaign(e, e.Key, map[string]any{"name": "Secret plan", "audienceId": aud["id"], "text": "hello",
		"pacing": map[string]any{"minDelaySeconds": 0, "maxDelaySeconds": 0}})
	waitCampaign(e, c["cmpId"].(string), "complete_delivered")
	// A queued reply to a message of the store: the queue holds its key, the store
	// what it says.
	stored := e.Do("GET", "/v1/messages?messageTypes=chat&limit=1", e.Key, nil).List()[0]
	quoted := stored["text"].(string)
	schedule(e, stored["chatId"].(string), map[string]any{"type": "text", "text": "re", "replyTo": dig(stored, "waMessageKey", "_serialized"),
		"sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	for _, tc := range []struct {
		name   string
		scopes []string
		query  string
		// scope and field of the refusal; "" when the query must be answered
		scope, field string
	}{
		{"campaigns through the store's messages", []string{"chats:read"},
			`{ messages(first: 10, where: {hasCampaign: true}) { edges { node { id campaign { name text } } } } }`,
			"campaigns:read", "Message.campaign"},
		{"campaigns through the queue", []string{"messages:read"},
			`{ scheduledMessages(limit: 10) { items { campaign { name messages(first: 5) { edges { node { text } } } } } } }`,
			"campaigns:read", "Message.campaign"},
		{"a campaign's messages", []string{"campaigns:read"},
			`{ campaignList { items { name messages(first: 5) { edges { node { text to } } } } } }`,
			"messages:read", "Campaign.messages"},
		{"message text through a group's chat", []string{"groups:read"},
			`{ groupList(limit: 5) { items { chat { lastMessageText } } } }`,
			"chats:read", "Group.chat"},
		{"message text of common groups", []string{"groups:read"},
			`{ commonGroups(contactId: "+15550100001") { items { name lastMessageText } } }`,
			"chats:read", "Chat.lastMessageText"},
		{"messages of a newsletter", []string{"newsletters:read"},
			`{ newsletterList(limit: 5) { items { messageConnection(first: 5) { edges { node { text } } } } } }`,
			"chats:read", "Chat.messageConnection"},
		{"what a queued reply quotes", []string{"messages:read"},
			`{ scheduledMessages(limit: 10) { items { quotedMessage { text } } } }`,
			"chats:read", "Message.quotedMessage"},
		{"an audience through its contacts", []string{"audiences:write"},
			`mutation { updateAudienceContact(id: "aud_x", contactId: "acn_x", input: {}) { audience { name } } }`,
			"audiences:read", "AudienceContact.audience"},

		{"a group's own fields", []string{"groups:read"}, `{ groupList(limit: 5) { items { id name participants { chatId } } } }`, "", ""},
		{"newsletters without their messages", []string{"newsletters:read"}, `{ newsletterList(limit: 5) { items { jid name } } }`, "", ""},
		{"campaigns of the store's messages", []string{"chats:read", "campaigns:read"},
			`{ messages(first: 10, where: {hasCampaign: true}) { edges { node { campaign { name } } } } }`, "", ""},
		{"a campaign's messages with the queue's scope", []string{"campaigns:read", "messages:read"},
			`{ campaignList { items { messages(first: 5) { edges { node { text campaign { name } } } } } } }`, "", ""},
		{"a chat's last message with chats:read", []string{"chats:read"}, `{ chatList(limit: 5) { items { lastMessageText } } }`, "", ""},
		{"what a stored reply quotes", []string{"chats:read"},
			`{ storedMessages(limit: 5) { items { quotedMessage { text } } } }`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := gql(e, e.NewKey("default", tc.scopes...), tc.query, nil)
			if tc.scope != "" {
				if why := refusedFor(res, tc.scope, tc.field); why != "" {
					t.Errorf("%s with %v: %s", tc.query, tc.scopes, why)
				}
				return
			}
			if len(res.Errors) > 0 {
				t.Errorf("%s with %v: %+v", tc.query, tc.scopes, res.Errors)
			}
		})
	}
	// With the scopes, the campaign and the quoted text are there to read.
	res := gql(e, e.NewKey("default", "chats:read", "campaigns:read"),
		`{ messages(first: 10, where: {hasCampaign: true}) { edges { node { campaign { name } } } } }`, nil)
	if got := dig(res.Data, "messages", "edges", 0, "node", "campaign", "name"); got != "Secret plan" {
		t.Errorf("campaign of a message = %v (%+v)", got, res.Errors)
	}
	res = gql(e, e.NewKey("default", "messages:read", "chats:read"), `{ scheduledMessages(limit: 1) { items { quotedMessage { text } } } }`, nil)
	if got := dig(res.Data, "scheduledMessages", "items", 0, "quotedMessage", "text"); got != quoted {
		t.Errorf("quoted text = %v, want %q (%+v)", got, quoted, res.Errors)
	}
}

// TestGraphQLEveryEdgeChecksItsScope walks the schema: for every field that leads
// from one resource into another (and every field carrying another resource's
// data), a query that reaches it with a key holding every scope but the one it
// needs is refused before it runs, and the same query with every scope is not
// refused for a scope. A new edge is in this walk as soon as it is in the schema.
func TestGraphQLEveryEdgeChecksItsScope(t *testing.T) {
	e := newEnv(t)
	s := graph.NewExecutableSchema(graph.Config{}).Schema()
	keys := map[string]string{} // scope -> a key with every other
	keyWithout := func(scope string) string {
		if k, ok := keys[scope]; ok {
			return k
		}
		var scopes []string
		for _, sc := range switchboard.KnownScopes {
			if sc != scope && sc != switchboard.ScopeOperator {
				scopes = append(scopes, sc)
			}
		}
		keys[scope] = e.NewKey("default", scopes...)
		return keys[scope]
	}
	checked := 0
	for _, f := range scopedFields(s) {
		t.Run(f.typ+"."+f.field, func(t *testing.T) {
			op, query, ok := reach(s, f, true)
			field := f.typ + "." + f.field
			if !ok {
				// Every path to it follows another field that needs the scope: the
				// refusal is that field's.
				if op, query, ok = reach(s, f, false); !ok {
					t.Fatalf("no root field reaches %s", field)
				}
				field = ""
			}
			checked++
			t.Logf("%s (without %s)", query, f.scope)
			if why := refusedFor(gql(e, keyWithout(f.scope), query, nil), f.scope, field); why != "" {
				t.Errorf("%s without %s: %s", query, f.scope, why)
			}
			if op != "query" {
				return // a mutation with every scope would run
			}
			for _, err := range gql(e, e.Key, query, nil).Errors {
				if err.Extensions["code"] == switchboard.EFORBIDDEN {
					t.Errorf("%s with every scope: %s", query, err.Message)
				}
			}
		})
	}
	if checked < 10 {
		t.Errorf("only %d scoped fields checked", checked)
	}
}

// scopedField is a field of typ that needs scope: an edge into another resource,
// or a field that carries another resource's data.
type scopedField struct {
	typ, field, scope string
}

// scopedFields lists the scoped fields of the schema, in a stable order.
func scopedFields(s *ast.Schema) []scopedField {
	var out []scopedField
	for name, d := range s.Types {
		if d.Kind != ast.Object || strings.HasPrefix(name, "__") || name == "Query" || name == "Mutation" {
			continue
		}
		from, _ := graph.ResourceOf(name)
		for _, f := range d.Fields {
			if scope := graph.DataScope(name, f.Name); scope != "" {
				out = append(out, scopedField{name, f.Name, scope})
				continue
			}
			if to, _ := graph.ResourceOf(f.Type.Name()); to != "" && to != from {
				out = append(out, scopedField{name, f.Name, graph.EdgeScope(name, f.Name, to)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].typ+"."+out[i].field < out[j].typ+"."+out[j].field })
	return out
}

// step is one field of a path from a root field.
type step struct {
	field *ast.FieldDefinition
	// resource is the resource read once the field is followed.
	resource string
}

// reach builds an operation that reads f.field of f.typ through the shortest
// path from a root field (a query when one reaches it); when apart, one that
// follows no other field needing f.scope (a root field's is its @scope), so that
// the refusal is f's own.
func reach(s *ast.Schema, f scopedField, apart bool) (op, query string, ok bool) {
	for _, root := range []string{"Query", "Mutation"} {
		type state struct {
			typ, resource string
			path          []step
		}
		var queue []state
		seen := map[string]bool{}
		for _, rf := range s.Types[root].Fields {
			if strings.HasPrefix(rf.Name, "__") || s.Types[rf.Type.Name()].Kind != ast.Object {
				continue
			}
			if needs, _ := graph.DeclaredScope(rf); apart && needs == f.scope {
				continue
			}
			res, _ := graph.ResourceOf(rf.Type.Name())
			queue = append(queue, state{rf.Type.Name(), res, []step{{rf, res}}})
		}
		for len(queue) > 0 {
			st := queue[0]
			queue = queue[1:]
			if seen[st.typ+"/"+st.resource] {
				continue
			}
			seen[st.typ+"/"+st.resource] = true
			if st.typ == f.typ {
				target := s.Types[f.typ].Fields.ForName(f.field)
				return strings.ToLower(root), render(strings.ToLower(root), s, append(st.path, step{target, ""})), true
			}
			for _, next := range s.Types[st.typ].Fields {
				d := s.Types[next.Type.Name()]
				if strings.HasPrefix(next.Name, "__") || d.Kind != ast.Object {
					continue
				}
				res, _ := graph.ResourceOf(next.Type.Name())
				needs := graph.DataScope(st.typ, next.Name)
				if res != "" && res != st.resource {
					needs = graph.EdgeScope(st.typ, next.Name, res)
				} else {
					res = st.resource
				}
				if apart && needs == f.scope {
					continue
				}
				path := append(append([]step(nil), st.path...), step{next, res})
				queue = append(queue, state{next.Type.Name(), res, path})
			}
		}
	}
	return "", "", false
}

// render writes path as an operation, with a made-up value for every required
// argument and __typename under the last field when it is an object.
func render(op string, s *ast.Schema, path []step) string {
	var b strings.Builder
	b.WriteString(op + " { ")
	for _, st := range path {
		b.WriteString(st.field.Name)
		var args []string
		for _, a := range st.field.Arguments {
			if a.Type.NonNull && a.DefaultValue == nil {
				args = append(args, a.Name+": "+literal(s, a.Type, 0))
			}
		}
		if len(args) > 0 {
			b.WriteString("(" + strings.Join(args, ", ") + ")")
		}
		b.WriteString(" { ")
	}
	q := strings.TrimSuffix(b.String(), " { ")
	if last := path[len(path)-1].field; s.Types[last.Type.Name()].Kind == ast.Object {
		q += " { __typename }"
	}
	return q + strings.Repeat(" }", len(path))
}

// literal is a GraphQL value of type t.
func literal(s *ast.Schema, t *ast.Type, depth int) string {
	if t.Elem != nil {
		return "[" + literal(s, t.Elem, depth) + "]"
	}
	d := s.Types[t.Name()]
	switch {
	case d.Kind == ast.Enum:
		return d.EnumValues[0].Name
	case d.Kind == ast.InputObject:
		var fields []string
		for _, f := range d.Fields {
			if f.Type.NonNull && f.DefaultValue == nil && depth < 8 {
				fields = append(fields, f.Name+": "+literal(s, f.Type, depth+1))
			}
		}
		return "{" + strings.Join(fields, ", ") + "}"
	}
	switch t.Name() {
	case "Int", "Float":
		return "1"
	case "Boolean":
		return "true"
	}
	return `"x"`
}
