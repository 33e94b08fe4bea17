package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/mediaproc"
)

// storedFile is a file the fileStore holds.
type storedFile struct {
	data     []byte
	ct, name string
}

// fileStore is a media store fake holding files of any type.
type fileStore map[string]storedFile

func (s fileStore) Open(_ context.Context, u string) (io.ReadCloser, media.Object, bool, error) {
	f, ok := s[u]
	if !ok {
		return nil, media.Object{}, false, nil
	}
	return io.NopCloser(bytes.NewReader(f.data)), media.Object{URL: u, ContentType: f.ct, Filename: f.name, Size: int64(len(f.data))}, true, nil
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// picture is a w x h image encoded by enc.
func picture(t *testing.T, w, h int, enc func(io.Writer, image.Image) error) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		img.Set(x, x*h/w, color.RGBA{200, 30, 30, 255})
	}
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(w io.Writer, m image.Image) error {
	pal := []color.Color{color.White, color.Black}
	a, b := image.NewPaletted(m.Bounds(), pal), image.NewPaletted(m.Bounds(), pal)
	b.SetColorIndex(1, 1, 1)
	return gif.EncodeAll(w, &gif.GIF{Image: []*image.Paletted{a, b}, Delay: []int{20, 20}})
}

// sentMedia is what a test compares of the media message the fake received.
type sentMedia struct {
	Field, Mimetype        string
	Width, Height, Seconds uint32
	Thumb                  [2]int
	PTT, Gif               bool
	Waveform               int
	Caption, FileName      string
	Uploaded               string // the uploaded file's format, by its magic number
	UploadType             whatsmeow.MediaType
}

// magic names a file's format by its first bytes.
func magic(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG")):
		return "png"
	case bytes.HasPrefix(b, []byte("GIF8")):
		return "gif"
	case bytes.HasPrefix(b, []byte("OggS")):
		return "ogg"
	case bytes.HasPrefix(b, []byte("RIFF")):
		return "wav"
	case len(b) > 8 && string(b[4:8]) == "ftyp":
		return "mp4"
	}
	return "other"
}

// received reads the media message the fake got, and checks that its hashes and
// length are those of what was uploaded.
func received(t *testing.T, f *fakeClient) sentMedia {
	t.Helper()
	m := f.sent[0].msg
	up := f.uploads[0]
	got := sentMedia{Uploaded: magic(up), UploadType: f.uploadTypes[0]}
	var sum []byte
	var length uint64
	var thumb []byte
	switch {
	case m.GetImageMessage() != nil:
		x := m.GetImageMessage()
		got.Field, got.Mimetype, got.Width, got.Height, got.Caption = "image", x.GetMimetype(), x.GetWidth(), x.GetHeight(), x.GetCaption()
		sum, length, thumb = x.GetFileSHA256(), x.GetFileLength(), x.GetJPEGThumbnail()
	case m.GetVideoMessage() != nil || m.GetPtvMessage() != nil:
		x, field := m.GetVideoMessage(), "video"
		if x == nil {
			x, field = m.GetPtvMessage(), "ptv"
		}
		got.Field, got.Mimetype, got.Width, got.Height, got.Seconds = field, x.GetMimetype(), x.GetWidth(), x.GetHeight(), x.GetSeconds()
		got.Gif, got.Caption = x.GetGifPlayback(), x.GetCaption()
		sum, length, thumb = x.GetFileSHA256(), x.GetFileLength(), x.GetJPEGThumbnail()
	case m.GetAudioMessage() != nil:
		x := m.GetAudioMessage()
		got.Field, got.Mimetype, got.Seconds, got.PTT, got.Waveform = "audio", x.GetMimetype(), x.GetSeconds(), x.GetPTT(), len(x.GetWaveform())
		sum, length = x.GetFileSHA256(), x.GetFileLength()
		if w := x.GetWaveform(); len(w) > 0 && (w[5] > 2 || w[60] < 90) {
			t.Errorf("waveform of a second of silence, then a tone: %v", w)
		}
	case m.GetStickerMessage() != nil:
		x := m.GetStickerMessage()
		got.Field, got.Mimetype, got.Width, got.Height = "sticker", x.GetMimetype(), x.GetWidth(), x.GetHeight()
		sum, length = x.GetFileSHA256(), x.GetFileLength()
	case m.GetDocumentMessage() != nil:
		x := m.GetDocumentMessage()
		got.Field, got.Mimetype, got.FileName, got.Caption = "document", x.GetMimetype(), x.GetFileName(), x.GetCaption()
		sum, length = x.GetFileSHA256(), x.GetFileLength()
	}
	if want := sha256.Sum256(up); !bytes.Equal(sum, want[:]) || length != uint64(len(up)) {
		t.Errorf("FileSHA256/FileLength are not those of the upload (%d bytes)", len(up))
	}
	if len(thumb) > 0 {
		img, err := jpeg.Decode(bytes.NewReader(thumb))
		if err != nil {
			t.Fatalf("JPEGThumbnail: %v", err)
		}
		got.Thumb = [2]int{img.Bounds().Dx(), img.Bounds().Dy()}
	}
	return got
}

