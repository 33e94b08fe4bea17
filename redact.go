package switchboard

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
)

// Redaction keeps credentials out of logs and error texts. A URL loses its
// password, its query and its fragment (a webhook's ?token=…, a presigned
// link's signature); a path under one of SecretPathPrefixes loses its next
// segment, the token that is the file's only credential. What is left (scheme,
// host, path) still says which endpoint or file a line is about.

// Redacted stands for a removed secret.
const Redacted = "…"

// SecretPathPrefixes are the path prefixes whose next segment is a credential:
// stored attachments (/media/<token>/<name>) and finished songs and covers
// (music.FilesPrefix, /music/files/<token>.<ext>).
var SecretPathPrefixes = []string{"/media/", "/music/files/"}

var (
	urlRE        = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>` + "`" + `]+`)
	secretPathRE = func() *regexp.Regexp {
		quoted := make([]string, len(SecretPathPrefixes))
		for i, p := range SecretPathPrefixes {
			quoted[i] = regexp.QuoteMeta(p)
		}
		return regexp.MustCompile(`(` + strings.Join(quoted, "|") + `)[^/\s?#"'<>` + "`" + `]+`)
	}()
)

// RedactURL returns raw for a log line or an error text: its password (or whole
// user part, when raw does not parse) replaced, its query and fragment replaced
// by Redacted, and the token of a secret path (RedactPath) replaced.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		query := u.RawQuery != "" || u.ForceQuery
		fragment := u.Fragment != "" || u.RawFragment != ""
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		s := RedactPath(u.Redacted())
		if query {
			s += "?" + Redacted
		}
		if fragment {
			s += "#" + Redacted
		}
		return s
	}
	if i := strings.LastIndex(raw, "@"); i > 0 {
		if s := strings.Index(raw, "://"); s >= 0 && s < i {
			raw = raw[:s+3] + "xxxxx@" + raw[i+1:]
		}
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i+1] + Redacted
	}
	return RedactPath(raw)
}

// RedactPath returns p with the segment after every secret path prefix
// (SecretPathPrefixes) replaced by Redacted: /media/<token>/a.png becomes
// /media/…/a.png.
func RedactPath(p string) string {
	if !hasSecretPath(p) {
		return p
	}
	return secretPathRE.ReplaceAllString(p, "${1}"+Redacted)
}

func hasSecretPath(s string) bool {
	for _, p := range SecretPathPrefixes {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// RedactText returns s with every URL in it redacted (RedactURL) and every
// secret path (RedactPath): for error texts that quote a URL, such as the
// *url.Error of a failed request (Post "https://…?token=…": dial tcp …).
func RedactText(s string) string {
	if strings.Contains(s, "://") {
		s = urlRE.ReplaceAllStringFunc(s, RedactURL)
	}
	return RedactPath(s)
}

// NewRedactingHandler returns a slog.Handler that passes every record to h with
// its message and the text of its attributes (strings, errors, Stringers, in
// groups too) redacted by RedactText: the net under every log line of the
// process, the access log, the job logs and the libraries' included.
func NewRedactingHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(redactingHandler); ok {
		return h
	}
	return redactingHandler{h}
}

type redactingHandler struct{ next slog.Handler }

func (h redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, RedactText(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = redactAttr(a)
	}
	return redactingHandler{h.next.WithAttrs(red)}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h.next.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, RedactText(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		red := make([]any, len(attrs))
		for i, g := range attrs {
			red[i] = redactAttr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			if s := x.Error(); RedactText(s) != s {
				return slog.String(a.Key, RedactText(s))
			}
		case *url.URL:
			if x != nil {
				return slog.String(a.Key, RedactURL(x.String()))
			}
		case fmt.Stringer:
			if s := x.String(); RedactText(s) != s {
				return slog.String(a.Key, RedactText(s))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
