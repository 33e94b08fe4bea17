package remote

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator checks frames and payloads against the protocol's schema (Schema):
// the conformance kit and the tests hold what engines and the server send to it.
type Validator struct {
	c     *jsonschema.Compiler
	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

// NewValidator compiles Schema.
func NewValidator() (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(SchemaID, doc); err != nil {
		return nil, err
	}
	v := &Validator{c: c, cache: map[string]*jsonschema.Schema{}}
	if _, err := v.schema(""); err != nil {
		return nil, err
	}
	return v, nil
}

// schema compiles the schema's root ("") or one of its $defs.
func (v *Validator) schema(def string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[def]; ok {
		return s, nil
	}
	ref := SchemaID
	if def != "" {
		ref += "#/$defs/" + def
	}
	s, err := v.c.Compile(ref)
	if err != nil {
		return nil, err
	}
	v.cache[def] = s
	return s, nil
}

// Frame checks one frame (a JSON text) against the schema's root.
func (v *Validator) Frame(raw []byte) error { return v.Def("", raw) }

// Def checks raw against the schema's $defs entry def ("Outgoing",
// "params.Send", "result.Send", …); "" is the root, any frame.
func (v *Validator) Def(def string, raw []byte) error {
	s, err := v.schema(def)
	if err != nil {
		return fmt.Errorf("no schema for %q: %w", def, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(doc)
}
