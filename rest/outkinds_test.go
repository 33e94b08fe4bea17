package rest_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/ent/event"
)

const (
	annCard = "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nTEL:+15550001001\nEND:VCARD"
	bobCard = "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nTEL:+15550001002\nEND:VCARD"
)

// eventData returns the data of every recorded event of typ whose data
// matches keep, oldest first.
func eventData(e *apptest.Env, typ string, keep func(map[string]any) bool) []map[string]any {
	e.T.Helper()
	evs, err := e.App.Client.Event.Query().Where(event.Type(typ)).Order(event.ByCreatedAt()).All(systemCtx())
	if err != nil {
		e.T.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		var data map[string]any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			e.T.Fatal(err)
		}
		if keep(data) {
			out = append(out, data)
		}
	}
	return out
}

// A location and contact cards are sent through the sandbox (directly, queued,
// and from a multipart form) to numbers that send them back: the answer, the
// stored message read back, the queue's message and the webhook data carry
// them; the echo comes in as a message of the same kind.
func TestSendLocationAndContactCardsThroughTheSandbox(t *testing.T) {
	e := newEnv(t)
	createWebhook(e, newReceiver(t, nil).URL, "message.queued", "new_message_received_webhook")
	loc := map[string]any{"latitude": 51.5007, "longitude": -0.1246, "name": "Big Ben", "address": "Westminster, London SW1A 0AA"}
	cards := []any{map[string]any{"displayName": "Ann", "vcard": annCard}, map[string]any{"displayName": "Bob", "vcard": bobCard}}
	one := []any{map[string]any{"displayName": "Ann", "vcard": annCard}}

	r := e.Do("POST", "/v1/messages/+15550016600", e.Key, map[string]any{"type": "location", "location": loc})
	if r.Status != 201 {
		t.Fatalf("send location = %d %s", r.Status, r.Raw)
	}
	sent := r.Data()
	if diff := cmp.Diff(loc, sent["location"]); diff != "" {
		t.Errorf("answer's location (-want +got):\n%s", diff)
	}
	queued := schedule(e, "+15550026600", map[string]any{"type": "vcard", "contacts": cards})
	if diff := cmp.Diff(cards, queued["contacts"]); diff != "" {
		t.Errorf("queued message's contacts (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "vcard")
	_ = mw.WriteField("contacts", `[{"displayName":"Ann","vcard":"`+strings.ReplaceAll(annCard, "\n", `\n`)+`"}]`)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+"/v1/messages/+15550036600", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.Key)
	if r := e.Send(req); r.Status != 201 {
		t.Fatalf("multipart card = %d %s", r.Status, r.Raw)
	}
	waitStatus(e, queued["id"].(string), "read")

	e.Eventually(10*time.Second, "the echoes", func() bool { return countEvents(e, "new_message_received_webhook") == 3 })
	for _, tc := range []struct {
		chat, typ, wireType string
		content             map[string]any
	}{
		{"15550016600@c.us", "location", "location", map[string]any{"location": loc}},
		{"15550026600@c.us", "vcard", "multi_vcard", map[string]any{"vCards": cards}},
		{"15550036600@c.us", "vcard", "vcard", map[string]any{"vCards": one}},
	} {
		want := map[string]any{"type": tc.typ, "wireType": tc.wireType}
		for k, v := range tc.content {
			want[k] = v
		}
		list := e.Do("GET", "/v1/messages?chatId="+tc.chat+"&messageTypes="+tc.wireType, e.Key, nil).List()
		if len(list) != 2 {
			t.Fatalf("%s messages of %s: %d, want 2 (sent and echoed)", tc.wireType, tc.chat, len(list))
		}
		var mine map[string]any
		for _, m := range list {
			if diff := cmp.Diff(want, contentShape(m)); diff != "" {
				t.Errorf("stored message of %s, fromMe %v (-want +got):\n%s", tc.chat, m["fromMe"], diff)
			}
			if m["fromMe"] == true {
				mine = m
			}
		}
		if mine == nil {
			t.Fatalf("%s: the sent message is not stored", tc.chat)
		}
		key := mine["waMessageKey"].(map[string]any)["_serialized"].(string)
		if diff := cmp.Diff(want, contentShape(e.Do("GET", "/v1/messages/"+key, e.Key, nil).Data())); diff != "" {
			t.Errorf("GET /v1/messages/%s (-want +got):\n%s", key, diff)
		}
		hooks := eventData(e, "new_message_received_webhook", func(d map[string]any) bool { return d["chatId"] == tc.chat })
		if len(hooks) != 1 {
			t.Fatalf("%s: %d new_message_received_webhook, want 1", tc.chat, len(hooks))
		}
		if diff := cmp.Diff(want, contentShape(hooks[0])); diff != "" {
			t.Errorf("echo's webhook data of %s (-want +got):\n%s", tc.chat, diff)
		}
	}
	queuedHooks := eventData(e, "message.queued", func(d map[string]any) bool { return d["type"] == "location" })
	if len(queuedHooks) != 1 || !cmp.Equal(loc, queuedHooks[0]["location"]) {
		t.Errorf("message.queued of the location: %v", queuedHooks)
	}
}

// GraphQL sends a location and a contact card and reads them back as
// structured fields.
func TestGraphQLSendsLocationAndContactCards(t *testing.T) {
	e := newEnv(t)
	data := gqlData(t, e, `mutation($card: String!) {
		a: sendMessage(chatId: "+15550046600", input: {type: "location", location: {latitude: -33.8568, longitude: 151.2153, name: "Opera House"}}) {
			type wireType location { latitude longitude name address } contacts { vcard } }
		b: scheduleMessage(chatId: "+15550056600", input: {type: "vcard", contacts: [{displayName: "Ann", vcard: $card}]}) {
			message { type wireType location { latitude } contacts { displayName vcard } } } }`, map[string]any{"card": annCard})
	want := map[string]any{
		"a": map[string]any{"type": "location", "wireType": "location", "contacts": nil,
			"location": map[string]any{"latitude": -33.8568, "longitude": 151.2153, "name": "Opera House", "address": ""}},
		"b": map[string]any{"message": map[string]any{"type": "vcard", "wireType": "vcard", "location": nil,
			"contacts": []any{map[string]any{"displayName": "Ann", "vcard": annCard}}}},
	}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("GraphQL (-want +got):\n%s", diff)
	}
}

