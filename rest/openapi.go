package rest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/view"
)

// The API reference: an OpenAPI 3.1 document of every /v1 operation, built here
// from the route table (apiOperations, routes.go) and served at GET /v1/openapi.json. The tests in
// openapi_test.go keep it true: every routed /v1 operation is documented, every
// documented one is routed, and real answers validate against it.

// apiParam is a query parameter of an operation.
type apiParam struct {
	name, desc string
	schema     map[string]any
	required   bool
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func typ(t string, extra ...any) map[string]any {
	s := map[string]any{"type": t}
	for i := 0; i+1 < len(extra); i += 2 {
		s[extra[i].(string)] = extra[i+1]
	}
	return s
}

func nullable(t string, extra ...any) map[string]any {
	s := typ(t, extra...)
	s["type"] = []string{t, "null"}
	return s
}

func arrayOf(items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}

var (
	anyObject = map[string]any{"type": "object"}
	str       = typ("string")
	dateTime  = typ("string", "format", "date-time")
	boolean   = typ("boolean")
	integer   = typ("integer")
	okData    = obj(nil, map[string]any{"ok": boolean})
	binary    = typ("string", "contentMediaType", "application/octet-stream")

	// messageForm is the multipart form of a message: the JSON body's fields as
	// parts, and the attachment as the mediaFile part.
	messageForm = func() map[string]any {
		f := bodyOf(messageBody{})
		props := map[string]any{"mediaFile": binary}
		for k, v := range f["properties"].(map[string]any) {
			props[k] = v
		}
		// A part is text: the objects go as their JSON.
		props["location"] = typ("string", "contentMediaType", "application/json", "description", "The location object, as JSON.")
		props["contacts"] = typ("string", "contentMediaType", "application/json", "description", "The contacts array, as JSON.")
		return obj(nil, props)
	}()

	// directSchema documents the typing fields of a direct send on a body schema.
	directSchema = func(s map[string]any) map[string]any {
		return typingSchema(s, "Show \"typing…\" for 0.4-0.8 s (plus typingSeconds) before a text message, on engines that can; ignored for other types.", true)
	}

	// scheduledSchema documents the typing fields of a scheduled send on a body
	// schema: typing only when asked for, when the message is sent.
	scheduledSchema = func(s map[string]any) map[string]any {
		return typingSchema(s, "Show \"typing…\" for 0.4-0.8 s (plus typingSeconds) before a text message when it is sent, on engines that can; false by default, true when typingSeconds is given; ignored for other types.", false)
	}

	// typingSchema adds withTyping (described by desc, defaulting to def) and
	// typingSeconds to a body schema.
	typingSchema = func(s map[string]any, desc string, def bool) map[string]any {
		props := map[string]any{}
		for k, v := range s["properties"].(map[string]any) {
			props[k] = v
		}
		props["withTyping"] = typ("boolean", "default", def, "description", desc)
		props["typingSeconds"] = typ("number", "minimum", 0, "maximum", 25, "default", 0, "description", "Seconds of typing added to the 0.4-0.8 s.")
		out := map[string]any{}
		for k, v := range s {
			out[k] = v
		}
		out["properties"] = props
		return out
	}

	pageParams = []apiParam{
		{"limit", "How many records to return (default 50).", typ("integer", "minimum", 1, "maximum", 200), false},
		{"skip", "How many records to pass over first.", typ("integer", "minimum", 0), false},
	}
)

func page(extra ...apiParam) []apiParam { return append(append([]apiParam{}, pageParams...), extra...) }

func q(name, desc string, schema map[string]any) apiParam {
	return apiParam{name: name, desc: desc, schema: schema}
}

// apiSchemas are the named shapes of the document.
var apiSchemas = map[string]any{
	"Error": obj([]string{"success", "error"}, map[string]any{
		"success": typ("boolean", "const", false),
		"error": obj([]string{"code", "message"}, map[string]any{
			"code":      typ("string", "description", "A stable machine-readable error code (docs/errors.md)."),
			"message":   typ("string", "description", "What went wrong, for a human."),
			"requestId": typ("string", "description", "The X-Request-Id of the request, for support."),
			"details": arrayOf(obj([]string{"path", "code", "message"}, map[string]any{
				"path": str, "code": str, "message": str,
			})),
		}),
	}),
	"Ping": obj([]string{"api", "accountId", "whatsappConnections"}, map[string]any{
		"api":       str,
		"accountId": str,
		"whatsappConnections": arrayOf(obj([]string{"id", "type", "connected"}, map[string]any{
			"id": str, "type": str, "connected": boolean,
		})),
		"message": str,
	}),
	"Account": obj([]string{"id", "name", "userEmail", "timezone", "createdAt"}, map[string]any{
		"id": str, "name": str, "userEmail": nullable("string"), "timezone": nullable("string"), "createdAt": dateTime,
	}),
	"MessageKey":  dataOf(view.Key{}),
	"ChatMessage": dataOf(view.ChatMessage{}),
	"Message": obj([]string{"id", "to", "type", "status", "createdAt"}, map[string]any{
		"id":                typ("string", "description", "The queue id of a queued or scheduled message, the network key otherwise."),
		"waMessageKey":      ref("MessageKey"),
		"to":                str,
		"type":              typ("string", "enum", []string{"text", "media", "poll", "location", "vcard"}),
		"text":              str,
		"mediaUrl":          str,
		"mediaKind":         str,
		"pollQuestion":      str,
		"pollOptions":       arrayOf(str),
		"pollAllowMultiple": boolean,
		"status":            str,
		"sendAt":            dateTime,
		"createdAt":         dateTime,
		"confirmedAt":       dateTime,
		"receivedAt":        dateTime,
		"readAt":            dateTime,
		"playedAt":          dateTime,
		"failedAt":          dateTime,
		"failureReason":     str,
		"secret":            typ("string", "description", "The caller's correlation tag, as given; it does not prevent duplicate sends."),
		"linkPreview":       dataOf(switchboard.LinkPreview{}),
		"campaignId":        str,
		"engineId":          typ("string", "description", "The engine (number) the message goes or went through."),
		"location":          dataOf(view.Location{}),
		"contacts":          arrayOf(dataOf(view.VCard{})),
	}),
	"Webhook": obj([]string{"id", "url", "events", "description", "status", "createdAt"}, map[string]any{
		"id": str, "url": typ("string", "format", "uri"), "events": arrayOf(str), "description": str,
		"status": str, "createdAt": dateTime,
		"secret": typ("string", "description", "The signing secret; only in the answer to a create."),
	}),
	"Delivery": obj([]string{"id", "webhookId", "eventId", "type", "status", "attempts", "createdAt", "attemptLog"}, map[string]any{
		"id": str, "webhookId": str, "eventId": str, "type": str, "status": str, "attempts": integer,
		"nextAttemptAt": dateTime, "lastAttemptAt": dateTime, "lastError": str, "createdAt": dateTime,
		"attemptLog": arrayOf(obj([]string{"number", "at"}, map[string]any{
			"number": integer, "at": dateTime, "statusCode": integer, "error": str,
		})),
	}),
	"Engine": obj([]string{"id", "type", "connected", "default", "state", "stream", "hasSynced", "kind", "name", "rejectCalls", "rejectCallsMessage", "connectedAt", "disconnectedAt", "createdAt", "updatedAt"}, map[string]any{
		"id": str, "type": str, "connected": boolean, "state": str,
		"default": typ("boolean", "description", "The workspace's default engine: the one set, else the first paired real engine."),
		"stream":  nullable("string"), "hasSynced": nullable("boolean"),
		"kind":               typ("string", "enum", []string{"sandbox", "gateway", "remote"}),
		"name":               str,
		"tokenPrefix":        str,
		"rejectCalls":        typ("boolean", "description", "Whether the engine rejects incoming calls at once (docs/calls.md)."),
		"rejectCallsMessage": nullable("string"),
		"restriction":        str,
		"restrictedUntil":    dateTime,
		"lastError":          nullable("string", "description", "The engine's last connection or pairing error (why pairing cannot start), kept after it recovers; null when it never had one."),
		"lastErrorAt":        nullable("string", "format", "date-time"),
		"connectedAt":        nullable("string", "format", "date-time"),
		"disconnectedAt":     nullable("string", "format", "date-time"),
		"createdAt":          dateTime,
		"updatedAt":          dateTime,
		"token":              typ("string", "description", "A remote engine's token; only in the answer to a create."),
	}),
	"Chat": obj([]string{"chatId", "chatType", "pinned", "archived", "unreadCount", "markedUnread"}, map[string]any{
		"chatId": str, "name": str, "chatType": str, "pinned": boolean, "archived": boolean,
		"lastMessageAt": dateTime, "unreadCount": integer, "markedUnread": boolean,
		"lastMessageText": str, "lastMessageFromMe": boolean, "messages": arrayOf(ref("ChatMessage")),
		"engineId": typ("string", "description", "The engine (number) of the chat's latest message."),
	}),
}

// idParam names the path parameters the document uses for the router's; chi
// routes sibling templates with different names (/messages/{chatId} beside
// /messages/{id}), which OpenAPI forbids, so the document names them alike.
var pathParamDesc = map[string]string{
	"id":           "The id of the resource.",
	"chatId":       "A chat: an E.164 phone number (+15551234567) or a chat id (<digits>@c.us, <digits>@lid, @g.us or @newsletter).",
	"waMessageKey": "The serialized network key of a message.",
	"deliveryId":   "The id of a delivery.",
	"itemId":       "The id of a board item.",
	"contactId":    "The id of an audience contact.",
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// docPath is the document's template for a routed path: /v1/messages/{chatId}
// and /v1/scheduled-messages/{chatId} share their template with a GET by id, so
// their parameter is named id there too.
func docPath(p string) string {
	switch p {
	case "/v1/messages/{chatId}", "/v1/scheduled-messages/{chatId}":
		return strings.Replace(p, "{chatId}", "{id}", 1)
	}
	return p
}

var errorDesc = map[int]string{
	400: "The request is malformed: a bad parameter, query value or JSON body.",
	401: "The API key is missing, malformed or revoked.",
	403: "The API key lacks the scope of the operation.",
	404: "The resource does not exist in the workspace.",
	409: "The resource is in a state that forbids the operation.",
	413: "The request body is too large.",
	415: "The request body is not JSON.",
	422: "The request body is well formed but breaks a rule.",
	429: "Too many requests for the API key.",
	500: "An unexpected failure.",
	501: "The feature is not configured on this server.",
	503: "No engine or dependency can serve the request now; retry later.",
	504: "The engine did not answer in time.",
}

func buildOpenAPI() map[string]any {
	paths := map[string]any{}
	tags := map[string]bool{}
	for _, o := range apiOperations {
		path := docPath(o.path)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		tags[o.tag] = true
		item[strings.ToLower(o.method)] = operationDoc(o, path)
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Switchboard API",
			"version":     "1",
			"description": "The REST API of Switchboard. Every answer is JSON: {success:true,data} on success, {success:false,error} on failure. Authenticate with an API key as a bearer token; the scope an operation needs is named on it.",
		},
		"servers":    []any{map[string]any{"url": "/"}},
		"tags":       tagObjects(tags),
		"security":   []any{map[string]any{"bearerAuth": []string{}}},
		"paths":      paths,
		"components": components(),
	}
}

// operationDoc is the OpenAPI operation of o, documented at path (docPath of
// o.path): its parameters, security, request body and responses, with every
// error status it can answer.
func operationDoc(o apiOp, path string) map[string]any {
	op := map[string]any{"operationId": o.id, "summary": o.summary, "tags": []string{o.tag}}
	params := pathAndQueryParams(o, path)
	if params != nil {
		op["parameters"] = params
	}
	if o.public {
		op["security"] = []any{}
		op["description"] = "Open without an API key."
		op["responses"] = map[string]any{"200": map[string]any{"description": o.summary + ".",
			"content": map[string]any{"application/json": map[string]any{"schema": typ("object")}}}}
		return op
	}
	errs := map[int]bool{401: true, 429: true, 500: true}
	if scope := o.needs(); scope != "" {
		errs[403] = true
		op["security"] = []any{map[string]any{"bearerAuth": []string{scope}}}
		op["description"] = "Needs the " + scope + " scope."
	} else {
		op["description"] = "Needs any valid API key."
	}
	if params != nil {
		errs[400] = true
	}
	for _, h := range o.header {
		params = append(params, map[string]any{"name": h.name, "in": "header", "required": h.required, "description": h.desc, "schema": h.schema})
		op["parameters"] = params
	}
	if o.body != nil {
		errs[400], errs[413], errs[415], errs[422] = true, true, true, true
		content := map[string]any{"application/json": map[string]any{"schema": o.body}}
		if o.form != nil {
			content["multipart/form-data"] = map[string]any{"schema": o.form}
		}
		op["requestBody"] = map[string]any{"required": !o.bodyOptional, "content": content}
	}
	for _, s := range o.errs {
		errs[s] = true
	}
	op["responses"] = responsesDoc(o, errs)
	return op
}

// pathAndQueryParams are the path parameters of path and the query parameters
// of o, in that order; nil when there are none.
func pathAndQueryParams(o apiOp, path string) []any {
	var params []any
	for _, m := range pathParamRE.FindAllStringSubmatch(path, -1) {
		desc := pathParamDesc[m[1]]
		if path != o.path && m[1] == "id" {
			desc = pathParamDesc["chatId"]
		}
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": desc, "schema": str})
	}
	for _, p := range o.query {
		params = append(params, map[string]any{"name": p.name, "in": "query", "required": p.required, "description": p.desc, "schema": p.schema})
	}
	return params
}

// responsesDoc is the responses object of o: its success (the data in the
// envelope, a page of it, or no body) and a reference to each status of errs.
func responsesDoc(o apiOp, errs map[int]bool) map[string]any {
	resp := map[string]any{}
	status := o.status
	if status == 0 {
		status = 200
	}
	if o.data == nil {
		resp[itoa(status)] = map[string]any{"description": "Done; no body."}
	} else {
		env := obj([]string{"success", "data"}, map[string]any{"success": typ("boolean", "const", true), "data": o.data})
		desc := "The resource."
		if o.list {
			env = obj([]string{"success", "data", "limit", "skip", "total"}, map[string]any{
				"success": typ("boolean", "const", true), "data": arrayOf(o.data),
				"limit": integer, "skip": integer, "total": integer,
			})
			desc = "A page of records and the total matching."
		}
		content := map[string]any{"application/json": map[string]any{"schema": env}}
		for mt, schema := range o.alt {
			content[mt] = map[string]any{"schema": schema}
		}
		resp[itoa(status)] = map[string]any{"description": desc, "content": content}
	}
	if o.id == "createBoardItem" || o.id == "scheduleMessage" {
		resp["200"] = resp[itoa(status)] // an idempotent repeat answers 200
	}
	codes := make([]int, 0, len(errs))
	for s := range errs {
		codes = append(codes, s)
	}
	sort.Ints(codes)
	for _, s := range codes {
		resp[itoa(s)] = map[string]any{"$ref": "#/components/responses/E" + itoa(s)}
	}
	return resp
}

// components are the document's shared schemas (records and API bodies), the
// error responses and the security scheme.
func components() map[string]any {
	schemas := map[string]any{}
	for _, m := range []map[string]any{recordSchemas, apiSchemas} {
		for k, v := range m {
			schemas[k] = v
		}
	}
	responses := map[string]any{}
	for s, d := range errorDesc {
		responses["E"+itoa(s)] = map[string]any{"description": d,
			"content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
	}
	return map[string]any{
		"schemas":   schemas,
		"responses": responses,
		"securitySchemes": map[string]any{"bearerAuth": map[string]any{
			"type": "http", "scheme": "bearer", "description": "An API key (Authorization: Bearer <key>).",
		}},
	}
}

// tagObjects lists the tags, sorted by name.
func tagObjects(tags map[string]bool) []any {
	tagList := make([]string, 0, len(tags))
	for t := range tags {
		tagList = append(tagList, t)
	}
	sort.Strings(tagList)
	var tagObjs []any
	for _, t := range tagList {
		tagObjs = append(tagObjs, map[string]any{"name": t})
	}
	return tagObjs
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

var openAPIDoc = sync.OnceValue(func() []byte {
	b, err := json.Marshal(buildOpenAPI())
	if err != nil {
		panic(err)
	}
	return b
})

// serveOpenAPI serves the document at GET /v1/openapi.json.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(openAPIDoc())
}

// bodyOf describes the JSON object that decodeJSON reads into a value of v's type:
// its json-tagged fields and no others (unknown fields are refused). A field whose
// type decodes itself is left open.
func bodyOf(v any) map[string]any { return schemaOfType(reflect.TypeOf(v), false) }

// dataOf describes the JSON encoding/json makes of a value of v's type: fields
// without omitempty are required, and those that can be nil (pointers, slices,
// maps) may be null.
func dataOf(v any) map[string]any { return schemaOfType(reflect.TypeOf(v), true) }

var (
	timeType        = reflect.TypeOf(time.Time{})
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	marshalerType   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func schemaOfType(t reflect.Type, resp bool) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return typ("string", "format", "date-time")
	case !resp && reflect.PointerTo(t).Implements(unmarshalerType),
		resp && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)):
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.String:
		return typ("string")
	case reflect.Bool:
		return typ("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return typ("integer")
	case reflect.Float32, reflect.Float64:
		return typ("number")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return typ("string", "contentEncoding", "base64")
		}
		return arrayOf(schemaOfType(t.Elem(), resp))
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOfType(t.Elem(), resp)}
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" { // an embedded struct's fields are the outer's
				inner := schemaOfType(f.Type, resp)
				for k, v := range inner["properties"].(map[string]any) {
					props[k] = v
				}
				if r, ok := inner["required"].([]string); ok {
					required = append(required, r...)
				}
				continue
			}
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fs := schemaOfType(f.Type, resp)
			omit := strings.Contains(opts, "omitempty")
			if resp && !omit {
				required = append(required, name)
				switch f.Type.Kind() {
				case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
					if tp, ok := fs["type"].(string); ok {
						fs["type"] = []string{tp, "null"}
					}
				}
			}
			props[name] = fs
		}
		out := map[string]any{"type": "object", "properties": props}
		if resp {
			sort.Strings(required)
			if required != nil {
				out["required"] = required
			}
		} else {
			out["additionalProperties"] = false
		}
		return out
	}
	return map[string]any{}
}

// recordSchemas are the named shapes rec derives from record types.
var recordSchemas = map[string]any{}

// rec names the shape of a record type among the document's schemas and refers to it.
func rec(name string, v any) map[string]any {
	recordSchemas[name] = dataOf(v)
	return ref(name)
}

// closed is obj refusing properties it does not name, as decodeJSON does.
func closed(required []string, props map[string]any) map[string]any {
	s := obj(required, props)
	s["additionalProperties"] = false
	return s
}
