package graph

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
)

// broken is "<code>:<detail path>:<detail code>" of an error, "" for nil.
func broken(err error) string {
	if err == nil {
		return ""
	}
	var e *switchboard.Error
	if !errors.As(err, &e) {
		return "not a switchboard error: " + err.Error()
	}
	out := e.Code
	for _, d := range e.Details {
		out += ":" + d.Path + ":" + d.Code
	}
	return out
}

func TestEditRule(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	confirmed := func(ago time.Duration) *time.Time { t := now.Add(-ago); return &t }
	own := func(m ent.Message) *ent.Message {
		m.FromMe = true
		if m.ConfirmedAt == nil {
			m.ConfirmedAt = confirmed(time.Minute)
		}
		return &m
	}
	tests := []struct {
		name string
		m    *ent.Message
		want string
	}{
		{"own text", own(ent.Message{Type: "text", WireType: "chat", Text: "hi"}), ""},
		{"own image caption", own(ent.Message{Type: "media", MediaKind: "image", Text: "look"}), ""},
		{"received image caption (kind from wire type)", own(ent.Message{Type: "media", WireType: "video", Text: "look"}), ""},
		{"someone else's", &ent.Message{Type: "text", From: "15552223333@c.us", Text: "hi", ConfirmedAt: confirmed(time.Minute)},
			"conflict:waMessageKey:not_own_message"},
		{"revoked", own(ent.Message{Type: "text", WireType: "revoked"}), "conflict:waMessageKey:revoked"},
		{"media without caption", own(ent.Message{Type: "media", MediaKind: "image"}), "conflict:waMessageKey:no_caption"},
		{"voice note", own(ent.Message{Type: "media", MediaKind: "voice", Text: "x"}), "conflict:waMessageKey:not_editable"},
		{"poll", own(ent.Message{Type: "poll", PollQuestion: "?"}), "conflict:waMessageKey:not_editable"},
		{"at the end of the window", own(ent.Message{Type: "text", Text: "hi", ConfirmedAt: confirmed(engine.EditWindow)}), ""},
		{"past the window", own(ent.Message{Type: "text", Text: "hi", ConfirmedAt: confirmed(engine.EditWindow + time.Second)}),
			"conflict:waMessageKey:edit_window_passed"},
		{"past the window, by creation", &ent.Message{FromMe: true, Type: "text", Text: "hi", CreatedAt: now.Add(-time.Hour)},
			"conflict:waMessageKey:edit_window_passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, broken(editRule(tt.m, now))); diff != "" {
				t.Errorf("editRule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRevokeRule(t *testing.T) {
	tests := []struct {
		name string
		m    *ent.Message
		want string
	}{
		{"own", &ent.Message{FromMe: true, To: "15552223333@c.us", Type: "text"}, ""},
		{"own media", &ent.Message{FromMe: true, To: "15552223333@c.us", Type: "media"}, ""},
		{"a participant's in a group", &ent.Message{To: "120363000000000001@g.us", Type: "text"}, ""},
		{"a contact's in a direct chat", &ent.Message{To: "15552223333@c.us", Type: "text"}, "conflict:waMessageKey:not_own_message"},
		{"revoked", &ent.Message{FromMe: true, To: "15552223333@c.us", WireType: "revoked"}, "conflict:waMessageKey:revoked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, broken(revokeRule(tt.m))); diff != "" {
				t.Errorf("revokeRule (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckEditText(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"text", "fixed", ""},
		{"at the bound", strings.Repeat("é", maxText), ""},
		{"empty", "", "validation_failed:text:too_small"},
		{"blank", "  \n", "validation_failed:text:too_small"},
		{"past the bound", strings.Repeat("é", maxText+1), "validation_failed:text:too_big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, broken(checkEditText(tt.text))); diff != "" {
				t.Errorf("checkEditText (-want +got):\n%s", diff)
			}
		})
	}
}

// An engine's rejection is a conflict naming the rule; other errors pass.
func TestRefused(t *testing.T) {
	if got := broken(refused(engine.ErrRejected)); got != "conflict:waMessageKey:rejected" {
		t.Errorf("rejected: %s", got)
	}
	other := errors.New("boom")
	if refused(other) != other {
		t.Error("other errors must pass unchanged")
	}
}
