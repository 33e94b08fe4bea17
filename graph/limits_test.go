package graph

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/switchboardhq/switchboard/viewer"
)

// dashboardDocuments returns every GraphQL document of the dashboard's script,
// with the field lists it splices in.
func dashboardDocuments(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../dashboard/static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, m := range regexp.MustCompile(`var (\w+Fields) = "([^"]*)";`).FindAllStringSubmatch(js, -1) {
		js = strings.ReplaceAll(js, `" + `+m[1]+` + "`, m[2])
	}
	var docs []string
	for _, m := range regexp.MustCompile(`"((?:query|mutation)?(?:\([^"]*\))? ?\{ [^"]*\})"`).FindAllStringSubmatch(js, -1) {
		docs = append(docs, m[1])
	}
	if len(docs) < 20 {
		t.Fatalf("found %d documents in the dashboard's script", len(docs))
	}
	return docs
}

// The dashboard's own operations pass the limits with room to spare: depth,
// cost, and the scopes of a key with every scope.
func TestDashboardQueriesPassTheLimits(t *testing.T) {
	es := schemaForTest()
	ctx := context.Background()
	for _, doc := range dashboardDocuments(t) {
		q, err := gqlparser.LoadQuery(es.Schema(), doc)
		if err != nil {
			t.Errorf("%s: %v", doc, err)
			continue
		}
		for _, op := range q.Operations {
			if err := checkScopes(viewer.WorkspaceContext(ctx, "ws"), es.Schema(), op); err != nil {
				t.Errorf("%s: %v", doc, err)
			}
			if err := checkDepth(op); err != nil {
				t.Errorf("%s: %v", doc, err)
			}
			if d := (depths{fragments: map[string]int{}}).of(op.SelectionSet); d > MaxDepth/2 {
				t.Errorf("%s nests %d deep, near the limit of %d", doc, d, MaxDepth)
			}
			if cost := operationCost(ctx, es, op, nil); cost > MaxComplexity {
				t.Errorf("%s costs %d, more than %d", doc, cost, MaxComplexity)
			}
		}
	}
}

// The introspection query of graphql-js (what GraphiQL and the other consoles
// send) passes the depth limit; a longer ofType chain does not. (Introspection
// nested round its lists, fields { type { fields … } }, is refused by the
// validator's own rule.)
func TestIntrospectionDepth(t *testing.T) {
	es := schemaForTest()
	typeRef := "kind name"
	for i := 0; i < 9; i++ { // graphql-js has 7 levels; newer versions ask for more
		typeRef = "kind name ofType { " + typeRef + " }"
	}
	standard := `query IntrospectionQuery { __schema { queryType { name } mutationType { name } types { ...FullType }
		directives { name description locations args { ...InputValue } } } }
	fragment FullType on __Type { kind name description
		fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
		inputFields { ...InputValue } interfaces { ...TypeRef } enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
		possibleTypes { ...TypeRef } }
	fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
	fragment TypeRef on __Type { ` + typeRef + ` }`
	q, err := gqlparser.LoadQuery(es.Schema(), standard)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDepth(q.Operations[0]); err != nil {
		t.Errorf("the introspection query: %v", err)
	}
	if n := (sizes{fragments: map[string]int{}}).of(q.Operations[0].SelectionSet); n > MaxComplexity/10 {
		t.Errorf("the introspection query counts %d fields", n)
	}
	chain := "name"
	for i := 0; i < MaxIntrospectionDepth; i++ {
		chain = "ofType { " + chain + " }"
	}
	q, err = gqlparser.LoadQuery(es.Schema(), `{ __type(name: "Query") { `+chain+` } }`)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkDepth(q.Operations[0]); err == nil {
		t.Errorf("introspection %d levels deep passed", MaxIntrospectionDepth+2)
	}
}

// A latest chat's messages cost the page latestChats asked for (docs/conversations.md).
func TestLatestChatsMessagesCostTheirPage(t *testing.T) {
	es := schemaForTest()
	fields := []string{"id", "text", "type", "status", "fromMe", "createdAt", "to", "from", "senderName", "mediaURL", "mediaKind", "mediaFilename", "ack"}
	for _, tc := range []struct {
		args   string
		fields int
		ok     bool
	}{
		{"", 4, true},
		{"", 5, false},
		{"(numberOfChats: 20, numberOfMessages: 20)", 12, true},
		{"(numberOfChats: 20, numberOfMessages: 20)", 13, false},
		{"(numberOfChats: 200, numberOfMessages: 100)", 1, false},
		{"(numberOfChats: 1, numberOfMessages: 100)", 13, true},
	} {
		doc := "{ latestChats" + tc.args + " { chats { messages { " + strings.Join(fields[:tc.fields], " ") + " } } } }"
		q, err := gqlparser.LoadQuery(es.Schema(), doc)
		if err != nil {
			t.Fatal(err)
		}
		if cost := operationCost(context.Background(), es, q.Operations[0], nil); (cost <= MaxComplexity) != tc.ok {
			t.Errorf("%s costs %d", doc, cost)
		}
	}
}

// numberOfMessages given as a variable counts as given inline.
func TestLatestChatsMessagesFromAVariable(t *testing.T) {
	es := schemaForTest()
	q, err := gqlparser.LoadQuery(es.Schema(), `query($n: Int) { latestChats(numberOfChats: 1, numberOfMessages: $n) { chats { messages { id } } } }`)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []any{int64(100), json.Number("100"), 100.0, 100} {
		if cost := operationCost(context.Background(), es, q.Operations[0], map[string]any{"n": n}); cost != 1+1*(1+(1+100*1)) {
			t.Errorf("numberOfMessages %T: cost %d", n, cost)
		}
	}
}