// Bad locations and contact cards are refused with 422 (400 for a body that
// is not the right shape), the details naming the field.
func TestLocationAndContactCardValidation(t *testing.T) {
	e := newEnv(t)
	type detail struct{ Path, Code string }
	loc := func(lat, lng float64) map[string]any { return map[string]any{"latitude": lat, "longitude": lng} }
	card := func(v string) []any { return []any{map[string]any{"vcard": v}} }
	many := make([]any, 257)
	for i := range many {
		many[i] = map[string]any{"vcard": annCard}
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
		want   []detail
	}{
		{"latitude above 90", map[string]any{"type": "location", "location": loc(90.5, 0)}, 422, []detail{{"location.latitude", "too_big"}}},
		{"latitude below -90", map[string]any{"type": "location", "location": loc(-91, 0)}, 422, []detail{{"location.latitude", "too_big"}}},
		{"longitude outside", map[string]any{"type": "location", "location": loc(0, 180.01)}, 422, []detail{{"location.longitude", "too_big"}}},
		{"both out", map[string]any{"type": "location", "location": loc(-100, -200)}, 422,
			[]detail{{"location.latitude", "too_big"}, {"location.longitude", "too_big"}}},
		{"no location", map[string]any{"type": "location"}, 422, []detail{{"location", "invalid_type"}}},
		{"a long name", map[string]any{"type": "location", "location": map[string]any{"latitude": 1, "longitude": 1,
			"name": strings.Repeat("n", 1025)}}, 422, []detail{{"location.name", "too_big"}}},
		{"location with text", map[string]any{"type": "location", "text": "here", "location": loc(1, 1)}, 422, []detail{{"text", "unrecognized_keys"}}},
		{"location and contacts", map[string]any{"type": "location", "location": loc(1, 1), "contacts": card(annCard)}, 422,
			[]detail{{"contacts", "unrecognized_keys"}}},
		{"contacts on a text", map[string]any{"type": "text", "text": "hi", "contacts": card(annCard)}, 422, []detail{{"contacts", "unrecognized_keys"}}},
		{"location on a text", map[string]any{"type": "text", "text": "hi", "location": loc(1, 1)}, 422, []detail{{"location", "unrecognized_keys"}}},
		{"no cards", map[string]any{"type": "vcard", "contacts": []any{}}, 422, []detail{{"contacts", "too_small"}}},
		{"257 cards", map[string]any{"type": "vcard", "contacts": many}, 422, []detail{{"contacts", "too_big"}}},
		{"empty vcard", map[string]any{"type": "vcard", "contacts": card("")}, 422, []detail{{"contacts.0.vcard", "invalid_string"}}},
		{"not a vcard", map[string]any{"type": "vcard", "contacts": card("FN:Ann")}, 422, []detail{{"contacts.0.vcard", "invalid_string"}}},
		{"no END", map[string]any{"type": "vcard", "contacts": card("BEGIN:VCARD\nFN:Ann\n")}, 422, []detail{{"contacts.0.vcard", "invalid_string"}}},
		{"nothing inside", map[string]any{"type": "vcard", "contacts": card("BEGIN:VCARD\nEND:VCARD")}, 422, []detail{{"contacts.0.vcard", "invalid_string"}}},
		{"a vcard over 64 KiB", map[string]any{"type": "vcard", "contacts": card("BEGIN:VCARD\nNOTE:" + strings.Repeat("x", 64<<10) + "\nEND:VCARD")}, 422,
			[]detail{{"contacts.0.vcard", "too_big"}}},
		{"second card bad", map[string]any{"type": "vcard", "contacts": []any{map[string]any{"vcard": annCard}, map[string]any{"vcard": "x"}}}, 422,
			[]detail{{"contacts.1.vcard", "invalid_string"}}},
		{"latitude a string", map[string]any{"type": "location", "location": map[string]any{"latitude": "51", "longitude": 0}}, 400, nil},
		{"a card field unknown", map[string]any{"type": "vcard", "contacts": []any{map[string]any{"vcard": annCard, "phone": "+1"}}}, 400, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/messages/+15550060001", "/v1/scheduled-messages/+15550060001"} {
				r := e.Do("POST", path, e.Key, tc.body)
				if r.Status != tc.status {
					t.Fatalf("POST %s = %d %s, want %d", path, r.Status, r.Raw, tc.status)
				}
				if tc.want == nil {
					if len(r.DetailPaths()) == 0 {
						t.Errorf("POST %s: no details: %s", path, r.Raw)
					}
					continue
				}
				var got []detail
				for _, d := range r.Error()["details"].([]any) {
					m := d.(map[string]any)
					got = append(got, detail{m["path"].(string), m["code"].(string)})
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("POST %s details (-want +got):\n%s", path, diff)
				}
			}
		})
	}
}

