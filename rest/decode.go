package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/graph"
)

// Body limits (spec "Limits"): JSON bodies 10 MB; multipart uploads are not subject
// to it and get their own, larger bound.
const (
	maxJSONBody      = 10 << 20
	maxMultipartBody = 64 << 20
)

// decodeJSON decodes a JSON object body into dst, refusing unknown fields, trailing
// data, wrong types and oversized bodies with a 400 (413 for size) naming the field.
// An empty body decodes as {} when emptyOK.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool) error {
	return decodeJSONUpTo(w, r, dst, emptyOK, maxJSONBody)
}

// decodeJSONUpTo is decodeJSON with a body limit of its own, for the routes whose
// reference bounds exceed maxJSONBody (a group picture as a data URL).
func decodeJSONUpTo(w http.ResponseWriter, r *http.Request, dst any, emptyOK bool, limit int64) error {
	if err := checkJSONType(r); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return decodeError(err, dst)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(dst)
	if errors.Is(err, io.EOF) {
		if emptyOK {
			return nil
		}
		return invalidBody("", "invalid_type", "The request body must be a JSON object.")
	}
	if err != nil {
		return decodeError(err, dst)
	}
	if dec.More() {
		return invalidBody("", "invalid_json", "The request body must hold a single JSON object.")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidBody("", "invalid_json", "The request body must hold a single JSON object.")
	}
	if err := strictKeys(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	return graph.CheckText("", dst)
}

// parseMultipart reads a multipart/form-data body of at most maxMultipartBody
// bytes (files beyond 16 MB kept on disk) and checks the text of every value.
func parseMultipart(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxMultipartBody)
	if err := r.ParseMultipartForm(16 << 20); err != nil {
		if strings.Contains(err.Error(), "too large") {
			return switchboard.Errorf(switchboard.ETOOLARGE, "The upload exceeds %d bytes.", maxMultipartBody)
		}
		return invalidBody("", "invalid_multipart", "Malformed multipart/form-data body.")
	}
	names := make([]string, 0, len(r.MultipartForm.Value))
	for name := range r.MultipartForm.Value {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := graph.CheckText("key", name); err != nil {
			return err
		}
		for _, v := range r.MultipartForm.Value[name] {
			if err := graph.CheckText(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkQueryText checks the text of every query name and value of r (a value
// named by its parameter), whether the route reads it or not: the one place
// where the query text of a /v1 route is checked (scopedRouter runs it).
func checkQueryText(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := graph.CheckText("query", name); err != nil {
			return err
		}
		for _, v := range q[name] {
			if err := graph.CheckText(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkQueryNames refuses, with one detail each, the query parameters of r that
// are not among accepted (matched exactly: names are case-sensitive), listing
// the accepted ones.
func checkQueryNames(r *http.Request, accepted []string) error {
	if r.URL.RawQuery == "" {
		return nil
	}
	names := make([]string, 0)
	for name := range r.URL.Query() {
		if !slices.Contains(accepted, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	list := "none"
	if len(accepted) > 0 {
		list = strings.Join(accepted, ", ")
	}
	var p switchboard.Problems
	for _, name := range names {
		p.Add(name, "unrecognized_keys", "Unknown query parameter %q; accepted parameters: %s.", name, list)
	}
	return p.Err(switchboard.EINVALID)
}

// checkJSONType refuses a body declared as anything but JSON (none is taken for JSON).
func checkJSONType(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return switchboard.Errorf(switchboard.EUNSUPPORTED, "Content-Type must be application/json.")
		}
	}
	return nil
}

// decodeError turns a JSON decoding error into an EINVALID error naming the field;
// an unknown field's error lists the fields dst accepts.
func decodeError(err error, dst any) error {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return tooLarge(maxErr.Limit)
	case errors.As(err, &syntaxErr):
		return invalidBody("", "invalid_json", fmt.Sprintf("Malformed JSON at byte %d: %v.", syntaxErr.Offset, syntaxErr))
	case errors.As(err, &typeErr):
		path := withoutEmbedded(typeErr.Field, dst)
		if path == "" {
			return invalidBody("", "invalid_type", "The request body must be a JSON object.")
		}
		return invalidBody(path, "invalid_type", fmt.Sprintf("%s must be of type %s, not %s.", path, jsonType(typeErr.Type.String()), typeErr.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return unknownField(field, acceptedFields(dst))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidBody("", "invalid_json", "Malformed JSON: unexpected end of body.")
	}
	return invalidBody("", "invalid_json", "Malformed JSON body.")
}

// withoutEmbedded drops from a decoding error's field path the names of the
// structs dst embeds (encoding/json names them: "typingFields.typingSeconds"),
// leaving the body's own path.
func withoutEmbedded(path string, dst any) string {
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return path
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			if rest, ok := strings.CutPrefix(path, f.Name+"."); ok {
				return withoutEmbedded(rest, reflect.New(f.Type).Interface())
			}
		}
	}
	return path
}

// unknownField is the error of a body field that is not among accepted.
func unknownField(field string, accepted []string) error {
	return invalidBody(field, "unrecognized_keys", fmt.Sprintf("Unknown field %q; accepted fields: %s.", field, strings.Join(accepted, ", ")))
}

// acceptedFields lists the JSON names of the exported fields of the struct dst
// points to: the fields a body may carry.
func acceptedFields(dst any) []string {
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	if t == nil || t.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct { // an embedded struct's fields are the outer's
			out = append(out, acceptedFields(reflect.New(f.Type).Interface())...)
		} else if f.IsExported() && name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func jsonType(goType string) string {
	switch {
	case strings.Contains(goType, "string"):
		if strings.HasPrefix(goType, "[]") {
			return "array of strings"
		}
		return "string"
	case strings.Contains(goType, "bool"):
		return "boolean"
	case strings.Contains(goType, "int"), strings.Contains(goType, "float"):
		return "number"
	}
	return "object"
}

func invalidBody(path, code, msg string) error {
	if path == "" {
		path = "body"
	}
	return &switchboard.Error{Code: switchboard.EINVALID, Message: msg,
		Details: []switchboard.Detail{{Path: path, Code: code, Message: msg}}}
}

// queryInt parses an optional integer query parameter.
func queryInt(r *http.Request, name string, p *switchboard.Problems) *int {
	return queryParsed(r, name, p, strconv.Atoi, "an integer")
}

// queryBool parses an optional boolean query parameter (true, false, 1 or 0).
func queryBool(r *http.Request, name string, p *switchboard.Problems) *bool {
	return queryParsed(r, name, p, strconv.ParseBool, "true or false")
}

// queryParsed parses an optional query parameter given once; a bad value is a
// problem saying what it must be.
func queryParsed[T any](r *http.Request, name string, p *switchboard.Problems, parse func(string) (T, error), must string) *T {
	raw, ok := r.URL.Query()[name]
	if !ok {
		return nil
	}
	v, err := parse(raw[0])
	if err != nil || len(raw) > 1 {
		p.Add(name, "invalid_type", "%s must be %s", name, must)
		return nil
	}
	return &v
}

// queryString returns an optional string query parameter.
func queryString(r *http.Request, name string) *string {
	raw, ok := r.URL.Query()[name]
	if !ok {
		return nil
	}
	return &raw[0]
}

// limitBody bounds the body of a /graphql request: maxJSONBody for a JSON body,
// which is read here so that an oversized one is a 413 envelope, and
// graph.MaxUploadSize for a multipart upload.
func limitBody(next http.Handler) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if r.Body == nil || r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return nil
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			r.Body = http.MaxBytesReader(w, r.Body, graph.MaxUploadSize)
			next.ServeHTTP(w, r)
			return nil
		}
		if r.ContentLength > maxJSONBody {
			return tooLarge(maxJSONBody)
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
		if err != nil {
			return decodeError(err, nil)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
		return nil
	})
}

func tooLarge(limit int64) error {
	return switchboard.Errorf(switchboard.ETOOLARGE, "The JSON body exceeds %d bytes; send media as multipart/form-data instead.", limit)
}
