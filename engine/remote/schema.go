package remote

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/switchboardhq/switchboard/engine"
)

// SchemaID is the $id of the protocol's JSON Schema document.
const SchemaID = "https://switchboard.dev/schemas/engine-protocol.json"

// Schema is the protocol's JSON Schema (2020-12) document, served at GET
// /v1/engines/protocol.json (docs/engine-protocol.md): the root validates any
// frame; $defs holds every payload, and for every command "params.<Method>" (its
// params, by position) and "result.<Method>" (its reply's result). It is
// reflected from the Go types the server and the reference client encode, so a
// field added to them is in it, plus the bounds reflection cannot see.
func Schema() []byte { return schemaDoc() }

var schemaDoc = sync.OnceValue(func() []byte {
	raw, err := json.MarshalIndent(buildSchema(), "", "  ")
	if err != nil {
		panic(err)
	}
	return raw
})

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// buildSchema reflects the frame, the event and every command's params and
// results into one document.
func buildSchema() *jsonschema.Schema {
	r := &jsonschema.Reflector{
		Anonymous:                  true,
		RequiredFromJSONSchemaTags: true, // required is set below, by hand
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case rawMessageType:
				return &jsonschema.Schema{} // any JSON; params and result are described per method
			case reflect.TypeFor[time.Duration]():
				return &jsonschema.Schema{Type: "integer", Description: "a duration in whole milliseconds"}
			case reflect.TypeFor[time.Time]():
				return &jsonschema.Schema{Type: "string", Format: "date-time", Description: "a time in RFC 3339"}
			}
			return nil
		},
		AdditionalFields: func(t reflect.Type) []reflect.StructField {
			if t == reflect.TypeFor[engine.Event]() {
				// Event.Pinned travels as pinnedMs (Event.MarshalJSON).
				return []reflect.StructField{{Name: "PinnedMs", Type: reflect.TypeFor[int64](), Tag: `json:"pinnedMs,omitempty"`}}
			}
			return nil
		},
	}
	defs := jsonschema.Definitions{}
	ref := func(t reflect.Type) *jsonschema.Schema {
		s := r.ReflectFromType(t)
		maps.Copy(defs, s.Definitions)
		s.Definitions = nil
		s.Version = ""
		return s
	}
	root := ref(reflect.TypeFor[Frame]())
	ref(reflect.TypeFor[engine.Event]())
	for _, m := range Methods() {
		in, out := methodTypes(m)
		params := &jsonschema.Schema{Type: "array", Items: jsonschema.FalseSchema, Description: "the params of " + m + ", by position; trailing ones may be left out"}
		for _, t := range in {
			params.PrefixItems = append(params.PrefixItems, ref(t))
		}
		if slices.Contains(uploadMethods, m) {
			params.PrefixItems = append(params.PrefixItems, &jsonschema.Schema{Type: "string", Format: "uri",
				Description: "uploadUrl: where an engine that announced the media_refs feature PUTs the media, replying without data"})
		}
		result := &jsonschema.Schema{Type: "array", Items: jsonschema.FalseSchema, Description: "the result of " + m + ", by position"}
		for _, t := range out {
			result.PrefixItems = append(result.PrefixItems, ref(t))
		}
		if len(out) > 0 {
			n := uint64(len(out))
			result.MinItems = &n
		}
		defs["params."+m] = params
		defs["result."+m] = result
	}
	bound(defs)
	root.Version = "https://json-schema.org/draft/2020-12/schema"
	root.ID = SchemaID
	root.Title = "Switchboard engine protocol, version 1"
	root.Definitions = defs
	return root
}

// methodTypes is the types of a command's params (but the context) and results
// (but the error). SendBatch's result is its wire form, one sentWire per message.
func methodTypes(method string) (in, out []reflect.Type) {
	for _, c := range engine.Capabilities {
		m, ok := c.Interface.MethodByName(method)
		if !ok {
			continue
		}
		for i := 1; i < m.Type.NumIn(); i++ {
			in = append(in, m.Type.In(i))
		}
		for i := 0; i < m.Type.NumOut()-1; i++ {
			out = append(out, m.Type.Out(i))
		}
		if method == "SendBatch" {
			out = []reflect.Type{reflect.TypeFor[[]sentWire]()}
		}
		return in, out
	}
	return nil, nil
}

func u64(n uint64) *uint64 { return &n }

