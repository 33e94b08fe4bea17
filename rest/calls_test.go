package rest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A simulated call is a call.received event; once the engine rejects calls,
// the next one is rejected and its caller answered with the engine's message,
// sent as a stored message of the caller's chat. The settings are validated
// and need engines:write.
func TestCallsRejectedAndAnswered(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "call.received")
	engineID := e.Do("GET", "/v1/profile", e.Key, nil).Data()["engineId"].(string)

	r := e.Do("POST", "/v1/sandbox/calls", e.Key, map[string]any{"from": "+15550301001", "video": true})
	if r.Status != 201 || r.Data()["rejected"] != false || r.Data()["from"] != "15550301001@c.us" || r.Data()["engineId"] != engineID {
		t.Fatalf("simulate call: %d %s", r.Status, r.Raw)
	}
	first := r.Data()["id"].(string)
	msg := "Sorry, we cannot take calls here. Please write to us."
	r = e.Do("PATCH", "/v1/engines/"+engineID+"/calls", e.Key, map[string]any{"rejectCalls": true, "rejectCallsMessage": msg})
	if r.Status != 200 || r.Data()["rejectCalls"] != true || r.Data()["rejectCallsMessage"] != msg {
		t.Fatalf("set call settings: %d %s", r.Status, r.Raw)
	}
	if got := e.Do("GET", "/v1/engines/"+engineID, e.Key, nil).Data(); got["rejectCalls"] != true {
		t.Errorf("engine after the change: %v", got)
	}
	r = e.Do("POST", "/v1/sandbox/calls", e.Key, map[string]any{"from": "15550301002@c.us", "group": true})
	if r.Status != 201 || r.Data()["rejected"] != true {
		t.Fatalf("simulate a call to reject: %d %s", r.Status, r.Raw)
	}
	second := r.Data()["id"].(string)

	e.Eventually(15*time.Second, "two call.received events", func() bool { return len(rc.ofType("call.received")) == 2 })
	type call struct {
		ID, From               string
		Video, Group, Rejected bool
	}
	var got []call
	for _, d := range rc.ofType("call.received") {
		data := d.payload["data"].(map[string]any)
		if data["engineId"] != engineID || data["at"] == nil {
			t.Errorf("call.received data %v", data)
		}
		got = append(got, call{ID: data["id"].(string), From: data["from"].(string), Video: data["video"].(bool), Group: data["group"].(bool), Rejected: data["rejected"].(bool)})
	}
	if len(got) == 2 && got[0].ID == second {
		got[0], got[1] = got[1], got[0]
	}
	want := []call{{ID: first, From: "15550301001@c.us", Video: true}, {ID: second, From: "15550301002@c.us", Group: true, Rejected: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("call.received (-want +got):\n%s", diff)
	}
	e.Eventually(15*time.Second, "the answer to the rejected caller is stored", func() bool {
		for _, m := range e.Do("GET", "/v1/messages?chatId=15550301002@c.us", e.Key, nil).List() {
			if m["text"] == msg && m["fromMe"] == true {
				return true
			}
		}
		return false
	})
	if n := len(e.Do("GET", "/v1/messages?chatId=15550301001@c.us", e.Key, nil).List()); n != 0 {
		t.Errorf("the caller of the call not rejected got %d messages", n)
	}

	writer := e.NewKey("default", "engines:read")
	for _, tc := range []struct {
		name, key, method, path string
		body                    any
		want                    string
	}{
		{"nothing to change", e.Key, "PATCH", "/v1/engines/" + engineID + "/calls", map[string]any{}, "422 validation_failed body:too_small"},
		{"message too long", e.Key, "PATCH", "/v1/engines/" + engineID + "/calls", map[string]any{"rejectCallsMessage": strings.Repeat("m", 4097)}, "422 validation_failed rejectCallsMessage:too_big"},
		{"unknown engine", e.Key, "PATCH", "/v1/engines/eng_nope/calls", map[string]any{"rejectCalls": false}, "404 not_found id:not_found"},
		{"read-only key", writer, "PATCH", "/v1/engines/" + engineID + "/calls", map[string]any{"rejectCalls": false}, "403 insufficient_scope"},
		{"caller not a number", e.Key, "POST", "/v1/sandbox/calls", map[string]any{"from": "nobody"}, "422 validation_failed from:invalid_string"},
		{"caller missing", e.Key, "POST", "/v1/sandbox/calls", map[string]any{}, "422 validation_failed from:invalid_string"},
		{"simulating needs admin", writer, "POST", "/v1/sandbox/calls", map[string]any{"from": "+15550301003"}, "403 insufficient_scope"},
	} {
		if r := e.Do(tc.method, tc.path, tc.key, tc.body); !strings.HasPrefix(errorOf(r), tc.want) {
			t.Errorf("%s: %s, want %s (%s)", tc.name, errorOf(r), tc.want, r.Raw)
		}
	}
}