type mediaCase struct {
	name, kind, caption string
	file                storedFile
	want                sentMedia
}

// sendMedia sends each case from the media store through an engine with the
// ffmpeg setting given and compares what the fake received.
func sendMedia(t *testing.T, ffmpeg string, tests []mediaCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const u = "https://sb.example/media/tok/f"
			h := newHarness(t, true, func(c *Config) { c.Media, c.FFmpeg = fileStore{u: tc.file}, ffmpeg })
			out := engine.Outgoing{WireID: engine.WireID(tc.name), To: "15552223333@c.us", Type: "media",
				MediaKind: tc.kind, MediaURL: u, Text: tc.caption}
			if _, err := h.e.Send(context.Background(), out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, received(t, h.f)); diff != "" {
				t.Errorf("sent (-want +got)\n%s", diff)
			}
		})
	}
}

func TestSendMediaWithoutFFmpeg(t *testing.T) {
	pngData := picture(t, 400, 200, png.Encode)
	sendMedia(t, "off", []mediaCase{
		{"image: dimensions and thumbnail in Go", "image", "look", storedFile{pngData, "image/png", "a.png"},
			sentMedia{Field: "image", Mimetype: "image/png", Width: 400, Height: 200, Thumb: [2]int{100, 50}, Caption: "look", Uploaded: "png", UploadType: whatsmeow.MediaImage}},
		{"sticker: dimensions", "sticker", "", storedFile{pngData, "image/webp", "s.webp"},
			sentMedia{Field: "sticker", Mimetype: "image/webp", Width: 400, Height: 200, Uploaded: "png", UploadType: whatsmeow.MediaImage}},
		{"gif: a still image", "gif", "", storedFile{picture(t, 60, 30, encodeGIF), "image/gif", "a.gif"},
			sentMedia{Field: "image", Mimetype: "image/gif", Width: 60, Height: 30, Thumb: [2]int{60, 30}, Uploaded: "gif", UploadType: whatsmeow.MediaImage}},
		{"video: bare", "video", "clip", storedFile{testdata(t, "clip.mp4"), "video/mp4", "clip.mp4"},
			sentMedia{Field: "video", Mimetype: "video/mp4", Caption: "clip", Uploaded: "mp4", UploadType: whatsmeow.MediaVideo}},
		{"voice already Ogg/Opus: duration, no waveform", "voice", "", storedFile{testdata(t, "tone.ogg"), "audio/ogg", "v.ogg"},
			sentMedia{Field: "audio", Mimetype: "audio/ogg; codecs=opus", Seconds: 2, PTT: true, Uploaded: "ogg", UploadType: whatsmeow.MediaAudio}},
		{"audio: bare", "audio", "", storedFile{testdata(t, "tone.wav"), "audio/wav", "t.wav"},
			sentMedia{Field: "audio", Mimetype: "audio/wav", Uploaded: "wav", UploadType: whatsmeow.MediaAudio}},
		{"document keeps its name and caption", "document", "q3", storedFile{[]byte("%PDF-1.4 x"), "application/pdf", "q3.pdf"},
			sentMedia{Field: "document", Mimetype: "application/pdf", FileName: "q3.pdf", Caption: "q3", Uploaded: "other", UploadType: whatsmeow.MediaDocument}},
	})
}

