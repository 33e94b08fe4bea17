package music

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/netguard"
)

// HTTP drives a self-hosted music-generation API server of the common
// custom_generate / get kind: POST /api/custom_generate submits a song and
// answers its clips, GET /api/get?ids= reports them, GET /api/get_limit the
// credits. Every call, the downloads of finished audio and covers included,
// goes through the private-address guard (netguard) unless AllowPrivate.
type HTTP struct {
	baseURL string
	key     string
	client  *http.Client
}

// MaxDownload bounds a finished clip's audio or cover fetched from the server.
const MaxDownload = 64 << 20

// NewHTTP returns a provider for the server at baseURL, authenticated with key
// (a bearer token; none when empty). allowPrivate lets it reach private addresses,
// for a server on the same host or network.
func NewHTTP(baseURL, key string, allowPrivate bool) *HTTP {
	return &HTTP{baseURL: strings.TrimRight(baseURL, "/"), key: key, client: netguard.Client(60*time.Second, allowPrivate)}
}

// Name implements Provider.
func (p *HTTP) Name() string { return "http" }

// remoteClip is a clip as the server reports it.
type remoteClip struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	Title        string          `json:"title"`
	AudioURL     string          `json:"audio_url"`
	ImageURL     string          `json:"image_url"`
	ModelName    string          `json:"model_name"`
	Duration     json.RawMessage `json:"duration"`
	ErrorMessage string          `json:"error_message"`
}

// Start implements Provider: one custom_generate call, whose first Variants clips
// are the handles.
func (p *HTTP) Start(ctx context.Context, req Request) ([]string, error) {
	body := map[string]any{
		"prompt": req.Lyrics, "tags": req.Style, "negative_tags": req.NegativeStyle, "title": req.Title,
		"make_instrumental": req.Instrumental, "wait_audio": false,
	}
	if req.Model != "" {
		body["model"] = req.Model
	}
	if req.VocalGender != "" {
		body["vocal_gender"] = req.VocalGender
	}
	sliders := map[string]float64{}
	for name, v := range map[string]*float64{"weirdness_constraint": req.Weirdness, "style_weight": req.StyleInfluence, "audio_weight": req.AudioInfluence} {
		if v != nil {
			sliders[name] = *v
		}
	}
	if len(sliders) > 0 {
		body["control_sliders"] = sliders
	}
	var clips []remoteClip
	if err := p.call(ctx, http.MethodPost, "/api/custom_generate", body, &clips); err != nil {
		return nil, err
	}
	if len(clips) < Variants {
		return nil, fmt.Errorf("music: server answered %d clips, want %d", len(clips), Variants)
	}
	out := make([]string, Variants)
	for i := range out {
		if clips[i].ID == "" {
			return nil, fmt.Errorf("music: server answered a clip without id")
		}
		out[i] = clips[i].ID
	}
	return out, nil
}

// Fetch implements Provider: it asks for the clip, and once it is complete
// downloads its audio and cover.
func (p *HTTP) Fetch(ctx context.Context, req Request, handle string) (*Song, error) {
	var clips []remoteClip
	if err := p.call(ctx, http.MethodGet, "/api/get?ids="+url.QueryEscape(handle), nil, &clips); err != nil {
		return nil, err
	}
	if len(clips) == 0 {
		return nil, fmt.Errorf("%w: the server does not know clip %s", ErrRejected, handle)
	}
	c := clips[0]
	s := &Song{Status: remoteStatus(c.Status), Title: c.Title, Model: c.ModelName, DurationSec: number(c.Duration)}
	switch s.Status {
	case StatusError:
		s.ErrorType, s.ErrorMessage = "generation_failed", c.ErrorMessage
		if s.ErrorMessage == "" {
			s.ErrorMessage = "The music server failed to generate the clip."
		}
	case StatusComplete:
		if c.AudioURL == "" {
			s.Status = StatusStreaming // complete without audio yet: ask again
			return s, nil
		}
		var err error
		if s.Audio, err = p.download(ctx, c.AudioURL); err != nil {
			return nil, err
		}
		if c.ImageURL != "" {
			if s.Image, err = p.download(ctx, c.ImageURL); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// Account implements Provider.
func (p *HTTP) Account(ctx context.Context) (*Account, error) {
	var limit struct {
		CreditsLeft  float64  `json:"credits_left"`
		MonthlyLimit *float64 `json:"monthly_limit"`
		MonthlyUsage *float64 `json:"monthly_usage"`
		Period       string   `json:"period"`
	}
	if err := p.call(ctx, http.MethodGet, "/api/get_limit", nil, &limit); err != nil {
		return nil, err
	}
	return &Account{CreditsLeft: limit.CreditsLeft, MonthlyLimit: limit.MonthlyLimit, MonthlyUsage: limit.MonthlyUsage, Plan: limit.Period}, nil
}

// call makes one API call. A 4xx answer is ErrRejected (asking again will not
// help); anything else that fails may be retried.
func (p *HTTP) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.baseURL+path, body)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRejected, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.key != "" {
		req.Header.Set("Authorization", "Bearer "+p.key)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("music: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("music: %s %s: %w", method, path, err)
	}
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s %s answered %d: %.200s", ErrRejected, method, path, resp.StatusCode, raw)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("music: %s %s answered %d", method, path, resp.StatusCode)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("music: %s %s: bad answer: %w", method, path, err)
	}
	return nil
}

// download fetches a finished file through the guarded client.
func (p *HTTP) download(ctx context.Context, raw string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: bad file URL: %v", ErrRejected, err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("music: download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("music: download answered %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxDownload+1))
	if err == nil && len(data) > MaxDownload {
		err = fmt.Errorf("%w: file larger than %d bytes", ErrRejected, MaxDownload)
	}
	return data, err
}

// remoteStatus maps the server's status to a clip status.
func remoteStatus(s string) Status {
	switch st := Status(s); st {
	case StatusSubmitted, StatusQueued, StatusStreaming, StatusComplete, StatusError:
		return st
	case "failed":
		return StatusError
	}
	return StatusRunning
}

// number reads a duration the server sends as a number or a string.
func number(raw json.RawMessage) float64 {
	s := strings.Trim(string(raw), `"`)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
