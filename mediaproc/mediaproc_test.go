package mediaproc

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// needFFmpeg returns the tools, skipping the test without them (failing it in CI,
// which installs ffmpeg).
func needFFmpeg(t *testing.T) Tools {
	t.Helper()
	tools := Find("")
	if !tools.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatal("ffmpeg and ffprobe are required in CI")
		}
		t.Skip("ffmpeg/ffprobe not on PATH")
	}
	return tools
}

// ffmpegFile makes a file with ffmpeg (lavfi sources) in the test's directory.
func ffmpegFile(t *testing.T, tools Tools, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	args = append(append([]string{"-nostdin", "-v", "error", "-y"}, args...), out)
	if err := tools.run(context.Background(), tools.FFmpeg, nil, args...); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeImage(t *testing.T, name string, w, h int, enc func(*os.File, image.Image) error) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		for y := 0; y < h; y++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := enc(f, img); err != nil {
		t.Fatal(err)
	}
	return p
}

func pngFile(t *testing.T, w, h int) string {
	return writeImage(t, "a.png", w, h, func(f *os.File, m image.Image) error { return png.Encode(f, m) })
}

func gifFile(t *testing.T, w, h int) string {
	return writeImage(t, "a.gif", w, h, func(f *os.File, m image.Image) error {
		pal := []color.Color{color.White, color.Black}
		a, b := image.NewPaletted(m.Bounds(), pal), image.NewPaletted(m.Bounds(), pal)
		b.SetColorIndex(0, 0, 1)
		return gif.EncodeAll(f, &gif.GIF{Image: []*image.Paletted{a, b}, Delay: []int{10, 10}})
	})
}

// thumbSize decodes a thumbnail (a JPEG) and returns its size.
func thumbSize(t *testing.T, b []byte) [2]int {
	t.Helper()
	if len(b) == 0 {
		return [2]int{}
	}
	m, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("thumbnail is not a JPEG: %v", err)
	}
	return [2]int{m.Bounds().Dx(), m.Bounds().Dy()}
}

// facts is what a test compares of a Prepared.
type facts struct {
	Kind, ContentType      string
	Width, Height, Seconds int
	Thumb                  [2]int
	Waveform               int
	Converted              bool
}

func factsOf(t *testing.T, p *Prepared, in string) facts {
	return facts{Kind: p.Kind, ContentType: p.ContentType, Width: p.Width, Height: p.Height, Seconds: p.Seconds,
		Thumb: thumbSize(t, p.Thumbnail), Waveform: len(p.Waveform), Converted: p.Path != in}
}

