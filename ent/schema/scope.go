package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent/schema"
	"github.com/vektah/gqlparser/v2/ast"
)

// queryField exposes a type's connection on the Query type as name, behind scope:
// the @scope directive every root field carries (graph/schema.graphql).
func queryField(name, scope string) schema.Annotation {
	return entgql.QueryField(name).Directives(ScopeDirective(scope))
}

// ScopeDirective is @scope(needs: scope), the directive of a root field.
func ScopeDirective(scope string) entgql.Directive {
	return entgql.NewDirective("scope", &ast.Argument{Name: "needs", Value: &ast.Value{Raw: scope, Kind: ast.StringValue}})
}