func TestSendMediaWithFFmpeg(t *testing.T) {
	if !mediaproc.Find("").Available() {
		if os.Getenv("CI") == "true" {
			t.Fatal("ffmpeg and ffprobe are required in CI")
		}
		t.Skip("ffmpeg/ffprobe not on PATH")
	}
	mp4, wav := testdata(t, "clip.mp4"), testdata(t, "tone.wav")
	sendMedia(t, "", []mediaCase{
		{"video: dimensions, duration, thumbnail", "video", "clip", storedFile{mp4, "video/mp4", "clip.mp4"},
			sentMedia{Field: "video", Mimetype: "video/mp4", Width: 320, Height: 240, Seconds: 3, Thumb: [2]int{100, 75}, Caption: "clip", Uploaded: "mp4", UploadType: whatsmeow.MediaVideo}},
		{"video note", "ptv", "", storedFile{mp4, "video/mp4", "clip.mp4"},
			sentMedia{Field: "ptv", Mimetype: "video/mp4", Width: 320, Height: 240, Seconds: 3, Thumb: [2]int{100, 75}, Uploaded: "mp4", UploadType: whatsmeow.MediaVideo}},
		{"gif: a GIF converted to MP4", "gif", "", storedFile{picture(t, 60, 30, encodeGIF), "image/gif", "a.gif"},
			sentMedia{Field: "video", Mimetype: "video/mp4", Width: 60, Height: 30, Seconds: 1, Thumb: [2]int{60, 30}, Gif: true, Uploaded: "mp4", UploadType: whatsmeow.MediaVideo}},
		{"voice: WAV converted, with waveform", "voice", "", storedFile{wav, "audio/wav", "t.wav"},
			sentMedia{Field: "audio", Mimetype: "audio/ogg; codecs=opus", Seconds: 2, PTT: true, Waveform: 64, Uploaded: "ogg", UploadType: whatsmeow.MediaAudio}},
		{"voice already Ogg/Opus: kept, with waveform", "voice", "", storedFile{testdata(t, "tone.ogg"), "audio/ogg", "v.ogg"},
			sentMedia{Field: "audio", Mimetype: "audio/ogg; codecs=opus", Seconds: 2, PTT: true, Waveform: 64, Uploaded: "ogg", UploadType: whatsmeow.MediaAudio}},
		{"audio: duration", "audio", "", storedFile{wav, "audio/wav", "t.wav"},
			sentMedia{Field: "audio", Mimetype: "audio/wav", Seconds: 2, Uploaded: "wav", UploadType: whatsmeow.MediaAudio}},
	})
}