// A scheduled text with withTyping (or typingSeconds) shows "typing…" when its
// dispatch task sends it, for 0.4-0.8 s plus typingSeconds; one without does
// not, nor does a location with withTyping.
func TestScheduledSendKeepsItsTyping(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	ids := []string{
		schedule(e, "+15550070001", map[string]any{"type": "text", "text": "typed", "withTyping": true, "typingSeconds": 2})["id"].(string),
		schedule(e, "+15550070002", map[string]any{"type": "text", "text": "seconds only", "typingSeconds": 1})["id"].(string),
		schedule(e, "+15550070003", map[string]any{"type": "text", "text": "plain"})["id"].(string),
		schedule(e, "+15550070004", map[string]any{"type": "location", "location": map[string]any{"latitude": 1, "longitude": 2}, "withTyping": true})["id"].(string),
	}
	for _, id := range ids {
		waitStatus(e, id, "read")
	}
	got := map[string]time.Duration{}
	for _, ty := range e.App.Sandbox.Typing(ws) {
		got[ty.Chat] = ty.For
	}
	ms := time.Millisecond
	between := func(d, lo, hi time.Duration) bool { return d >= lo && d <= hi }
	if len(got) != 2 || !between(got["15550070001@c.us"], 2400*ms, 2800*ms) || !between(got["15550070002@c.us"], 1400*ms, 1800*ms) {
		t.Errorf("typing shown %v; want 2.4-2.8 s in ...0001 and 1.4-1.8 s in ...0002 only", got)
	}
	if r := e.Do("POST", "/v1/scheduled-messages/+15550070005", e.Key, map[string]any{"type": "text", "text": "x", "typingSeconds": 26}); r.Status != 422 ||
		!cmp.Equal(r.DetailPaths(), []string{"typingSeconds"}) {
		t.Errorf("typingSeconds 26 = %d %s", r.Status, r.Raw)
	}
}

