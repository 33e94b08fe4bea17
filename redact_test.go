package switchboard

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedact(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"query", "https://hooks.example.com/in?token=s3cret&x=1", "https://hooks.example.com/in?…"},
		{"password and query", "postgres://app:pw@db:5432/sb?sslmode=disable", "postgres://app:xxxxx@db:5432/sb?…"},
		{"fragment", "https://e.com/p#access_token=s3cret", "https://e.com/p#…"},
		{"plain", "https://e.com/p", "https://e.com/p"},
		{"media token", "https://sb.example.com/media/tok123/a.png", "https://sb.example.com/media/…/a.png"},
		{"song token", "http://127.0.0.1:8080/music/files/tok456.mp3", "http://127.0.0.1:8080/music/files/…"},
		{"unparsable", "http://us:er:pw@h%zz/x?token=s3cret", "http://xxxxx@h%zz/x?…"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%s) = %s, want %s", tt.name, got, tt.want)
		}
	}
	texts := []struct{ in, want string }{
		{`Post "https://h.example/in?token=s3cret": dial tcp 127.0.0.1:1: connect: connection refused`,
			`Post "https://h.example/in?…": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"/media/tok123/a.png", "/media/…/a.png"},
		{"/media/tok123", "/media/…"},
		{"/music/files/tok456.mp3", "/music/files/…"},
		{"/v1/messages/abc", "/v1/messages/abc"},
		{"redirect not followed: https://a/b?sig=1 then https://c/d", "redirect not followed: https://a/b?… then https://c/d"},
	}
	for _, tt := range texts {
		if got := RedactText(tt.in); got != tt.want {
			t.Errorf("RedactText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewRedactingHandler(NewRedactingHandler(slog.NewJSONHandler(&buf, nil))))
	u, _ := url.Parse("https://h/x?token=u1")
	log.With("base", "https://h/?token=w1").WithGroup("g").Info("fetch https://h/?token=m1 failed",
		"url", "https://h/?token=s1", "err", errors.New(`Get "https://h/?token=e1": EOF`), "u", u,
		slog.Group("inner", "path", "/media/t1/x.png"), "n", 3)
	out := buf.String()
	for _, secret := range []string{"w1", "m1", "s1", "e1", "u1", "t1"} {
		if strings.Contains(out, "token="+secret) || strings.Contains(out, "/"+secret+"/") {
			t.Errorf("%s in %s", secret, out)
		}
	}
	if diff := cmp.Diff(1, strings.Count(out, "\n")); diff != "" || !strings.Contains(out, `"n":3`) {
		t.Errorf("log line = %s", out)
	}
}
