package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// Media by reference, the reference client's side (docs/engine-protocol.md,
// "Media"): unless InlineMedia, the client announces FeatureMediaRefs, PUTs the
// media a FetchMedia or ProfilePicture command asks for to the command's
// uploadUrl and replies without data, and fetches the pictures the server
// hands by url. It talks to its own server only: a URL on another origin is
// refused.

// uploadMethods are the commands whose one result is media, which take a
// trailing uploadUrl param from a server that moves media by reference.
var uploadMethods = []string{"FetchMedia", "ProfilePicture"}

// Bounds of the client's media transfers.
const (
	// maxMediaFetch bounds the bytes of media fetched from the server (the
	// media store's default bound).
	maxMediaFetch = 100 << 20
	// mediaTimeout bounds a transfer of a command without a deadline.
	mediaTimeout = 5 * time.Minute
)

// features are the protocol features the client announces.
func (c *Client) features() []string {
	if c.InlineMedia {
		return nil
	}
	return []string{FeatureMediaRefs}
}

// serveMedia runs a command the way media by reference needs: it takes a
// trailing uploadUrl off the params of an upload method and uploads the media
// result there, and fetches the pictures of SetGroupPicture and SetProfile that
// come by url. Any other command is run as it is.
func (c *Client) serveMedia(ctx context.Context, eng engine.Engine, method string, params json.RawMessage) (json.RawMessage, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, mediaTimeout)
		defer cancel()
	}
	params, uploadURL, err := c.mediaParams(ctx, method, params)
	if err != nil {
		return nil, err
	}
	results, err := call(ctx, eng, c.caps(), method, params)
	if err != nil {
		return nil, err
	}
	if uploadURL != "" && len(results) == 1 {
		m, ok := results[0].(engine.Media)
		if !ok {
			return nil, fmt.Errorf("remote: %s did not return media", method)
		}
		if results[0], err = c.upload(ctx, uploadURL, m); err != nil {
			return nil, err
		}
	}
	return json.Marshal(results)
}

// mediaParams is params with the uploadUrl taken off (and returned) and the
// pictures that come by url fetched into data.
func (c *Client) mediaParams(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, string, error) {
	var raw []json.RawMessage
	switch method {
	case "FetchMedia", "ProfilePicture", "SetGroupPicture", "SetProfile":
		if len(params) == 0 || json.Unmarshal(params, &raw) != nil {
			return params, "", nil // dispatch tells what is wrong
		}
	default:
		return params, "", nil
	}
	in, _ := methodTypes(method)
	switch {
	case slices.Contains(uploadMethods, method) && len(raw) == len(in)+1:
		var u string
		if err := json.Unmarshal(raw[len(in)], &u); err != nil {
			return nil, "", fmt.Errorf("bad uploadUrl of %s: %v", method, err)
		}
		if err := c.onServer(u); err != nil {
			return nil, "", err
		}
		params, err := json.Marshal(raw[:len(in)])
		return params, u, err
	case method == "SetGroupPicture" && len(raw) == 2:
		var m engine.Media
		if json.Unmarshal(raw[1], &m) != nil || m.URL == "" {
			return params, "", nil
		}
		if err := c.fetch(ctx, &m); err != nil {
			return nil, "", err
		}
		raw[1], _ = json.Marshal(m)
	case method == "SetProfile" && len(raw) == 1:
		var u engine.ProfileUpdate
		if json.Unmarshal(raw[0], &u) != nil || u.Picture == nil || u.Picture.URL == "" {
			return params, "", nil
		}
		if err := c.fetch(ctx, u.Picture); err != nil {
			return nil, "", err
		}
		raw[0], _ = json.Marshal(u)
	default:
		return params, "", nil
	}
	params, err := json.Marshal(raw)
	return params, "", err
}

// httpClient is the client's HTTP client.
func (c *Client) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return http.DefaultClient
}

// upload PUTs the bytes of m to uploadURL, with the engine token, and returns
// m without them (its size set).
func (c *Client) upload(ctx context.Context, uploadURL string, m engine.Media) (engine.Media, error) {
	r, release := m.Reader()
	defer release()
	counted := &countingReader{r: r}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, uploadURL, counted)
	if err != nil {
		return engine.Media{}, err
	}
	if m.Body == nil {
		req.ContentLength = int64(len(m.Data))
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if m.MimeType != "" {
		req.Header.Set("Content-Type", m.MimeType)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return engine.Media{}, fmt.Errorf("remote: upload the media: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return engine.Media{}, fmt.Errorf("remote: the server refused the upload (%d): %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	m.Data, m.Body = nil, nil
	if m.Size <= 0 {
		m.Size = counted.n
	}
	return m, nil
}

// fetch reads the bytes of media that came by url into its data.
func (c *Client) fetch(ctx context.Context, m *engine.Media) error {
	if err := c.onServer(m.URL); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL, nil)
	if err != nil {
		return err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("remote: fetch the media: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("remote: fetch the media: the server answered %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMediaFetch+1))
	if err != nil {
		return fmt.Errorf("remote: fetch the media: %w", err)
	}
	if len(data) > maxMediaFetch {
		return fmt.Errorf("remote: the media is larger than %d bytes", maxMediaFetch)
	}
	m.Data, m.URL = data, ""
	if m.MimeType == "" {
		m.MimeType = resp.Header.Get("Content-Type")
	}
	return nil
}

// onServer refuses a URL that is not on the origin of the client's server.
func (c *Client) onServer(raw string) error {
	u, err := url.Parse(raw)
	s, serr := url.Parse(c.endpoint())
	if err != nil || serr != nil || u.Host == "" || originOf(u) != originOf(s) {
		return fmt.Errorf("remote: refusing media URL %q: it is not on the server's origin", raw)
	}
	return nil
}

// originOf is scheme://host:port of u, with ws(s) as http(s) and the default
// port spelled out.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

// Read reads from the source and counts.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