// A campaign with pacing.typingSeconds shows "typing…" for that long before
// each of its text messages, through the real step and dispatch handlers, inside
// the delay between messages: the messages are still made a delay apart. The
// typing may not outlast the shortest delay.
func TestCampaignTypesBeforeEachMessage(t *testing.T) {
	e := newEnv(t)
	ws := workspaceOf(e)
	contacts := phones(700, 3)
	aud := createAudience(e, e.Key, map[string]any{"name": "Typed", "contacts": contacts})
	pacing := map[string]any{"minDelaySeconds": 1, "maxDelaySeconds": 1, "dailyCap": 100000, "typingSeconds": 1}
	id := createCampaign(e, e.Key, map[string]any{"name": "Typed", "audienceId": aud["id"], "text": "Hi {firstName}", "pacing": pacing})["cmpId"].(string)
	waitCampaign(e, id, "complete_delivered")
	got := map[string]time.Duration{}
	for _, ty := range e.App.Sandbox.Typing(ws) {
		got[ty.Chat] = ty.For
	}
	want := map[string]time.Duration{}
	for _, j := range jids(contacts) {
		want[j] = time.Second
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("typing shown (-want +got):\n%s", diff)
	}
	ms := campaignMessages(e, id)
	sort.Slice(ms, func(i, j int) bool { return ms[i].CreatedAt.Before(ms[j].CreatedAt) })
	for i := 1; i < len(ms); i++ {
		if gap := ms[i].CreatedAt.Sub(ms[i-1].CreatedAt); gap < 900*time.Millisecond || gap > 1900*time.Millisecond {
			t.Errorf("message %d made %v after the one before; want the 1 s delay, typing inside it", i, gap)
		}
	}
	graph := gqlData(t, e, `query($id: ID!) { campaign(id: $id) { pacing { typingSeconds minDelaySeconds } } }`, map[string]any{"id": id})
	if diff := cmp.Diff(map[string]any{"campaign": map[string]any{"pacing": map[string]any{"typingSeconds": 1.0, "minDelaySeconds": 1.0}}}, graph); diff != "" {
		t.Errorf("GraphQL pacing (-want +got):\n%s", diff)
	}
	for _, p := range []map[string]any{
		{"minDelaySeconds": 1, "maxDelaySeconds": 2, "typingSeconds": 1.5},
		{"minDelaySeconds": 0, "maxDelaySeconds": 0, "typingSeconds": 1},
		{"minDelaySeconds": 30, "maxDelaySeconds": 40, "typingSeconds": 26},
		{"minDelaySeconds": 30, "maxDelaySeconds": 40, "typingSeconds": -1},
	} {
		r := e.Do("POST", "/v1/campaigns", e.Key, map[string]any{"name": "Bad", "audienceId": aud["id"], "text": "x", "pacing": p})
		if r.Status != 422 || !cmp.Equal(r.DetailPaths(), []string{"pacing.typingSeconds"}) {
			t.Errorf("pacing %v = %d %s", p, r.Status, r.Raw)
		}
	}
}

// A queued location or card message is edited like any other: a new location
// replaces the old one, an unchanged type keeps its content, and a change of
// type drops it; the stored row (its wire type) follows.
func TestEditQueuedLocationAndCards(t *testing.T) {
	e := newEnv(t)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	id := schedule(e, "+15550080001", map[string]any{"type": "location", "sendAt": later,
		"location": map[string]any{"latitude": 1, "longitude": 2, "name": "Old"}})["id"].(string)
	patch := func(body map[string]any) map[string]any {
		t.Helper()
		r := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, body)
		if r.Status != 200 {
			t.Fatalf("PATCH %v = %d %s", body, r.Status, r.Raw)
		}
		return r.Data()
	}
	shape := func(m map[string]any) map[string]any {
		out := map[string]any{"type": m["type"]}
		for _, k := range []string{"location", "contacts", "text"} {
			if v, ok := m[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	wire := func() string {
		t.Helper()
		m, err := e.App.Client.Message.Get(systemCtx(), id)
		if err != nil {
			t.Fatal(err)
		}
		return m.WireType
	}
	steps := []struct {
		body     map[string]any
		want     map[string]any
		wireType string
	}{
		{map[string]any{"location": map[string]any{"latitude": -3, "longitude": 4}}, map[string]any{"type": "location",
			"location": map[string]any{"latitude": -3.0, "longitude": 4.0}}, "location"},
		{map[string]any{"sendAt": time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)}, map[string]any{"type": "location",
			"location": map[string]any{"latitude": -3.0, "longitude": 4.0}}, "location"},
		{map[string]any{"type": "vcard", "contacts": []any{map[string]any{"vcard": annCard}, map[string]any{"vcard": bobCard}}},
			map[string]any{"type": "vcard", "contacts": []any{map[string]any{"vcard": annCard}, map[string]any{"vcard": bobCard}}}, "multi_vcard"},
		{map[string]any{"type": "text", "text": "plain after all"}, map[string]any{"type": "text", "text": "plain after all"}, "chat"},
	}
	for i, st := range steps {
		if diff := cmp.Diff(st.want, shape(patch(st.body))); diff != "" {
			t.Errorf("step %d (-want +got):\n%s", i, diff)
		}
		if got := wire(); got != st.wireType {
			t.Errorf("step %d: wire type %q, want %q", i, got, st.wireType)
		}
	}
	if r := e.Do("PATCH", "/v1/scheduled-messages/"+id, e.Key, map[string]any{"location": map[string]any{"latitude": 1, "longitude": 1}}); r.Status != 422 ||
		!cmp.Equal(r.DetailPaths(), []string{"location"}) {
		t.Errorf("a location on a text = %d %s", r.Status, r.Raw)
	}
}
