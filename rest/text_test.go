package rest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// NUL text once reached PostgreSQL (a 500) through fields that skipped the one
// text check: the engine's name on both transports and apiKeyList's prefix (issue
// 26, row 10). Each answers 400 invalid_request naming the field, on every backend.
func TestNamedFieldsRefuseBadText(t *testing.T) {
	e := newEnv(t)
	rest := []struct {
		name, method, path, body string
		wantPath                 string
	}{
		{"engine name", "POST", "/v1/engines", `{"kind":"remote","name":"a\u0000b"}`, "name"},
		{"engine kind", "POST", "/v1/engines", `{"kind":"remote\u0000"}`, "kind"},
		{"an unread query value", "GET", "/v1/engines?whatever=a%00b", "", "whatever"},
		{"a query name", "GET", "/v1/engines?a%00b=1", "", "query"},
	}
	for _, tt := range rest {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			resp := e.Do(tt.method, tt.path, e.Key, body)
			if resp.Status != 400 || resp.Error()["code"] != "invalid_request" || !slices.Contains(resp.DetailPaths(), tt.wantPath) {
				t.Errorf("= %d %s, want 400 invalid_request naming %s", resp.Status, resp.Raw, tt.wantPath)
			}
		})
	}
	graphql := []struct {
		name, query string
		vars        map[string]any
		wantPath    string
	}{
		{"createEngine name", `mutation($n: String) { createEngine(input: {kind: "remote", name: $n}) { engine { id } } }`, map[string]any{"n": "a\u0000b"}, "name"},
		{"apiKeyList prefix", `query($p: String) { apiKeyList(prefix: $p) { total } }`, map[string]any{"p": "a\u0000b"}, "prefix"},
		{"createApiKey name", `mutation($n: String) { createApiKey(input: {name: $n, scopes: ["chats:read"]}) { key } }`, map[string]any{"n": "a\u0000b"}, "name"},
	}
	for _, tt := range graphql {
		t.Run(tt.name, func(t *testing.T) {
			res := gql(e, e.Key, tt.query, tt.vars)
			if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "invalid_request" || !slices.Contains(detailPaths(res.Errors[0].Extensions), tt.wantPath) {
				t.Errorf("= %+v, want invalid_request naming %s", res.Errors, tt.wantPath)
			}
		})
	}
	if n, err := e.App.Client.Engine.Query().Count(systemCtx()); err != nil || n > 1 {
		t.Errorf("engines = %d, %v: one with a bad name was stored", n, err)
	}
}

func detailPaths(ext map[string]any) []string {
	var out []string
	details, _ := ext["details"].([]any)
	for _, d := range details {
		if m, ok := d.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["path"]))
		}
	}
	return out
}

// typeRef is an introspected type reference.
type typeRef struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	OfType *typeRef `json:"ofType"`
}

func (t *typeRef) String() string {
	switch t.Kind {
	case "NON_NULL":
		return t.OfType.String() + "!"
	case "LIST":
		return "[" + t.OfType.String() + "]"
	}
	return t.Name
}

// named is the named type under t's wrappers.
func (t *typeRef) named() *typeRef {
	for t.OfType != nil {
		t = t.OfType
	}
	return t
}

type introspected struct {
	Types []struct {
		Name        string `json:"name"`
		Kind        string `json:"kind"`
		InputFields []struct {
			Name string   `json:"name"`
			Type *typeRef `json:"type"`
		} `json:"inputFields"`
		EnumValues []struct {
			Name string `json:"name"`
		} `json:"enumValues"`
		Fields []struct {
			Name string `json:"name"`
			Args []struct {
				Name string   `json:"name"`
				Type *typeRef `json:"type"`
			} `json:"args"`
			Type *typeRef `json:"type"`
		} `json:"fields"`
	} `json:"types"`
}

const typeRefFields = `kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`

