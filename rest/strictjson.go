package rest

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Go's encoding/json matches a body's keys to fields case-insensitively and lets
// the last of two equal keys win. The API's bodies are exact: strictKeys, run
// on every JSON body decodeJSON takes, refuses a key that names a field only up
// to case (as an unknown field) and a key given twice in one object.

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// strictKeys walks the JSON body (already decoded into a value of type t without
// error) and refuses a duplicate key or a key that matches a field of t's structs
// only case-insensitively.
func strictKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return walkKeys(dec, t, "")
}

// walkKeys reads one JSON value from dec, whose Go type is t (nil when free or
// decoded by the type itself), and checks its keys; path names the value.
func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return nil // the decoder reported any syntax error already
	}
	t = exactType(t)
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		} else if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil
			}
			key, _ := kt.(string)
			p := joinPath(path, key)
			if seen[key] {
				return invalidBody(p, "duplicate_key", fmt.Sprintf("The key %q appears more than once; give each key once.", p))
			}
			seen[key] = true
			vt := elem
			if fields != nil {
				var ok bool
				if vt, ok = fields[key]; !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return invalidBody(p, "unrecognized_keys", fmt.Sprintf("Unknown field %q (field names are case-sensitive: did you mean %q?); accepted fields: %s.",
								p, name, strings.Join(acceptedFields(reflect.New(t).Interface()), ", ")))
						}
					}
				}
			}
			if err := walkKeys(dec, vt, p); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	}
	return nil
}

// exactType returns t without pointers, or nil when its values are free (an
// interface) or decode themselves (a json or text unmarshaler), whose keys are
// then checked only for duplicates.
func exactType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	return t
}

// jsonFields maps the JSON names of struct t's fields (an embedded struct's
// fields as its own, as encoding/json does) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case name == "-":
		case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			for k, v := range jsonFields(ft) {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		case !f.IsExported():
		case name == "":
			out[f.Name] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
