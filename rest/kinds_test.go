package rest_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent/event"
)

// contentShape is what the chat message shape (REST and webhook data) says of
// a message's content: the fields this test compares.
func contentShape(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range []string{"type", "wireType", "text", "mediaKind", "mimetype", "filename", "size", "sha256", "width", "height",
		"duration", "location", "vCards", "rawType"} {
		if v, ok := m[f]; ok {
			out[f] = v
		}
	}
	return out
}

// wantShape is the chat message shape of in, written field by field.
func wantShape(in engine.Incoming) map[string]any {
	out := map[string]any{"type": in.Type, "wireType": in.WireType()}
	if in.Text != "" {
		out["text"] = in.Text
	}
	if md := in.Media; md != nil {
		for k, v := range map[string]any{"mediaKind": md.Kind, "mimetype": md.MimeType, "filename": md.Filename, "sha256": md.SHA256,
			"size": float64(md.Size), "width": float64(md.Width), "height": float64(md.Height), "duration": float64(md.Seconds)} {
			if v != "" && v != float64(0) {
				out[k] = v
			}
		}
	}
	if l := in.Location; l != nil {
		out["location"] = map[string]any{"latitude": l.Latitude, "longitude": l.Longitude, "name": l.Name, "address": l.Address}
	}
	if len(in.Contacts) > 0 {
		var cards []any
		for _, c := range in.Contacts {
			cards = append(cards, map[string]any{"displayName": c.DisplayName, "vcard": c.VCard})
		}
		out["vCards"] = cards
	}
	if in.RawType != "" {
		out["rawType"] = in.RawType
	}
	return out
}

// Every kind of message a contact sends is received through the sandbox and
// kept with its content: the stored message (GET /v1/messages, filtered by its
// wire type), the new_message_received_webhook data and GraphQL's
// storedMessages all carry it.
func TestReceiveEveryKindThroughTheSandbox(t *testing.T) {
	e := newEnv(t)
	createWebhook(e, newReceiver(t, nil).URL, "new_message_received_webhook")
	var digits []string
	for d := range sandbox.Kinds {
		digits = append(digits, d)
	}
	sort.Strings(digits)
	for _, d := range digits {
		schedule(e, "+1555000"+d, map[string]any{"type": "text", "text": "send me one"})
	}
	e.Eventually(10*time.Second, "an answer of every kind", func() bool {
		return countEvents(e, "new_message_received_webhook") == len(digits)
	})
	hooks := map[string]map[string]any{} // webhook data by chat
	evs, err := e.App.Client.Event.Query().Where(event.Type("new_message_received_webhook")).All(systemCtx())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		var data map[string]any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		hooks[data["chatId"].(string)] = data
	}
	perType := map[string]int{"chat": len(digits)} // the messages sent
	for _, in := range sandbox.Kinds {
		perType[in.WireType()]++
	}
	for typ, n := range perType { // each type filters its own among the chats' messages (the sandbox's history has more)
		got := 0
		for _, d := range digits {
			got += len(e.Do("GET", "/v1/messages?chatId=1555000"+d+"@c.us&messageTypes="+typ, e.Key, nil).List())
		}
		if got != n {
			t.Errorf("GET /v1/messages?messageTypes=%s: %d messages, want %d", typ, got, n)
		}
	}
	for _, d := range digits {
		in := sandbox.Kinds[d]
		chat := "1555000" + d + "@c.us"
		t.Run(in.WireType()+" from "+d, func(t *testing.T) {
			want := wantShape(in)
			list := e.Do("GET", "/v1/messages?chatId="+chat+"&messageTypes="+in.WireType(), e.Key, nil).List()
			if len(list) != 1 {
				t.Fatalf("GET /v1/messages?messageTypes=%s of %s: %d messages, want 1", in.WireType(), chat, len(list))
			}
			if diff := cmp.Diff(want, contentShape(list[0])); diff != "" {
				t.Errorf("stored message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, contentShape(hooks[chat])); diff != "" {
				t.Errorf("webhook data (-want +got):\n%s", diff)
			}
			res := gql(e, e.Key, fmt.Sprintf(`{ storedMessages(filter: {chatId: %q, messageTypes: [%q]}) { total items {
				type wireType text mediaKind mediaMime mediaFilename mediaSize mediaSha256 mediaWidth mediaHeight mediaSeconds
				latitude longitude locationName locationAddress vcards vcardNames rawType } } }`, chat, in.WireType()), nil)
			if len(res.Errors) > 0 {
				t.Fatalf("graphql: %+v", res.Errors)
			}
			items := res.Data["storedMessages"].(map[string]any)["items"].([]any)
			if len(items) != 1 {
				t.Fatalf("storedMessages: %d items, want 1", len(items))
			}
			if diff := cmp.Diff(wantGraph(in), items[0]); diff != "" {
				t.Errorf("GraphQL storedMessages (-want +got):\n%s", diff)
			}
		})
	}
}

// wantGraph is the GraphQL Message of in's content fields.
func wantGraph(in engine.Incoming) map[string]any {
	// Optional columns read as their zero value, nillable ones as null.
	out := map[string]any{"type": in.Type, "wireType": in.WireType(), "text": "", "mediaKind": "", "mediaMime": "",
		"mediaFilename": "", "mediaSize": 0.0, "mediaSha256": "", "mediaWidth": 0.0, "mediaHeight": 0.0, "mediaSeconds": 0.0,
		"latitude": nil, "longitude": nil, "locationName": "", "locationAddress": "", "vcards": nil, "vcardNames": nil, "rawType": ""}
	set := func(k string, v any) { out[k] = v }
	set("text", in.Text)
	set("rawType", in.RawType)
	if md := in.Media; md != nil {
		set("mediaKind", md.Kind)
		set("mediaMime", md.MimeType)
		set("mediaFilename", md.Filename)
		set("mediaSha256", md.SHA256)
		set("mediaSize", float64(md.Size))
		set("mediaWidth", float64(md.Width))
		set("mediaHeight", float64(md.Height))
		set("mediaSeconds", float64(md.Seconds))
	}
	if l := in.Location; l != nil {
		out["latitude"], out["longitude"] = l.Latitude, l.Longitude
		set("locationName", l.Name)
		set("locationAddress", l.Address)
	}
	if len(in.Contacts) > 0 {
		var cards, names []any
		for _, c := range in.Contacts {
			cards, names = append(cards, c.VCard), append(names, c.DisplayName)
		}
		out["vcards"], out["vcardNames"] = cards, names
	}
	return out
}
