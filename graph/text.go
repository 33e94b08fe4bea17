package graph

import (
	"sort"

	"github.com/switchboardhq/switchboard"
)

// checkText is the one check every caller-supplied text passes before it can reach
// the database: it answers EINVALID naming the first field that holds a NUL byte or
// invalid UTF-8. args are name, value pairs. A value may be a string, a pointer, a
// slice, a map or a struct (an input object), walked down to its strings; struct
// fields are named by their JSON names, and an empty name puts a struct's fields at
// the top level, as the REST body does ("text", not "input.text").
func checkText(args ...any) error {
	for i := 0; i+1 < len(args); i += 2 {
		name, _ := args[i].(string)
		if path, ok := switchboard.BadText(name, args[i+1]); ok {
			path = orBody(path)
			msg := path + " must be valid UTF-8 text without NUL bytes"
			return &switchboard.Error{Code: switchboard.EINVALID, Message: msg + ".",
				Details: []switchboard.Detail{{Path: path, Code: "invalid_string", Message: msg}}}
		}
	}
	return nil
}

// CheckText is checkText for the transports: the REST facade runs it over every
// body, path parameter, query value and form value it decodes, so that no text
// reaches a resolver unchecked, whichever resolver it is. Text is checked once, at
// the edges (this and guardArgs); resolvers check only what a transport hands them
// without decoding it as text (a header, a file part's name, a raw JSON value).
func CheckText(args ...any) error { return checkText(args...) }

// checkArgs runs checkText over a GraphQL field's arguments, in the order of their
// names. An argument named input is an input object whose fields are named at the
// top level, as the REST body names them ("name", not "input.name").
func checkArgs(args map[string]any) error {
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := name
		if name == "input" {
			path = ""
		}
		if err := checkText(path, args[name]); err != nil {
			return err
		}
	}
	return nil
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
