// Package linkpreview builds the preview card of the first URL in a message's text
// by fetching the page's Open Graph (or title) metadata with a short timeout.
package linkpreview

import (
	"context"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/netguard"
)

var urlRE = regexp.MustCompile(`https?://[^\s<>"'\x60]+`)

// FirstURL returns the first http(s) URL in text, or "".
func FirstURL(text string) string {
	u := urlRE.FindString(text)
	return strings.TrimRight(u, ".,;:!?)]}")
}

// Fetcher fetches previews through a client that refuses internal addresses.
type Fetcher struct {
	client *http.Client
}

// NewFetcher returns a Fetcher whose requests give up after timeout. allowPrivate
// lifts the internal-address guard (tests and private deployments).
func NewFetcher(timeout time.Duration, allowPrivate bool) *Fetcher {
	return &Fetcher{client: netguard.Client(timeout, allowPrivate)}
}

// maxPage is how much of a page is read looking for metadata.
const maxPage = 256 << 10

// Fetch returns the preview of rawURL. A page that cannot be fetched yields a
// preview with only the canonical URL, never an error: a preview is decoration.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) *switchboard.LinkPreview {
	p := &switchboard.LinkPreview{CanonicalURL: rawURL}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return p
	}
	req.Header.Set("User-Agent", "Switchboard-LinkPreview/1.0")
	req.Header.Set("Accept", "text/html")
	resp, err := f.client.Do(req)
	if err != nil {
		return p
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 || !strings.Contains(resp.Header.Get("Content-Type"), "html") {
		return p
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	return Parse(string(body), rawURL)
}

var (
	metaRE  = regexp.MustCompile(`(?is)<meta\s+[^>]*>`)
	attrRE  = regexp.MustCompile(`(?is)(property|name|content)\s*=\s*("([^"]*)"|'([^']*)')`)
	titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
)

// Parse extracts a preview from an HTML page fetched from rawURL.
func Parse(page, rawURL string) *switchboard.LinkPreview {
	p := &switchboard.LinkPreview{CanonicalURL: rawURL}
	for _, tag := range metaRE.FindAllString(page, -1) {
		var key, content string
		for _, a := range attrRE.FindAllStringSubmatch(tag, -1) {
			val := a[3] + a[4]
			switch strings.ToLower(a[1]) {
			case "property", "name":
				key = strings.ToLower(val)
			case "content":
				content = html.UnescapeString(strings.TrimSpace(val))
			}
		}
		switch key {
		case "og:title":
			p.Title = content
		case "og:description":
			p.Description = content
		case "description":
			if p.Description == "" {
				p.Description = content
			}
		case "og:url":
			if strings.HasPrefix(content, "http") {
				p.CanonicalURL = content
			}
		case "og:image":
			p.Thumbnail = content
		}
	}
	if p.Title == "" {
		if m := titleRE.FindStringSubmatch(page); m != nil {
			p.Title = html.UnescapeString(strings.TrimSpace(m[1]))
		}
	}
	return p
}
