package linkpreview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard"
)

func TestFirstURL(t *testing.T) {
	tests := map[string]string{
		"see https://example.com/a?b=1, then":    "https://example.com/a?b=1",
		"(http://x.io/path).":                    "http://x.io/path",
		"no links here":                          "",
		"two: https://one.example https://two.e": "https://one.example",
	}
	for text, want := range tests {
		if got := FirstURL(text); got != want {
			t.Errorf("FirstURL(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	page := `<html><head><title> Plain &amp; simple </title>
		<meta name="description" content="fallback description">
		<meta content='Open Graph title' property='og:title'>
		<meta property="og:image" content="https://img.example/i.png">
		<meta property="og:url" content="https://example.com/canonical"></head></html>`
	want := &switchboard.LinkPreview{Title: "Open Graph title", Description: "fallback description",
		CanonicalURL: "https://example.com/canonical", Thumbnail: "https://img.example/i.png"}
	if diff := cmp.Diff(want, Parse(page, "https://example.com/x")); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if got := Parse("<title>Only a title</title>", "https://e.com"); got.Title != "Only a title" || got.CanonicalURL != "https://e.com" {
		t.Errorf("Parse title-only = %+v", got)
	}
}
