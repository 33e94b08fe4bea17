package switchboard

import (
	"net/url"
	"strings"
)

// RedactURL returns raw with its password (or whole user part, when raw does
// not parse) replaced, for logs and error messages.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(raw, "@"); i > 0 {
		if s := strings.Index(raw, "://"); s >= 0 && s < i {
			return raw[:s+3] + "xxxxx@" + raw[i+1:]
		}
	}
	return raw
}
