package graph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/switchboardhq/switchboard"
)

// MaxDepth bounds how deeply an operation nests its fields (fragments add no
// level). The dashboard's deepest query has 4 levels; the schema's deepest useful
// path (a chat's messages through two connections, with what they quote) about
// 9. Edges that lead back up (AudienceContact.audience, Message.campaign) cannot
// be followed round and round past it, whatever their pages cost.
const MaxDepth = 12

// MaxIntrospectionDepth bounds the nesting under __schema and __type: the
// introspection query of graphql-js (GraphiQL, Apollo and the other consoles) has
// 13 levels, 15 with nine ofType levels.
const MaxIntrospectionDepth = 15

// operationLimits refuses an operation before any of it runs when it reads a field
// the key lacks the scope of (checkScopes), nests deeper than MaxDepth or costs
// more than MaxComplexity. Its size comes first: fragments spread twice in
// fragments spread twice … make a short document expand to 2^n fields, which no
// walk over the operation could finish; then authorization.
type operationLimits struct {
	es graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &operationLimits{}

// ExtensionName names the extension for gqlgen.
func (*operationLimits) ExtensionName() string { return "OperationLimits" }

// Validate keeps the schema the limits are computed on.
func (l *operationLimits) Validate(es graphql.ExecutableSchema) error {
	l.es = es
	return nil
}

// MutateOperationContext checks the operation about to run.
func (l *operationLimits) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil
	}
	if n := (sizes{fragments: map[string]int{}}).of(op.SelectionSet); n > MaxComplexity {
		return complexityError(fmt.Sprintf("more than %d", MaxComplexity))
	}
	if err := checkScopes(ctx, l.es.Schema(), op); err != nil {
		return err
	}
	if err := checkDepth(op); err != nil {
		return err
	}
	if cost := operationCost(ctx, l.es, op, opCtx.Variables); cost > MaxComplexity {
		return complexityError(fmt.Sprint(cost))
	}
	return nil
}

// complexityError is the error of an operation whose complexity is cost.
func complexityError(cost string) *gqlerror.Error {
	err := &switchboard.Error{Code: switchboard.EINVALID,
		Message: fmt.Sprintf("The operation has complexity %s, more than the limit of %d: ask for smaller pages, fewer fields or less nesting.", cost, MaxComplexity),
		Details: []switchboard.Detail{{Path: "query", Code: "too_big", Message: fmt.Sprintf("complexity must be at most %d", MaxComplexity)}}}
	return &gqlerror.Error{Err: err, Message: err.Message}
}

// sizes counts the fields of selection sets with their fragments expanded, each
// named fragment counted once (so in time linear in the document), saturating
// past MaxComplexity. Every field costs at least 1, so an operation of more
// fields would cost more than MaxComplexity.
type sizes struct{ fragments map[string]int }

func (z sizes) of(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			n += 1 + z.of(s.SelectionSet)
		case *ast.InlineFragment:
			n += z.of(s.SelectionSet)
		case *ast.FragmentSpread:
			if s.Definition == nil {
				continue
			}
			m, ok := z.fragments[s.Name]
			if !ok {
				m = z.of(s.Definition.SelectionSet)
				z.fragments[s.Name] = m
			}
			n += m
		}
		n = min(n, MaxComplexity+1)
	}
	return n
}

// checkDepth refuses an operation whose fields nest deeper than MaxDepth (or
// MaxIntrospectionDepth under __schema and __type).
func checkDepth(op *ast.OperationDefinition) *gqlerror.Error {
	d := depths{fragments: map[string]int{}}
	for _, f := range rootFields(op.SelectionSet, nil) {
		limit := MaxDepth
		if f.Name == "__schema" || f.Name == "__type" {
			limit = MaxIntrospectionDepth
		}
		if n := 1 + d.of(f.SelectionSet); n > limit {
			err := &switchboard.Error{Code: switchboard.EINVALID,
				Message: fmt.Sprintf("The operation nests %d fields deep under %s; the limit is %d.", n, f.Alias, limit),
				Details: []switchboard.Detail{{Path: "query", Code: "too_big", Message: fmt.Sprintf("fields nest at most %d deep", limit)}}}
			return &gqlerror.Error{Err: err, Message: err.Message, Path: ast.Path{ast.PathName(f.Alias)}, Locations: []gqlerror.Location{{Line: f.Position.Line, Column: f.Position.Column}}}
		}
	}
	return nil
}

// rootFields collects the root fields of set, through fragments.
func rootFields(set ast.SelectionSet, out []*ast.Field) []*ast.Field {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			out = append(out, s)
		case *ast.InlineFragment:
			out = rootFields(s.SelectionSet, out)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				out = rootFields(s.Definition.SelectionSet, out)
			}
		}
	}
	return out
}

// depths measures how deeply selection sets nest, each named fragment once.
type depths struct{ fragments map[string]int }

func (d depths) of(set ast.SelectionSet) int {
	deepest := 0
	for _, sel := range set {
		n := 0
		switch s := sel.(type) {
		case *ast.Field:
			n = 1 + d.of(s.SelectionSet)
		case *ast.InlineFragment:
			n = d.of(s.SelectionSet)
		case *ast.FragmentSpread:
			if s.Definition == nil {
				continue
			}
			var ok bool
			if n, ok = d.fragments[s.Name]; !ok {
				n = d.of(s.Definition.SelectionSet)
				d.fragments[s.Name] = n
			}
		}
		deepest = max(deepest, n)
	}
	return deepest
}

// latestMessagesKey holds, in the context of a cost computation, the most
// messages per chat an operation's latestChats fields ask for.
type latestMessagesKey struct{}

// operationCost is the complexity of op: each field costs 1 plus its children and
// each page its size times its children (setComplexity, costs).
func operationCost(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any) int {
	nm := defaultLatestMessages
	for _, f := range rootFields(op.SelectionSet, nil) {
		if f.Name == "latestChats" && f.ObjectDefinition != nil && f.ObjectDefinition.Name == "Query" {
			if n, ok := intArg(f.ArgumentMap(vars)["numberOfMessages"]); ok {
				nm = max(nm, n)
			}
		}
	}
	ctx = context.WithValue(ctx, latestMessagesKey{}, nm)
	return complexity.Calculate(ctx, costs{es}, op, vars)
}

// costs is the executable schema with the costs that depend on more than a
// field's own arguments: a latest chat's messages are a page of the
// numberOfMessages its latestChats field asked for.
type costs struct{ graphql.ExecutableSchema }

// Complexity returns the cost of field of typeName.
func (c costs) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if typeName == "LatestChat" && field == "messages" {
		nm, _ := ctx.Value(latestMessagesKey{}).(int)
		return pageCost(child, &nm, nil), true
	}
	return c.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
}

// intArg reads an Int argument as the validator left it.
func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(min(max(n, -1<<31), 1<<31)), true
	case float64:
		return int(min(max(n, -1<<31), 1<<31)), true
	case json.Number:
		i, err := n.Int64()
		return int(min(max(i, -1<<31), 1<<31)), err == nil
	}
	return 0, false
}