// frameFields are, for every frame type, the fields it may carry and (after
// the bar) the ones it must: a frame of one type with another's field is off
// the contract.
var frameFields = map[string][2][]string{
	FrameHello:       {{"token", "kind", "capabilities", "phone", "version", "versions", "features"}, nil},
	FrameWelcome:     {{"engineId", "workspaceId", "version", "versions", "deprecated", "heartbeatMs", "ttlMs", "maxFrame", "maxBatch", "features"}, {"engineId", "workspaceId", "version", "heartbeatMs", "ttlMs", "maxFrame", "maxBatch"}},
	FrameHeartbeat:   {nil, nil},
	FrameCommand:     {{"id", "method", "params", "deadline"}, {"id", "method"}},
	FrameReply:       {{"id", "result", "error"}, {"id"}},
	FrameEvents:      {{"id", "events"}, {"id", "events"}},
	FrameEventsAck:   {{"id", "error", "rejected"}, {"id"}},
	FrameUnsupported: {{"id", "frameType"}, {"frameType"}},
	FrameState:       {{"id", "state"}, {"id", "state"}},
	FrameStateAck:    {{"id", "error"}, {"id"}},
}

// frameShapes are the rules of frameFields as if/then schemas; a reply
// carries a result or an error, not both.
func frameShapes() []*jsonschema.Schema {
	types := make([]string, 0, len(frameFields))
	for t := range frameFields {
		types = append(types, t)
	}
	slices.Sort(types)
	var out []*jsonschema.Schema
	for _, t := range types {
		f := frameFields[t]
		names := []any{"type"}
		for _, n := range f[0] {
			names = append(names, n)
		}
		then := &jsonschema.Schema{PropertyNames: &jsonschema.Schema{Enum: names}, Required: f[1]}
		if t == FrameReply {
			then.OneOf = []*jsonschema.Schema{{Required: []string{"result"}}, {Required: []string{"error"}}}
		}
		ifType := jsonschema.NewProperties()
		ifType.Set("type", &jsonschema.Schema{Const: t})
		out = append(out, &jsonschema.Schema{If: &jsonschema.Schema{Properties: ifType, Required: []string{"type"}}, Then: then})
	}
	return out
}

// bound adds what reflection cannot see: required fields, the frame types, and
// the protocol's limits.
func bound(defs jsonschema.Definitions) {
	prop := func(def, name string) *jsonschema.Schema {
		d, ok := defs[def]
		if !ok || d.Properties == nil {
			return nil
		}
		p, _ := d.Properties.Get(name)
		return p
	}
	set := func(def, name string, f func(*jsonschema.Schema)) {
		if p := prop(def, name); p != nil {
			f(p)
		}
	}
	require := func(def string, names ...string) {
		if d, ok := defs[def]; ok {
			d.Required = slices.Compact(append(d.Required, names...))
		}
	}
	set("Frame", "type", func(p *jsonschema.Schema) {
		p.Enum = []any{FrameHello, FrameWelcome, FrameHeartbeat, FrameCommand, FrameReply, FrameEvents, FrameEventsAck, FrameUnsupported, FrameState, FrameStateAck}
	})
	require("Frame", "type")
	if d, ok := defs["Frame"]; ok {
		d.AllOf = frameShapes()
	}
	set("Frame", "id", func(p *jsonschema.Schema) { p.MaxLength = u64(engine.MaxIDLen) })
	set("Frame", "capabilities", func(p *jsonschema.Schema) { p.MaxItems = u64(MaxCapabilities) })
	set("Frame", "features", func(p *jsonschema.Schema) { p.MaxItems = u64(MaxFeatures) })
	set("Media", "url", func(p *jsonschema.Schema) { p.Format = "uri" })
	set("Frame", "phone", func(p *jsonschema.Schema) { p.Pattern = `^\+[1-9][0-9]{6,14}$` })
	set("Frame", "kind", func(p *jsonschema.Schema) { p.Enum = []any{engine.KindGateway, engine.KindRegular} })
	set("Frame", "events", func(p *jsonschema.Schema) { p.MaxItems = u64(DefaultMaxBatch) })
	set("Frame", "params", func(p *jsonschema.Schema) { p.Type = "array" })
	set("Frame", "result", func(p *jsonschema.Schema) { p.Type = "array" })
	set("Frame", "deadline", func(p *jsonschema.Schema) { p.Format = "date-time" })
	require("Event", "type")
	set("Event", "id", func(p *jsonschema.Schema) { p.MaxLength = u64(engine.MaxIDLen) })
	set("Event", "pinnedMs", func(p *jsonschema.Schema) { p.Minimum = json.Number("0") })
	set("Event", "ack", func(p *jsonschema.Schema) { p.Minimum, p.Maximum = json.Number("-1"), json.Number("4") })
	require("Key", "remote", "id")
	require("WireError", "code", "message")
	require("Rejected", "index", "reason")
	require("Outgoing", "wireId", "to", "type")
	require("Incoming", "key", "from", "type")
	require("GroupChange", "groupId", "action")
}
