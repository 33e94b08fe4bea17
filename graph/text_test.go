package graph

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
)

// TestCheckTextNamesTheField: checkText names the first bad string as the
// transports name it (REST's JSON names; an embedded struct's fields at its
// parent's level, as encoding/json decodes them), and leaves bytes alone.
func TestCheckTextNamesTheField(t *testing.T) {
	type inner struct {
		Text    *string  `json:"text"`
		Options []string `json:"pollOptions"`
	}
	type Exported struct {
		Caption string `json:"caption"`
	}
	type outer struct {
		inner
		*Exported
		Typing *bool  `json:"withTyping"`
		Hidden string `json:"-"`
		Raw    []byte `json:"raw"`
		hidden string
	}
	bad, good := "a\x00b", "ok"
	tests := []struct {
		name string
		args []any
		want string // the detail's path; "" for no error
	}{
		{"clean", []any{"", outer{inner: inner{Text: &good}}}, ""},
		{"NUL in a string", []any{"id", "x\x00"}, "id"},
		{"invalid UTF-8 in a pointer", []any{"chatId", &[]string{"\xff"}[0]}, "chatId"},
		{"a body's field", []any{"", inner{Text: &bad}}, "text"},
		{"an embedded struct's field", []any{"", outer{inner: inner{Text: &bad}}}, "text"},
		{"an embedded struct's list", []any{"", &outer{inner: inner{Options: []string{"a", bad}}}}, "pollOptions.1"},
		{"an embedded pointer's field", []any{"", outer{Exported: &Exported{Caption: bad}}}, "caption"},
		{"a named input's field", []any{"input", inner{Text: &bad}}, "input.text"},
		{"a map key", []any{"meta", map[string]string{bad: "v"}}, "meta.key"},
		{"a bare string body", []any{"", bad}, "body"},
		{"skipped: json -, bytes, unexported", []any{"", outer{Hidden: bad, Raw: []byte(bad), hidden: bad}}, ""},
		{"the first bad pair", []any{"a", "ok", "b", bad, "c", bad}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if err := checkText(tt.args...); err != nil {
				var se *switchboard.Error
				if !errors.As(err, &se) || se.Code != switchboard.EINVALID || len(se.Details) != 1 {
					t.Fatalf("err = %v, want one EINVALID detail", err)
				}
				got = se.Details[0].Path
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
}
