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
