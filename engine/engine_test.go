package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyRoundTrip(t *testing.T) {
	tests := []Key{
		{FromMe: true, Remote: "15551234567@c.us", ID: "3EB0ABC"},
		{FromMe: false, Remote: "120363426216988013@g.us", ID: "3EB0659D", Participant: "188450464616609@lid"},
	}
	for _, k := range tests {
		got, ok := ParseKey(k.Serialized())
		if !ok || !cmp.Equal(got, k) {
			t.Errorf("ParseKey(%q) = %+v, %v", k.Serialized(), got, ok)
		}
	}
	for _, bad := range []string{"", "true_x", "maybe_1@c.us_ID", "true__ID", "true_1@c.us_ID_p_extra"} {
		if _, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) succeeded", bad)
		}
	}
}

func TestWireIDIsStable(t *testing.T) {
	if WireID("msg_a") != WireID("msg_a") || WireID("msg_a") == WireID("msg_b") || len(WireID("msg_a")) != 22 {
		t.Errorf("WireID not a stable 22-char id: %s", WireID("msg_a"))
	}
}

// An order key names its workspace, engine and subject, and gives them back.
func TestOrderKey(t *testing.T) {
	ev := Event{Type: EventMessage, WorkspaceID: "ws_a", EngineID: "eng_1",
		Message: &Incoming{Key: Key{Remote: "1@c.us", ID: "A|B"}}}
	key := ev.OrderKey()
	if key != "ws:ws_a|eng_1|message:false_1@c.us_A|B" {
		t.Errorf("order key = %q", key)
	}
	ws, eng, subject, ok := ParseOrderKey(key)
	if !ok || ws != "ws_a" || eng != "eng_1" || subject != ev.Subject() {
		t.Errorf("ParseOrderKey(%q) = %q %q %q %v", key, ws, eng, subject, ok)
	}
	other := ev
	other.WorkspaceID = "ws_b"
	if other.OrderKey() == key {
		t.Error("two workspaces share an order key")
	}
	if got := SubjectOf("message:false_1@c.us_X"); got != "message:false_1@c.us_X" {
		t.Errorf("SubjectOf(a bare subject) = %q", got)
	}
}
