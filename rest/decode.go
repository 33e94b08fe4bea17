package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard"
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
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return switchboard.Errorf(switchboard.EUNSUPPORTED, "Content-Type must be application/json.")
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxJSONBody)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if errors.Is(err, io.EOF) {
		if emptyOK {
			return nil
		}
		return invalidBody("", "invalid_type", "The request body must be a JSON object.")
	}
	if err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return invalidBody("", "invalid_json", "The request body must hold a single JSON object.")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidBody("", "invalid_json", "The request body must hold a single JSON object.")
	}
	return nil
}

func decodeError(err error) error {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return switchboard.Errorf(switchboard.ETOOLARGE, "The JSON body exceeds %d bytes; send media as multipart/form-data instead.", maxErr.Limit)
	case errors.As(err, &syntaxErr):
		return invalidBody("", "invalid_json", fmt.Sprintf("Malformed JSON at byte %d: %v.", syntaxErr.Offset, syntaxErr))
	case errors.As(err, &typeErr):
		path := typeErr.Field
		if path == "" {
			return invalidBody("", "invalid_type", "The request body must be a JSON object.")
		}
		return invalidBody(path, "invalid_type", fmt.Sprintf("%s must be of type %s, not %s.", path, jsonType(typeErr.Type.String()), typeErr.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return invalidBody(field, "unrecognized_keys", fmt.Sprintf("Unknown field %q.", field))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidBody("", "invalid_json", "Malformed JSON: unexpected end of body.")
	}
	return invalidBody("", "invalid_json", "Malformed JSON body.")
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
	raw, ok := r.URL.Query()[name]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(raw[0])
	if err != nil || len(raw) > 1 {
		p.Add(name, "invalid_type", "%s must be an integer", name)
		return nil
	}
	return &n
}

// queryString returns an optional string query parameter.
func queryString(r *http.Request, name string) *string {
	raw, ok := r.URL.Query()[name]
	if !ok {
		return nil
	}
	return &raw[0]
}