// A voice note the server cannot make (no ffmpeg, or a file ffmpeg cannot
// read) or a video that is none is refused with the reason: nothing is
// uploaded or sent.
func TestSendMediaItCannotMake(t *testing.T) {
	cases := map[string]struct {
		ffmpeg, kind, reason string
		file                 storedFile
	}{
		"voice without ffmpeg": {"off", "voice", "ffmpeg is not available", storedFile{testdata(t, "tone.wav"), "audio/wav", "t.wav"}},
		"voice of text":        {"", "voice", "ffmpeg", storedFile{[]byte("just some text"), "text/plain", "a.txt"}},
		"video of sound":       {"", "video", "no video stream", storedFile{testdata(t, "tone.wav"), "video/mp4", "t.mp4"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.ffmpeg == "" && !mediaproc.Find("").Available() && os.Getenv("CI") != "true" {
				t.Skip("ffmpeg/ffprobe not on PATH")
			}
			const u = "https://sb.example/media/tok/v"
			h := newHarness(t, true, func(c *Config) { c.Media, c.FFmpeg = fileStore{u: tc.file}, tc.ffmpeg })
			_, err := h.e.Send(context.Background(), engine.Outgoing{WireID: "3EB0V", To: "15552223333@c.us", Type: "media", MediaKind: tc.kind, MediaURL: u})
			if !errors.Is(err, engine.ErrRejected) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("err %v, want rejected naming %q", err, tc.reason)
			}
			if len(h.f.uploads) != 0 || len(h.f.sent) != 0 {
				t.Errorf("uploaded %d, sent %d", len(h.f.uploads), len(h.f.sent))
			}
		})
	}
}

// The bounds: media above MaxMediaBytes and documents above MaxDocumentBytes
// are refused before anything is uploaded, and no spooled file is left.
func TestSendMediaBounds(t *testing.T) {
	const u = "https://sb.example/media/tok/big"
	big := storedFile{bytes.Repeat([]byte("x"), 4096), "application/octet-stream", "big.bin"}
	h := newHarness(t, true, func(c *Config) {
		c.Media, c.MaxMediaBytes, c.MaxDocumentBytes = fileStore{u: big}, 1024, 8192
	})
	before := spooledFiles(t)
	_, err := h.e.Send(context.Background(), engine.Outgoing{WireID: "3EB0B1", To: "15552223333@c.us", Type: "media", MediaKind: "image", MediaURL: u})
	if !errors.Is(err, engine.ErrRejected) || !strings.Contains(err.Error(), "larger than 1024") {
		t.Fatalf("image above the bound: %v", err)
	}
	if _, err := h.e.Send(context.Background(), engine.Outgoing{WireID: "3EB0B2", To: "15552223333@c.us", Type: "media", MediaKind: "document", MediaURL: u}); err != nil {
		t.Fatalf("document within its bound: %v", err)
	}
	if len(h.f.uploads) != 1 || len(h.f.uploads[0]) != 4096 {
		t.Errorf("uploads %d", len(h.f.uploads))
	}
	if after := spooledFiles(t); after > before {
		t.Errorf("%d spooled files left behind", after-before)
	}
}

// spooledFiles counts the gateway's temporary files.
func spooledFiles(t *testing.T) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "switchboard-*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func TestCheckMedia(t *testing.T) {
	off := newHarness(t, true, func(c *Config) { c.FFmpeg = "off" })
	with := newHarness(t, true, func(c *Config) { c.FFmpeg = "" })
	tests := []struct {
		e                 *Engine
		kind, ct          string
		refused           bool
		needsFFmpegOnPath bool
	}{
		{off.e, "voice", "audio/mpeg", true, false},
		{off.e, "voice", "audio/ogg; codecs=opus", false, false},
		{off.e, "voice", "application/ogg", false, false},
		{off.e, "voice", "", false, false}, // cannot tell
		{off.e, "audio", "audio/mpeg", false, false},
		{off.e, "video", "video/mp4", false, false},
		{with.e, "voice", "audio/mpeg", false, true},
	}
	for _, tc := range tests {
		if tc.needsFFmpegOnPath && !mediaproc.Find("").Available() {
			continue
		}
		err := tc.e.CheckMedia(tc.kind, tc.ct)
		if (err != nil) != tc.refused || (err != nil && !errors.Is(err, mediaproc.ErrNoFFmpeg)) {
			t.Errorf("CheckMedia(%s, %q) = %v, want refused %v", tc.kind, tc.ct, err, tc.refused)
		}
	}
}
