package rest

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/graph"
)

// Every route of the table serves a root field of the GraphQL schema, whose
// @scope is the route's; only an operation that serves none (the public ones)
// has a scope of its own.
func TestEveryRouteServesARootField(t *testing.T) {
	for _, o := range apiOperations {
		name := o.method + " " + o.path
		switch {
		case o.public && (o.field != "" || o.scope != ""):
			t.Errorf("%s is public and names field %q, scope %q", name, o.field, o.scope)
		case o.public:
		case o.field == "":
			t.Errorf("%s names no root field: name the Query or Mutation field it serves", name)
		case o.scope != "":
			t.Errorf("%s names field %s and scope %s: the field's @scope is the route's", name, o.field, o.scope)
		default:
			if _, ok := graph.RootScope(o.field); !ok {
				t.Errorf("%s serves %s, which is no root field of the schema", name, o.field)
			}
		}
	}
}

// The scopes the API reference documents are the ones in
// testdata/route-scopes.txt: moving a route's scope to its root field's @scope
// changed none, and a change of who may call an operation is a reviewed edit of
// that file.
func TestRouteScopesAreUnchanged(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Security *[]map[string][]string `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc(), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for path, item := range doc.Paths {
		for method, op := range item {
			scope := "(any valid key)"
			switch {
			case op.Security != nil && len(*op.Security) == 0:
				scope = "(public)"
			case op.Security != nil:
				scope = strings.Join((*op.Security)[0]["bearerAuth"], " ")
			}
			got = append(got, strings.ToUpper(method)+" "+path+" "+scope)
		}
	}
	sort.Strings(got)
	b, err := os.ReadFile("testdata/route-scopes.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documented route scopes (-testdata/route-scopes.txt +API reference):\n%s", diff)
	}
}
