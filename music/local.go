package music

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Local renders songs in the process, with no external service: a melody sung on
// the syllables of the lyrics over chords, bass and drums chosen by the style,
// encoded to MP3, with a generated cover. The same request always renders the
// same song; its two variants differ in seed, key, tempo, progression and voice.
type Local struct {
	// MinSeconds and MaxSeconds bound a song's length (DefaultMinSeconds and
	// DefaultMaxSeconds when zero): short lyrics repeat, long ones are cut.
	MinSeconds, MaxSeconds float64
}

// Default song length bounds of the local provider, in seconds.
const (
	DefaultMinSeconds = 20
	DefaultMaxSeconds = 40
)

// LocalModel is the model name of the clips the local provider renders.
const LocalModel = "local-1"

// Name implements Provider.
func (l *Local) Name() string { return "local" }

// Start implements Provider: the handles are the variant numbers.
func (l *Local) Start(ctx context.Context, req Request) ([]string, error) {
	out := make([]string, Variants)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out, nil
}

// Fetch implements Provider: it renders the variant at once.
func (l *Local) Fetch(ctx context.Context, req Request, handle string) (*Song, error) {
	variant, err := strconv.Atoi(handle)
	if err != nil || variant < 0 || variant >= Variants {
		return nil, fmt.Errorf("%w: no variant %q", ErrRejected, handle)
	}
	var ref *reference
	if req.Reference != "" {
		if ref, err = analyze(req.Reference); err != nil {
			return nil, fmt.Errorf("music: analyze reference: %w", err)
		}
	}
	lo, hi := l.MinSeconds, l.MaxSeconds
	if lo <= 0 {
		lo = DefaultMinSeconds
	}
	if hi <= 0 {
		hi = DefaultMaxSeconds
	}
	seed := seedOf(req, variant)
	sc := compose(req, variant, ref, lo, max(lo, hi))
	loudness := 0.2
	if ref != nil {
		loudness += (math.Max(0.02, math.Min(0.5, ref.rms)) - loudness) * value(req.AudioInfluence, 0.5)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pcm := render(sc, seed, loudness)
	var mp3 bytes.Buffer
	if err := EncodeMP3(&mp3, pcm); err != nil {
		return nil, err
	}
	frames := (len(pcm) + frameSamples - 1) / frameSamples
	return &Song{Status: StatusComplete, Title: titleOf(req), Model: LocalModel,
		DurationSec: math.Round(float64(frames*frameSamples)/SampleRate*100) / 100,
		Audio:       mp3.Bytes(), Image: cover(sc, seed)}, nil
}

// Account implements Provider: local songs cost nothing, so the credits are a
// nominal, never-decreasing number.
func (l *Local) Account(ctx context.Context) (*Account, error) {
	return &Account{CreditsLeft: LocalCredits, Plan: "local"}, nil
}

// LocalCredits is the credit balance the local provider reports.
const LocalCredits = 1_000_000

// maxTitle bounds a title derived from the lyrics, in characters.
const maxTitle = 60

// titleOf is the requested title, else the first sung line, else the style.
func titleOf(req Request) string {
	if t := strings.TrimSpace(req.Title); t != "" {
		return t
	}
	if !req.Instrumental {
		for _, line := range strings.Split(req.Lyrics, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "[") {
				return clip(line, maxTitle)
			}
		}
	}
	return clip("Untitled "+strings.TrimSpace(req.Style), maxTitle)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:n-1])) + "…"
}
