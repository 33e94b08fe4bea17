package music

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/music/musictest"
)

const testLyrics = "[Verse]\nSunlight on the open road\nEvery mile a story told\n[Chorus]\nWe are the morning\nWe are the light"

// TestLocalRendersSongs also guards the MP3 encoder's unsafe pointer walk: run it
// under checkptr (make checkptr; -race turns checkptr on too).
func TestLocalRendersSongs(t *testing.T) {
	l := &Local{MinSeconds: 8, MaxSeconds: 12}
	w, infl := 0.6, 0.8
	req := Request{Lyrics: testLyrics, Style: "upbeat pop, acoustic guitar", VocalGender: VocalFemale, Weirdness: &w, StyleInfluence: &infl}
	handles, err := l.Start(context.Background(), req)
	if err != nil || len(handles) != Variants {
		t.Fatalf("Start = %v, %v", handles, err)
	}
	var songs []*Song
	for _, h := range handles {
		s, err := l.Fetch(context.Background(), req, h)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != StatusComplete || s.Title != "Sunlight on the open road" {
			t.Errorf("song = %s %q", s.Status, s.Title)
		}
		d, err := musictest.DecodeMP3(s.Audio)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d.Seconds-s.DurationSec) > 0.1 || d.Seconds < 8 || d.Seconds > 12.5 {
			t.Errorf("decoded %.2fs, reported %.2fs, want 8-12s", d.Seconds, s.DurationSec)
		}
		if d.RMS < 0.02 {
			t.Errorf("rms %.4f: silence", d.RMS)
		}
		if _, err := png.Decode(bytes.NewReader(s.Image)); err != nil {
			t.Errorf("cover: %v", err)
		}
		songs = append(songs, s)
	}
	if bytes.Equal(songs[0].Audio, songs[1].Audio) || bytes.Equal(songs[0].Image, songs[1].Image) {
		t.Error("the two variants are the same")
	}
	again, _ := l.Fetch(context.Background(), req, handles[0])
	if !bytes.Equal(again.Audio, songs[0].Audio) {
		t.Error("the same request rendered a different song")
	}
}

func TestReferenceSteersTempoAndLoudness(t *testing.T) {
	// A quiet click track at 150 BPM, as a WAV file.
	const rate, bpm = 22050, 150.0
	path := filepath.Join(t.TempDir(), "ref.wav")
	if err := os.WriteFile(path, musictest.WAV(musictest.ClickTrack(bpm, 8, rate), rate), 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := analyze(path)
	if err != nil || ref == nil {
		t.Fatalf("analyze = %v, %v", ref, err)
	}
	if math.Abs(ref.tempo-bpm) > 6 {
		t.Errorf("tempo %.1f, want about %.0f", ref.tempo, bpm)
	}
	full := 1.0
	req := Request{Lyrics: testLyrics, Style: "ballad", AudioInfluence: &full}
	plain := compose(req, 0, nil, 8, 12)
	covered := compose(req, 0, ref, 8, 12)
	if plain.style.tempo > 100 || math.Abs(covered.style.tempo-ref.tempo) > 1 {
		t.Errorf("tempo plain %.1f, covered %.1f; reference %.1f", plain.style.tempo, covered.style.tempo, ref.tempo)
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		head []byte
		want string
	}{
		{[]byte("ID3\x04\x00\x00\x00\x00\x00\x00\x00\x00"), FormatMP3},
		{[]byte{0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0, 0, 0, 0, 0}, FormatMP3},
		{[]byte("RIFF\x00\x00\x00\x00WAVE"), FormatWAV},
		{[]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00"), FormatOGG},
		{[]byte("fLaC\x00\x00\x00\x22\x00\x00\x00\x00"), FormatFLAC},
		{[]byte("\x00\x00\x00\x20ftypM4A "), FormatM4A},
		{[]byte{0xFF, 0xF1, 0x50, 0x80, 0, 0, 0, 0, 0, 0, 0, 0}, ""}, // ADTS AAC
		{[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0d"), ""},
		{[]byte("RIFF\x00\x00\x00\x00AVI "), ""},
		{[]byte("\x00\x00\x00\x20ftypqt  "), ""},
	} {
		if got, _ := Sniff(tc.head); got != tc.want {
			t.Errorf("Sniff(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}
