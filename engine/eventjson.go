package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// eventJSON is an Event's JSON form: every field as tagged, and Pinned as
// pinnedMs, whole milliseconds. legacyPinned reads the nanoseconds of events
// stored (or sent) before durations travelled in milliseconds.
type eventJSON struct {
	eventFields
	PinnedMs     int64 `json:"pinnedMs,omitempty"`
	LegacyPinned int64 `json:"pinned,omitempty"`
}

// eventFields is Event without its methods, so that eventJSON does not call
// Event's MarshalJSON again.
type eventFields Event

// MarshalJSON writes the event with Pinned as pinnedMs (milliseconds).
func (ev Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{eventFields: eventFields(ev), PinnedMs: ev.Pinned.Milliseconds()})
}

// UnmarshalJSON reads an event written by MarshalJSON, or one whose pinned
// duration is in nanoseconds (the form before pinnedMs).
func (ev *Event) UnmarshalJSON(data []byte) error {
	var w eventJSON
	if err := json.Unmarshal(data, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Name the field as the wire does, not through eventJSON's embedding.
			te.Field = strings.TrimPrefix(te.Field, "eventFields.")
		}
		return err
	}
	*ev = Event(w.eventFields)
	switch {
	case w.PinnedMs != 0:
		ev.Pinned = time.Duration(w.PinnedMs) * time.Millisecond
	default:
		ev.Pinned = time.Duration(w.LegacyPinned)
	}
	return nil
}
