package graph

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/switchboardhq/switchboard"
)

// boundedLists are the list fields that have no cost of their own, each with what
// bounds it. Items and edges of pages and connections are counted by the field
// that returns the page, and lists of scalars have nothing nested to multiply.
var boundedLists = map[string]string{
	"AudienceContact.variables":      "at most 32 per contact (checked when written); values only",
	"Board.columns":                  "the columns of the board's template, a handful",
	"BusinessProfile.hours":          "one per day of the week (7); values only",
	"BoardColumn.options":            "the options of one template column, a handful",
	"BoardItem.cells":                "one per column of the item's board",
	"BoardMergeReport.created":       "counted by upsertBoardItems: at most one per item given (500)",
	"BoardMergeReport.updated":       "counted by upsertBoardItems: at most one per item given (500)",
	"Delivery.attemptLog":            "at most len(RetrySchedule)+1 attempts per delivery (8 by default)",
	"Group.participants":             "one group's participants (at most 1024 on WhatsApp); a page of groups answers at most 5,000 in all (maxListedParticipants); values only",
	"GroupResult.failedParticipants": "at most the 256 participants the mutation was given; values only",
	"GroupCommunity.subGroups":       "at most 100 sub-groups (maxSubGroups, WhatsApp's bound); values only",
	"JoinRequestAnswer.results":      "one per participant the mutation was given (at most 256); values only",
	"LatestChats.chats":              "counted by latestChats (numberOfChats)",
	"NumberCheckResult.items":        "at most the 100 numbers checkNumbers was given (MaxCheckNumbers); values only",
	"Message.contacts":               "at most 256 cards (engine.MaxContacts, checked when sent or received); values only",
	"Ping.whatsappConnections":       "the workspace's engines; values only",
	"SimilarItems.matches":           "counted by findSimilarBoardItems: at most one per candidate (500)",
	"SongJob.clips":                  "the variants of one song (2)",
}

// schemaForTest is the executable schema with the handler's costs.
func schemaForTest() costs {
	cfg := Config{}
	setComplexity(&cfg.Complexity)
	return costs{NewExecutableSchema(cfg)}
}

// objectFields calls f for every field of every object type of the schema but the
// introspection types, in a stable order.
func objectFields(s *ast.Schema, f func(typ *ast.Definition, field *ast.FieldDefinition)) {
	var names []string
	for name, d := range s.Types {
		if d.Kind == ast.Object && !strings.HasPrefix(name, "__") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, field := range s.Types[name].Fields {
			if !strings.HasPrefix(field.Name, "__") {
				f(s.Types[name], field)
			}
		}
	}
}

// isPage reports whether name is a page or a connection type.
func isPage(s *ast.Schema, name string) bool {
	d := s.Types[name]
	return d != nil && d.Kind == ast.Object && (strings.HasSuffix(name, "Connection") || strings.HasSuffix(name, "Page"))
}

// TestEveryListFieldHasACost walks the schema: every field that returns a list of
// objects, a page or a connection has a cost in the complexity bound, or is in
// boundedLists with its bound. A new list field without a cost fails here.
func TestEveryListFieldHasACost(t *testing.T) {
	es := schemaForTest()
	s := es.Schema()
	ctx := context.WithValue(context.Background(), latestMessagesKey{}, defaultLatestMessages)
	seen := map[string]bool{}
	objectFields(s, func(typ *ast.Definition, f *ast.FieldDefinition) {
		name := typ.Name + "." + f.Name
		elem := s.Types[f.Type.Name()]
		switch {
		case f.Type.Elem == nil && !isPage(s, f.Type.Name()):
			return // one object or scalar
		case elem.Kind == ast.Scalar || elem.Kind == ast.Enum:
			return // scalars: nothing nested
		case isPage(s, typ.Name) && (f.Name == "items" || f.Name == "edges"):
			return // counted by the field that returns the page
		}
		const child = 7
		cost, ok := es.Complexity(ctx, typ.Name, f.Name, child, requiredArgs(s, f.Arguments))
		if reason, bounded := boundedLists[name]; bounded {
			seen[name] = true
			if ok {
				t.Errorf("%s has a cost (%d) and is listed as bounded (%s): drop it from boundedLists", name, cost, reason)
			}
			return
		}
		switch {
		case !ok:
			t.Errorf("%s returns %s and has no cost: add one in setComplexity (or list it in boundedLists with its bound)", name, f.Type)
		case cost <= child:
			t.Errorf("%s costs %d for items of %d: a page must cost its size times its items", name, cost, child)
		}
	})
	for name := range boundedLists {
		if !seen[name] {
			t.Errorf("boundedLists names %s, which is not a list field without a cost", name)
		}
	}
}

// requiredArgs makes up a value for every required argument, as a client would
// send it, so that the cost function of the field can be called.
func requiredArgs(s *ast.Schema, args ast.ArgumentDefinitionList) map[string]any {
	out := map[string]any{}
	for _, a := range args {
		if a.Type.NonNull && a.DefaultValue == nil {
			out[a.Name] = sampleValue(s, a.Type, 0)
		}
	}
	return out
}

