package graph

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
)

// maxTextDepth bounds how deep checkText walks nested input objects (where filters
// nest through not/and/or).
const maxTextDepth = 64

// checkText is the one check every caller-supplied text passes before it can reach
// the database: it answers EINVALID naming the first field that holds a NUL byte or
// invalid UTF-8. args are name, value pairs. A value may be a string, a pointer, a
// slice, a map or a struct (an input object), walked down to its strings; struct
// fields are named by their JSON names, and an empty name puts a struct's fields at
// the top level, as the REST body does ("text", not "input.text").
func checkText(args ...any) error {
	for i := 0; i+1 < len(args); i += 2 {
		name, _ := args[i].(string)
		if path, ok := badText(name, reflect.ValueOf(args[i+1]), 0); ok {
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

// badText returns the path of the first bad string under v.
func badText(path string, v reflect.Value, depth int) (string, bool) {
	if !v.IsValid() || depth > maxTextDepth {
		return "", false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		return orBody(path), !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0
	case reflect.Pointer, reflect.Interface:
		return badText(path, v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // bytes are data, not text
		}
		for i := 0; i < v.Len(); i++ {
			if p, ok := badText(join(path, strconv.Itoa(i)), v.Index(i), depth+1); ok {
				return p, true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if p, ok := badText(join(path, "key"), iter.Key(), depth+1); ok {
				return p, true
			}
			if p, ok := badText(join(path, iter.Key().String()), iter.Value(), depth+1); ok {
				return p, true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if embeddedStruct(f, name) {
				// Its fields stand at its parent's level, as encoding/json puts them
				// (REST's direct-send body embeds the message body).
				if p, ok := badText(path, v.Field(i), depth+1); ok {
					return p, true
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name[:1]) + f.Name[1:]
			}
			if p, ok := badText(join(path, name), v.Field(i), depth+1); ok {
				return p, true
			}
		}
	}
	return "", false
}

// embeddedStruct reports whether f is an embedded struct whose fields encoding/json
// promotes to its parent (untagged; a pointer only to an exported type).
func embeddedStruct(f reflect.StructField, name string) bool {
	if !f.Anonymous || name != "" {
		return false
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		if !f.IsExported() {
			return false
		}
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}
