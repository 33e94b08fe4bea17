package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A pin's duration travels as pinnedMs, whole milliseconds, and an event
// stored before that (pinned, nanoseconds) still reads as the same duration.
func TestEventPinnedTravelsInMilliseconds(t *testing.T) {
	ev := Event{ID: "p1", Type: EventPin, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Key: Key{Remote: "1@c.us", ID: "A"}, Pinned: 24 * time.Hour}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"pinnedMs":86400000`) || strings.Contains(string(raw), `"pinned"`) {
		t.Errorf("wire form %s, want pinnedMs 86400000", raw)
	}
	if !strings.Contains(string(raw), `"at":"2026-01-02T03:04:05Z"`) {
		t.Errorf("wire form %s, want at in RFC 3339", raw)
	}
	var back Event
	if err := json.Unmarshal(raw, &back); err != nil || back.Pinned != 24*time.Hour || back.ID != "p1" {
		t.Errorf("read back %+v, %v", back, err)
	}
	var legacy Event
	if err := json.Unmarshal([]byte(`{"type":"pin","pinned":3600000000000}`), &legacy); err != nil || legacy.Pinned != time.Hour {
		t.Errorf("legacy nanoseconds read as %v, %v", legacy.Pinned, err)
	}
}