// TestEveryRootFieldRefusesBadText walks every query and mutation of the schema
// and gives each of its text arguments (and every text field of its input
// objects) a NUL byte: every one answers invalid_request, so that a field added
// later cannot skip the text check (the check runs on every field's arguments in
// one place, guardArgs).
func TestEveryRootFieldRefusesBadText(t *testing.T) {
	e := newEnv(t)
	resp := e.Do("POST", "/graphql", e.Key, map[string]any{"query": `{ __schema { types { name kind
		inputFields { name type { ` + typeRefFields + ` } } enumValues { name }
		fields { name args { name type { ` + typeRefFields + ` } } type { ` + typeRefFields + ` } } } } }`})
	var schema struct {
		Data struct {
			Schema introspected `json:"__schema"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp.Raw, &schema); err != nil || len(schema.Data.Schema.Types) == 0 {
		t.Fatalf("introspection = %d %.300s", resp.Status, resp.Raw)
	}
	types := map[string]int{}
	for i, ty := range schema.Data.Schema.Types {
		types[ty.Name] = i
	}
	s := schema.Data.Schema
	// value builds a value of t holding bad text wherever text fits; ok is false
	// when t cannot be given in JSON (an upload).
	var value func(t *typeRef, depth int) (v any, bad, ok bool)
	value = func(t *typeRef, depth int) (any, bool, bool) {
		switch t.Kind {
		case "NON_NULL":
			return value(t.OfType, depth)
		case "LIST":
			v, bad, ok := value(t.OfType, depth)
			return []any{v}, bad, ok
		}
		switch t.Name {
		case "String", "ID":
			return "a\u0000b", true, true
		case "Int":
			return 1, false, true
		case "Float":
			return 1.5, false, true
		case "Boolean":
			return false, false, true
		case "Time":
			return "2030-01-01T00:00:00Z", false, true
		case "Upload":
			return nil, false, false
		case "Cursor":
			return nil, false, true
		}
		ty := s.Types[types[t.Name]]
		switch ty.Kind {
		case "ENUM":
			return ty.EnumValues[0].Name, false, true
		case "INPUT_OBJECT":
			obj := map[string]any{}
			anyBad := false
			for _, f := range ty.InputFields {
				required := f.Type.Kind == "NON_NULL"
				named := f.Type.named()
				text := named.Name == "String" || named.Name == "ID"
				if depth > 2 && !required {
					continue
				}
				if !required && !text {
					continue // optional structure: its text is reached through other fields
				}
				v, bad, ok := value(f.Type, depth+1)
				if !ok {
					if required {
						return nil, false, false
					}
					continue
				}
				if v != nil {
					obj[f.Name] = v
				}
				anyBad = anyBad || bad
			}
			return obj, anyBad, true
		}
		return "x", false, true
	}
	walked := 0
	for _, root := range []string{"Query", "Mutation"} {
		rt := s.Types[types[root]]
		for _, f := range rt.Fields {
			if strings.HasPrefix(f.Name, "__") || len(f.Args) == 0 {
				continue
			}
			var decl, args []string
			vars := map[string]any{}
			anyBad, skip := false, false
			for i, a := range f.Args {
				v, bad, ok := value(a.Type, 0)
				if !ok {
					if a.Type.Kind == "NON_NULL" {
						skip = true
					}
					continue
				}
				if v == nil {
					continue
				}
				name := fmt.Sprintf("a%d", i)
				decl = append(decl, "$"+name+": "+a.Type.String())
				args = append(args, a.Name+": $"+name)
				vars[name] = v
				anyBad = anyBad || bad
			}
			if skip || !anyBad {
				continue
			}
			sel := ""
			if k := f.Type.named().Kind; k == "OBJECT" || k == "INTERFACE" || k == "UNION" {
				sel = " { __typename }"
			}
			op := strings.ToLower(root)
			q := fmt.Sprintf("%s(%s) { %s(%s)%s }", op, strings.Join(decl, ", "), f.Name, strings.Join(args, ", "), sel)
			res := gql(e, e.Key, q, vars)
			walked++
			if len(res.Errors) == 0 || res.Errors[0].Extensions["code"] != "invalid_request" || len(detailPaths(res.Errors[0].Extensions)) == 0 {
				t.Errorf("%s.%s with NUL text = %+v (data %v), want invalid_request naming the field\n%s", root, f.Name, res.Errors, res.Data, q)
			}
		}
	}
	if walked < 40 {
		t.Errorf("walked only %d root fields", walked)
	}
	t.Logf("%d root fields walked", walked)
}