func sampleValue(s *ast.Schema, t *ast.Type, depth int) any {
	if t.Elem != nil {
		return []any{sampleValue(s, t.Elem, depth)}
	}
	d := s.Types[t.Name()]
	switch {
	case d.Kind == ast.Enum:
		return d.EnumValues[0].Name
	case d.Kind == ast.InputObject:
		obj := map[string]any{}
		for _, f := range d.Fields {
			if f.Type.NonNull && f.DefaultValue == nil && depth < 8 {
				obj[f.Name] = sampleValue(s, f.Type, depth+1)
			}
		}
		return obj
	}
	switch t.Name() {
	case "Int":
		return 2
	case "Float":
		return 2.0
	case "Boolean":
		return true
	}
	return "x"
}

// TestEveryTypeBelongsToAResource: every object type is a resource, part of one,
// or a value (graph/scopes.go), so that an edge into a new type is checked.
func TestEveryTypeBelongsToAResource(t *testing.T) {
	s := schemaForTest().Schema()
	for name, d := range s.Types {
		if d.Kind != ast.Object || strings.HasPrefix(name, "__") || name == "Query" || name == "Mutation" {
			continue
		}
		if _, ok := ResourceOf(name); !ok {
			t.Errorf("type %s belongs to no resource: add it to resourceScopes (with the scope that reads it) or typeParts", name)
		}
	}
	for r, scope := range resourceScopes {
		if s.Types[r] == nil {
			t.Errorf("resourceScopes names %s, which is not a type of the schema", r)
		}
		if scope == "" || scope == switchboard.ScopeAll || !switchboard.IsKnownScope(scope) {
			t.Errorf("resource %s is read with %q, not a scope", r, scope)
		}
	}
	for part, r := range typeParts {
		if s.Types[part] == nil {
			t.Errorf("typeParts names %s, which is not a type of the schema", part)
		}
		if _, ok := resourceScopes[r]; r != "" && !ok {
			t.Errorf("typeParts puts %s in %s, which is not a resource", part, r)
		}
	}
}

// TestEveryEdgeHasAScope walks the schema: every field that leads from one
// resource into another needs a scope, and the special cases name real fields.
func TestEveryEdgeHasAScope(t *testing.T) {
	s := schemaForTest().Schema()
	edges := map[string]bool{}
	objectFields(s, func(typ *ast.Definition, f *ast.FieldDefinition) {
		if typ.Name == "Query" || typ.Name == "Mutation" {
			return
		}
		from, _ := ResourceOf(typ.Name)
		to, _ := ResourceOf(f.Type.Name())
		if to == "" || to == from {
			return
		}
		edges[typ.Name+"."+f.Name] = true
		if scope := EdgeScope(typ.Name, f.Name, to); scope == "" || !switchboard.IsKnownScope(scope) {
			t.Errorf("edge %s.%s into %s has no scope", typ.Name, f.Name, to)
		}
	})
	if len(edges) == 0 {
		t.Fatal("no edge found")
	}
	for name := range edgeScopes {
		if !edges[name] {
			t.Errorf("edgeScopes names %s, which is not an edge", name)
		}
	}
	for name, r := range fieldData {
		typ, field, _ := strings.Cut(name, ".")
		if d := s.Types[typ]; d == nil || d.Fields.ForName(field) == nil {
			t.Errorf("fieldData names %s, which is not a field", name)
		}
		if resourceScopes[r] == "" {
			t.Errorf("fieldData says %s carries %s, which is not a resource", name, r)
		}
	}
}

// TestEveryRootFieldDeclaresItsScope: every Query and Mutation field carries one
// @scope directive naming a scope keys can hold ("" for any valid key), which
// checkScopes and the REST routes enforce; no other field carries it (it would be
// enforced nowhere), and no root field name is both a query and a mutation (REST
// names a route's root field by its name alone).
func TestEveryRootFieldDeclaresItsScope(t *testing.T) {
	s := schemaForTest().Schema()
	if d := s.Directives[scopeDirective]; d == nil || d.Arguments.ForName("needs") == nil {
		t.Fatalf("the schema declares no @%s(needs:) directive", scopeDirective)
	}
	names := map[string]string{}
	objectFields(s, func(typ *ast.Definition, f *ast.FieldDefinition) {
		name := typ.Name + "." + f.Name
		n := 0
		for _, d := range f.Directives {
			if d.Name == scopeDirective {
				n++
			}
		}
		if typ.Name != "Query" && typ.Name != "Mutation" {
			if n > 0 {
				t.Errorf("%s is not a root field and carries @%s: nested fields take their scope from their type (scopes.go)", name, scopeDirective)
			}
			return
		}
		scope, ok := DeclaredScope(f)
		switch {
		case !ok || n != 1:
			t.Errorf("%s carries %d @%s directives, want one with needs: a scope (\"\" for any valid key)", name, n, scopeDirective)
		case scope == switchboard.ScopeAll || (scope != "" && !switchboard.IsKnownScope(scope)):
			t.Errorf("%s needs %q, not a scope", name, scope)
		}
		if other, dup := names[f.Name]; dup {
			t.Errorf("%s and %s share a name", other, name)
		}
		names[f.Name] = name
		if got, ok := RootScope(f.Name); !ok || got != scope {
			t.Errorf("RootScope(%s) = %q, %v; want %q", f.Name, got, ok, scope)
		}
	})
	if len(names) < 90 {
		t.Errorf("only %d root fields", len(names))
	}
}
