//go:build ignore

// entc.go generates the ent client and the GraphQL schema of the ent-backed types.
package main

import (
	"fmt"
	"log"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/switchboardhq/switchboard/ent/schema"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("../graph/ent.graphql"),
		entgql.WithConfigPath("../gqlgen.yml"),
		entgql.WithWhereInputs(true),
		entgql.WithRelaySpec(true),
		entgql.WithSchemaHook(scopeNodes),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	cfg := &gen.Config{Features: []gen.Feature{
		gen.FeatureIntercept, gen.FeatureModifier, gen.FeatureLock, gen.FeatureUpsert, gen.FeatureExecQuery, gen.FeatureSnapshot,
	}}
	if err := entc.Generate("./schema", cfg, entc.Extensions(ex)); err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

// scopeNodes puts @scope on node and nodes, which entgql adds to Query itself:
// they ask only for a valid key, and their resolvers check the scope of each id's
// type (graph.nodeType). The other root fields get theirs from their QueryField
// annotation.
func scopeNodes(_ *gen.Graph, s *ast.Schema) error {
	query := s.Types["Query"]
	if query == nil {
		return fmt.Errorf("entgql generated no Query type")
	}
	for _, name := range []string{"node", "nodes"} {
		f := query.Fields.ForName(name)
		if f == nil {
			return fmt.Errorf("entgql generated no Query.%s", name)
		}
		d := schema.ScopeDirective("")
		f.Directives = append(f.Directives, &ast.Directive{Name: d.Name, Arguments: d.Arguments})
	}
	return nil
}
