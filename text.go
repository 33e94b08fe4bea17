package switchboard

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxTextDepth bounds how deep BadText walks a value (GraphQL filters nest
// through not/and/or).
const maxTextDepth = 64

// BadText is the one text check: it walks v (a string, pointer, slice, map or
// struct) down to its strings and returns the path of the first that holds a NUL
// byte or is not valid UTF-8, which PostgreSQL refuses. Paths start at path and
// name struct fields by their JSON names; an embedded struct's fields stand at its
// parent's level, as encoding/json puts them; bytes are data, not text.
func BadText(path string, v any) (string, bool) {
	return badText(path, reflect.ValueOf(v), 0)
}

func badText(path string, v reflect.Value, depth int) (string, bool) {
	if !v.IsValid() || depth > maxTextDepth {
		return "", false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		return path, !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0
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