func TestPrepareImagesWithoutFFmpeg(t *testing.T) {
	none := Find("off")
	tests := []struct {
		name, kind, ct, path string
		want                 facts
	}{
		{"wide png", "image", "image/png", pngFile(t, 400, 200), facts{Kind: "image", ContentType: "image/png", Width: 400, Height: 200, Thumb: [2]int{100, 50}}},
		{"tall png", "image", "image/png", pngFile(t, 30, 1200), facts{Kind: "image", ContentType: "image/png", Width: 30, Height: 1200, Thumb: [2]int{2, 100}}},
		{"small png is not enlarged", "image", "image/png", pngFile(t, 40, 20), facts{Kind: "image", ContentType: "image/png", Width: 40, Height: 20, Thumb: [2]int{40, 20}}},
		{"sticker: dimensions only", "sticker", "image/webp", pngFile(t, 512, 512), facts{Kind: "sticker", ContentType: "image/webp", Width: 512, Height: 512}},
		{"gif goes as a still image", "gif", "image/gif", gifFile(t, 200, 100), facts{Kind: "image", ContentType: "image/gif", Width: 200, Height: 100, Thumb: [2]int{100, 50}}},
		{"document: nothing", "document", "application/pdf", pngFile(t, 10, 10), facts{Kind: "document", ContentType: "application/pdf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := none.Prepare(context.Background(), tc.kind, tc.path, tc.ct)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if diff := cmp.Diff(tc.want, factsOf(t, p, tc.path)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestVoiceWithoutFFmpeg(t *testing.T) {
	none := Find("off")
	wav := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(wav, []byte("RIFF\x24\x00\x00\x00WAVEfmt "), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := none.Prepare(context.Background(), "voice", wav, "audio/wav")
	if !errors.Is(err, ErrNoFFmpeg) {
		t.Fatalf("a voice note to convert without ffmpeg: %v, want ErrNoFFmpeg", err)
	}
	// Video and audio go without their facts.
	p, err := none.Prepare(context.Background(), "video", wav, "video/mp4")
	if err != nil || p.Width != 0 || p.Thumbnail != nil || len(p.Missing) == 0 {
		t.Fatalf("video without ffmpeg: %+v, %v", p, err)
	}
}

func TestPrepareWithFFmpeg(t *testing.T) {
	tools := needFFmpeg(t)
	mp4 := ffmpegFile(t, tools, "v.mp4", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-t", "3",
		"-c:v", "libx264", "-pix_fmt", "yuv420p")
	// A second of silence, then a second of a loud tone: the waveform's first
	// half is 0, its second half 100.
	wav := ffmpegFile(t, tools, "a.wav", "-f", "lavfi", "-i", "aevalsrc=if(lt(t\\,1)\\,0\\,sin(2*PI*440*t)):d=2:s=44100")
	ogg := ffmpegFile(t, tools, "v.ogg", "-i", wav, "-c:a", "libopus", "-ac", "1", "-ar", "48000")
	tests := []struct {
		name, kind, ct, path string
		want                 facts
	}{
		{"video", "video", "video/mp4", mp4, facts{Kind: "video", ContentType: "video/mp4", Width: 320, Height: 240, Seconds: 3, Thumb: [2]int{100, 75}}},
		{"video note", "ptv", "video/mp4", mp4, facts{Kind: "ptv", ContentType: "video/mp4", Width: 320, Height: 240, Seconds: 3, Thumb: [2]int{100, 75}}},
		{"gif from an mp4", "gif", "video/mp4", mp4, facts{Kind: "gif", ContentType: "video/mp4", Width: 320, Height: 240, Seconds: 3, Thumb: [2]int{100, 75}}},
		{"gif from a GIF", "gif", "image/gif", gifFile(t, 200, 100), facts{Kind: "gif", ContentType: "video/mp4", Width: 200, Height: 100, Seconds: 1, Thumb: [2]int{100, 50}, Converted: true}},
		{"voice from wav", "voice", "audio/wav", wav, facts{Kind: "voice", ContentType: VoiceMimetype, Seconds: 2, Waveform: 64, Converted: true}},
		{"voice already opus", "voice", "audio/ogg", ogg, facts{Kind: "voice", ContentType: VoiceMimetype, Seconds: 2, Waveform: 64}},
		{"audio", "audio", "audio/wav", wav, facts{Kind: "audio", ContentType: "audio/wav", Seconds: 2}},
		{"image by ffmpeg when Go cannot", "image", "image/bmp", ffmpegFile(t, tools, "a.bmp", "-f", "lavfi", "-i", "testsrc=size=200x200", "-frames:v", "1"),
			facts{Kind: "image", ContentType: "image/bmp", Thumb: [2]int{100, 100}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tools.Prepare(context.Background(), tc.kind, tc.path, tc.ct)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if diff := cmp.Diff(tc.want, factsOf(t, p, tc.path)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if p.Path != tc.path {
				if ok, err := IsOggOpus(p.Path); tc.kind == "voice" && (!ok || err != nil) {
					t.Errorf("converted voice note is not Ogg/Opus: %v", err)
				}
				conv := p.Path
				p.Close()
				if _, err := os.Stat(conv); !os.IsNotExist(err) {
					t.Errorf("Close left %s: %v", conv, err)
				}
			}
			if tc.kind == "voice" {
				if p.Waveform[5] > 2 || p.Waveform[60] < 90 {
					t.Errorf("waveform of silence then a tone: %v", p.Waveform)
				}
			}
		})
	}
}

// What would arrive broken is refused: a voice note, video or gif ffmpeg
// cannot read, or a "video" without a picture.
func TestUnreadableMediaIsRejected(t *testing.T) {
	tools := needFFmpeg(t)
	txt := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(txt, []byte("not audio at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	wav := ffmpegFile(t, tools, "a.wav", "-f", "lavfi", "-i", "sine=d=1")
	for _, tc := range []struct{ kind, path, ct string }{
		{"voice", txt, "text/plain"}, {"video", txt, "video/mp4"}, {"ptv", txt, "video/mp4"},
		{"gif", txt, "video/mp4"}, {"video", wav, "video/mp4"},
	} {
		if _, err := tools.Prepare(context.Background(), tc.kind, tc.path, tc.ct); !errors.Is(err, ErrInput) {
			t.Errorf("%s of %s: %v, want ErrInput", tc.kind, filepath.Base(tc.path), err)
		}
	}
}

func TestWaveformLevels(t *testing.T) {
	var l levels
	// 64 blocks rising from 0 to 63, written in odd-sized chunks (split samples).
	var pcm []byte
	for b := 0; b < 64; b++ {
		for s := 0; s < waveBlock; s++ {
			v := int16(b * 100)
			pcm = append(pcm, byte(v), byte(v>>8))
		}
	}
	for len(pcm) > 0 {
		n := min(333, len(pcm))
		if _, err := l.Write(pcm[:n]); err != nil {
			t.Fatal(err)
		}
		pcm = pcm[n:]
	}
	w := l.waveform()
	if w[0] != 0 || w[63] != 100 || w[32] < 49 || w[32] > 52 {
		t.Fatalf("waveform %v", w)
	}
	if got := (&levels{}).waveform(); len(got) != WaveformLen {
		t.Fatalf("empty waveform %v", got)
	}
}

func TestErrorsNameNoServerPath(t *testing.T) {
	tools := needFFmpeg(t)
	junk := filepath.Join(t.TempDir(), "junk.bin")
	if err := os.WriteFile(junk, []byte("not media"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := tools.Probe(context.Background(), junk)
	if !errors.Is(err, ErrInput) || strings.Contains(err.Error(), junk) || !strings.Contains(err.Error(), "the file") {
		t.Fatalf("probe of junk: %v", err)
	}
}

func TestOggOpusSecondsOfOtherFiles(t *testing.T) {
	for name, data := range map[string]string{"empty": "", "short": "OggS", "not ogg": strings.Repeat("x", 100),
		"ogg vorbis": "OggS\x00\x02" + strings.Repeat("\x00", 20) + "\x01\x1e\x01vorbis" + strings.Repeat("\x00", 40)} {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OggOpusSeconds(p); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
		if ok, err := IsOggOpus(p); ok || err != nil {
			t.Errorf("%s: IsOggOpus %v %v", name, ok, err)
		}
	}
}

// An image too large to decode in memory gets its thumbnail from ffmpeg.
func TestLargeImageThumbnailByFFmpeg(t *testing.T) {
	tools := needFFmpeg(t)
	big := ffmpegFile(t, tools, "big.png", "-f", "lavfi", "-i", "color=c=red:s=5000x3500", "-frames:v", "1")
	if _, err := ImageThumbnail(big); !errors.Is(err, ErrInput) {
		t.Fatalf("Go decoded %s: %v", big, err)
	}
	p, err := tools.Prepare(context.Background(), "image", big, "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if got := factsOf(t, p, big); got.Width != 5000 || got.Height != 3500 || got.Thumb != [2]int{100, 70} {
		t.Errorf("facts %+v", got)
	}
}
