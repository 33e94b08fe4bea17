package graph

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
)

// problems is an error's details as "path:code", nil for no error.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var e *switchboard.Error
	if !errors.As(err, &e) {
		return []string{"not an application error: " + err.Error()}
	}
	out := []string{e.Code}
	for _, d := range e.Details {
		out = append(out, d.Path+":"+d.Code)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// Every rule of a message, in one table: what each input answers.
func TestBuildDraftRules(t *testing.T) {
	now := time.Date(2030, 1, 2, 15, 0, 0, 0, time.UTC)
	public := func(string) error { return nil }
	private := func(string) error { return errors.New("resolves to a private address") }
	text := func(s string) model.MessageInput { return model.MessageInput{Type: "text", Text: &s} }
	poll := func(q string, opts ...string) model.MessageInput {
		return model.MessageInput{Type: "poll", PollQuestion: &q, PollOptions: opts}
	}
	at := func(in model.MessageInput, sendAt string) model.MessageInput { in.SendAt = &sendAt; return in }
	tests := []struct {
		name  string
		in    model.MessageInput
		rule  sendAtRule
		check func(string) error
		want  []string
	}{
		{"text", text("hi"), sendAtAllowed, public, nil},
		{"blank text", text("  "), sendAtAllowed, public, []string{"validation_failed", "text:too_small"}},
		{"text at the bound", text(strings.Repeat("é", maxText)), sendAtAllowed, public, nil},
		{"text past the bound", text(strings.Repeat("é", maxText+1)), sendAtAllowed, public, []string{"validation_failed", "text:too_big"}},
		{"unknown type", model.MessageInput{Type: "sticker"}, sendAtAllowed, public, []string{"validation_failed", "type:invalid_enum_value"}},
		{"media without content", model.MessageInput{Type: "media"}, sendAtAllowed, public, []string{"validation_failed", "mediaUrl:invalid_type"}},
		{"media from a private address", model.MessageInput{Type: "media", MediaURL: ptr("https://10.0.0.1/a.png")}, sendAtAllowed, private,
			[]string{"validation_failed", "mediaUrl:invalid_string"}},
		{"media fields on text", model.MessageInput{Type: "text", Text: ptr("x"), MediaURL: ptr("https://example.com/a.png")}, sendAtAllowed, public,
			[]string{"validation_failed", "mediaUrl:unrecognized_keys"}},
		{"an image upload as image", model.MessageInput{Type: "media", MediaBase64: ptr("data:image/png;base64,iVBORw0KGgo="), MediaKind: ptr("image")},
			sendAtAllowed, public, nil},
		{"a PDF upload as image", model.MessageInput{Type: "media", MediaBase64: ptr("JVBERi0xLjQK"), MediaKind: ptr("image")}, sendAtAllowed, public,
			[]string{"validation_failed", "mediaKind:invalid_type"}},
		{"a PDF upload as voice", model.MessageInput{Type: "media", MediaBase64: ptr("data:application/pdf;base64,JVBERi0xLjQK"), MediaKind: ptr("voice")},
			sendAtAllowed, public, []string{"validation_failed", "mediaKind:invalid_type"}},
		{"a PDF upload as document", model.MessageInput{Type: "media", MediaBase64: ptr("JVBERi0xLjQK"), MediaKind: ptr("document")}, sendAtAllowed, public, nil},
		{"an SVG upload as sticker", model.MessageInput{Type: "media", MediaBase64: ptr("data:image/svg+xml;base64,PHN2Zy8+"), MediaKind: ptr("sticker")},
			sendAtAllowed, public, []string{"validation_failed", "mediaKind:invalid_type"}},
		{"a GIF upload as gif", model.MessageInput{Type: "media", MediaBase64: ptr("data:image/gif;base64,R0lGODlh"), MediaKind: ptr("gif")}, sendAtAllowed, public, nil},
		{"an Ogg upload as voice", model.MessageInput{Type: "media", MediaBase64: ptr("data:audio/ogg; codecs=opus;base64,T2dnUw=="), MediaKind: ptr("voice")},
			sendAtAllowed, public, nil},
		{"poll", poll("Lunch?", "Yes", "No"), sendAtAllowed, public, nil},
		{"poll with one option", poll("Lunch?", "Yes"), sendAtAllowed, public, []string{"validation_failed", "pollOptions:too_small"}},
		{"poll with 13 options", poll("Q", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"), sendAtAllowed, public,
			[]string{"validation_failed", "pollOptions:too_big"}},
		{"poll options unique whatever the case", poll("Q", "Yes", " yes "), sendAtAllowed, public, []string{"validation_failed", "pollOptions.1:custom"}},
		{"poll without a question", poll(" ", "a", "b"), sendAtAllowed, public, []string{"validation_failed", "pollQuestion:too_small"}},
		{"poll fields on text", model.MessageInput{Type: "text", Text: ptr("x"), PollQuestion: ptr("Q")}, sendAtAllowed, public,
			[]string{"validation_failed", "pollQuestion:unrecognized_keys"}},
		{"sendAt in a minute", at(text("x"), "2030-01-02T15:01:00Z"), sendAtAllowed, public, nil},
		{"sendAt in 5 seconds", at(text("x"), "2030-01-02T15:00:05Z"), sendAtAllowed, public, []string{"validation_failed", "sendAt:too_small"}},
		{"sendAt in two years", at(text("x"), "2032-01-02T15:00:00Z"), sendAtAllowed, public, []string{"validation_failed", "sendAt:too_big"}},
		{"sendAt not a date", at(text("x"), "tomorrow"), sendAtAllowed, public, []string{"validation_failed", "sendAt:invalid_date"}},
		{"sendAt on a direct send", at(text("x"), "2030-01-02T15:01:00Z"), sendAtForbidden, public, []string{"validation_failed", "sendAt:unrecognized_keys"}},
		{"an empty secret", model.MessageInput{Type: "text", Text: ptr("x"), Secret: ptr("")}, sendAtAllowed, public, []string{"validation_failed", "secret:too_big"}},
		{"location", model.MessageInput{Type: "location", Location: &model.LocationInput{Latitude: -90, Longitude: 180}}, sendAtAllowed, public, nil},
		{"NaN latitude", model.MessageInput{Type: "location", Location: &model.LocationInput{Latitude: math.NaN(), Longitude: 1}}, sendAtAllowed, public,
			[]string{"validation_failed", "location.latitude:too_big"}},
		{"infinite longitude", model.MessageInput{Type: "location", Location: &model.LocationInput{Latitude: 1, Longitude: math.Inf(-1)}}, sendAtAllowed, public,
			[]string{"validation_failed", "location.longitude:too_big"}},
		{"contact card", model.MessageInput{Type: "vcard", Contacts: []*model.ContactCardInput{{Vcard: "BEGIN:VCARD\r\nFN:A\r\nEND:VCARD"}}}, sendAtAllowed, public, nil},
		{"a video note", model.MessageInput{Type: "media", MediaURL: ptr("https://example.com/n.mp4"), MediaKind: ptr("ptv")}, sendAtAllowed, public, nil},
		{"every problem at once", model.MessageInput{Type: "poll", PollOptions: []string{"a"}, SendAt: ptr("never")}, sendAtAllowed, public,
			[]string{"validation_failed", "pollQuestion:too_small", "pollOptions:too_small", "sendAt:invalid_date"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildDraft("15551234567@c.us", tt.in, now, tt.rule, tt.check)
			if diff := cmp.Diff(tt.want, problems(err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// A draft keeps what the rules normalize: mentions from the text, once each;
// sendAt in UTC; a poll's trimmed question.
func TestBuildDraftNormalizes(t *testing.T) {
	now := time.Date(2030, 1, 2, 15, 0, 0, 0, time.UTC)
	in := model.MessageInput{Type: "text", SendAt: ptr("2030-01-02T17:01:00+02:00"),
		Text: ptr("hi @[Ann](15550001111@c.us) and @[Bo](15550002222@c.us), @[Ann](15550001111@c.us)")}
	d, err := buildDraft("15551234567@c.us", in, now, sendAtAllowed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"15550001111@c.us", "15550002222@c.us"}, d.Mentions); diff != "" {
		t.Errorf("mentions (-want +got):\n%s", diff)
	}
	if want := time.Date(2030, 1, 2, 15, 1, 0, 0, time.UTC); d.SendAt == nil || !d.SendAt.Equal(want) || d.SendAt.Location() != time.UTC {
		t.Errorf("sendAt = %v, want %v in UTC", d.SendAt, want)
	}
	p, err := buildDraft("1@c.us", model.MessageInput{Type: "poll", PollQuestion: ptr("  Lunch?  "), PollOptions: []string{"a", "b"}}, now, sendAtAllowed, nil)
	if err != nil || p.PollQuestion != "Lunch?" || p.PollAllowMultiple == nil || *p.PollAllowMultiple {
		t.Errorf("poll draft = %+v, %v", p, err)
	}
	v, err := buildDraft("1@c.us", model.MessageInput{Type: "vcard", Contacts: []*model.ContactCardInput{
		{DisplayName: ptr("Ann"), Vcard: "\n BEGIN:VCARD\nFN:Ann\nEND:VCARD \n"}, {Vcard: "BEGIN:VCARD\nFN:Bob\nEND:VCARD"}}}, now, sendAtAllowed, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.ContactCard{{DisplayName: "Ann", VCard: "BEGIN:VCARD\nFN:Ann\nEND:VCARD"}, {VCard: "BEGIN:VCARD\nFN:Bob\nEND:VCARD"}}
	if diff := cmp.Diff(want, v.Contacts); diff != "" {
		t.Errorf("cards, trimmed (-want +got):\n%s", diff)
	}
	l, err := buildDraft("1@c.us", model.MessageInput{Type: "location", Location: &model.LocationInput{Latitude: 1.5, Longitude: -2, Name: ptr("Here")}}, now, sendAtAllowed, nil)
	if err != nil || !cmp.Equal(l.Location, &engine.Location{Latitude: 1.5, Longitude: -2, Name: "Here"}) {
		t.Errorf("location draft = %+v, %v", l.Location, err)
	}
}

// Chat ids: an E.164 number becomes its c.us chat; a JID of each kind is kept;
// anything else is a 400 naming chatId.
func TestNormalizeChatID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"+15551234567", "15551234567@c.us"},
		{"15551234567@c.us", "15551234567@c.us"},
		{"188450464616609@lid", "188450464616609@lid"},
		{"120363426216988013@g.us", "120363426216988013@g.us"},
		{"15551234567-1600000000@g.us", "15551234567-1600000000@g.us"},
		{"120363000000000001@newsletter", "120363000000000001@newsletter"},
		{"15551234567", ""},
		{"+0555", ""},
		{"1-2@lid", ""},
		{"12a@lid", ""},
		{"@c.us", ""},
		{"1@s.whatsapp.net", ""},
	}
	for _, tt := range tests {
		got, err := NormalizeChatID(tt.in)
		if tt.want == "" {
			if diff := cmp.Diff([]string{"invalid_request", "chatId:invalid_string"}, problems(err)); diff != "" {
				t.Errorf("NormalizeChatID(%q) problems (-want +got):\n%s", tt.in, diff)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeChatID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
