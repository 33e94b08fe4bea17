package mediaproc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// WaveformLen is the length of a voice note's waveform (WhatsApp's
// AudioMessage.Waveform: 64 values of 0-100).
const WaveformLen = 64

// IsOggOpus reports whether the file at path is Opus in an Ogg container
// (what WhatsApp plays as a voice note), from its first page.
func IsOggOpus(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("mediaproc: %w", err)
	}
	defer f.Close()
	head := make([]byte, 27+255+8)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("mediaproc: %w", err)
	}
	head = head[:n]
	if len(head) < 28 || string(head[:4]) != "OggS" {
		return false, nil
	}
	payload := 27 + int(head[26])
	return len(head) >= payload+8 && string(head[payload:payload+8]) == "OpusHead", nil
}

// OggOpusSeconds is the duration of an Ogg/Opus file, from the granule
// position of its last page and the pre-skip of its header (no decoding).
func OggOpusSeconds(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("mediaproc: %w", err)
	}
	defer f.Close()
	head := make([]byte, 27+255+12)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if len(head) < 27 || string(head[:4]) != "OggS" {
		return 0, fmt.Errorf("%w: not an Ogg file", ErrInput)
	}
	payload := 27 + int(head[26])
	if len(head) < payload+12 || string(head[payload:payload+8]) != "OpusHead" {
		return 0, fmt.Errorf("%w: short Ogg/Opus header", ErrInput)
	}
	preSkip := binary.LittleEndian.Uint16(head[payload+10:])
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("mediaproc: %w", err)
	}
	const window = 64 << 10 // an Ogg page is at most ~64 KiB
	off := max(st.Size()-window, 0)
	end := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(end, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("mediaproc: %w", err)
	}
	i := bytes.LastIndex(end, []byte("OggS"))
	if i < 0 || len(end) < i+14 {
		return 0, fmt.Errorf("%w: no Ogg page at the end", ErrInput)
	}
	granule := binary.LittleEndian.Uint64(end[i+6:])
	if granule == math.MaxUint64 || granule < uint64(preSkip) {
		return 0, nil
	}
	return float64(granule-uint64(preSkip)) / 48000, nil
}

// ToOggOpus converts any audio ffmpeg reads to a WhatsApp voice note: Opus,
// mono, 48 kHz, ~32 kbit/s, in Ogg, in a new temporary file the caller removes.
func (t Tools) ToOggOpus(ctx context.Context, path string) (string, error) {
	if !t.Available() {
		return "", ErrNoFFmpeg
	}
	out, err := tempFile(".ogg")
	if err != nil {
		return "", err
	}
	err = t.run(ctx, t.FFmpeg, nil, "-nostdin", "-v", "error", "-y", "-i", path, "-vn", "-map_metadata", "-1",
		"-ac", "1", "-ar", "48000", "-c:a", "libopus", "-b:a", "32k", "-application", "voip", "-f", "ogg", out)
	if err != nil {
		removeQuietly(out)
		return "", err
	}
	return out, nil
}

// waveRate is the sample rate the waveform is computed at, and waveBlock the
// samples averaged into one level (10 ms).
const (
	waveRate  = 8000
	waveBlock = 80
	maxLevels = 1 << 16 // levels kept before neighbours are merged
)

// Waveform decodes the audio at path with ffmpeg (mono 16-bit PCM, streamed)
// and returns WaveformLen levels of 0-100, the loudest part 100.
func (t Tools) Waveform(ctx context.Context, path string) ([]byte, error) {
	if !t.Available() {
		return nil, ErrNoFFmpeg
	}
	lv := &levels{}
	err := t.run(ctx, t.FFmpeg, lv, "-nostdin", "-v", "error", "-i", path, "-vn", "-ac", "1",
		"-ar", fmt.Sprint(waveRate), "-f", "s16le", "pipe:1")
	if err != nil {
		return nil, err
	}
	return lv.waveform(), nil
}

// levels takes 16-bit little-endian PCM and keeps the mean amplitude of every
// block of samples; past maxLevels, neighbours are merged (blocks double).
type levels struct {
	vals  []float64
	block int     // samples per level
	sum   float64 // of the current block
	n     int     // samples in it
	odd   []byte  // a byte left of a split sample
}

func (l *levels) Write(p []byte) (int, error) {
	if l.block == 0 {
		l.block = waveBlock
	}
	total := len(p)
	if len(l.odd) > 0 {
		p = append(l.odd, p...)
		l.odd = nil
	}
	for ; len(p) >= 2; p = p[2:] {
		l.sum += math.Abs(float64(int16(binary.LittleEndian.Uint16(p))))
		if l.n++; l.n == l.block {
			l.push(l.sum / float64(l.n))
		}
	}
	if len(p) == 1 {
		l.odd = []byte{p[0]}
	}
	return total, nil
}

func (l *levels) push(v float64) {
	l.vals = append(l.vals, v)
	l.sum, l.n = 0, 0
	if len(l.vals) < maxLevels {
		return
	}
	for i := 0; i < len(l.vals)/2; i++ {
		l.vals[i] = (l.vals[2*i] + l.vals[2*i+1]) / 2
	}
	l.vals = l.vals[:len(l.vals)/2]
	l.block *= 2
}

// waveform reduces the levels to WaveformLen values of 0-100.
func (l *levels) waveform() []byte {
	vals := l.vals
	if l.n > 0 {
		vals = append(vals, l.sum/float64(l.n))
	}
	out := make([]byte, WaveformLen)
	if len(vals) == 0 {
		return out
	}
	buckets := make([]float64, WaveformLen)
	peak := 0.0
	for i := range buckets {
		from := i * len(vals) / WaveformLen
		to := max((i+1)*len(vals)/WaveformLen, from+1)
		to = min(to, len(vals))
		from = min(from, to-1)
		s := 0.0
		for _, v := range vals[from:to] {
			s += v
		}
		buckets[i] = s / float64(to-from)
		peak = max(peak, buckets[i])
	}
	if peak == 0 {
		return out
	}
	for i, b := range buckets {
		out[i] = byte(math.Round(b / peak * 100))
	}
	return out
}

func removeQuietly(path string) { _ = os.Remove(path) }
