package music

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// countingReader serves n bytes of an MP3-looking stream and counts what was read.
type countingReader struct {
	n, read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.n-c.read)
	for i := range p[:k] {
		p[i] = 0
	}
	if c.read == 0 {
		copy(p, "ID3")
	}
	c.read += k
	return int(k), nil
}

func TestPutUpload(t *testing.T) {
	f, err := NewFiles(t.TempDir(), "http://sb.test")
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.PutUpload(&countingReader{n: 5000}, 5000)
	if err != nil || u.Format != FormatMP3 || u.Size != 5000 {
		t.Fatalf("PutUpload = %+v, %v", u, err)
	}
	if st, err := os.Stat(f.UploadPath(u.Token)); err != nil || st.Size() != 5000 {
		t.Errorf("stored file: %v, %v", st, err)
	}
	// Oversized: refused as soon as the limit is passed, not after the whole stream.
	big := &countingReader{n: 10 << 20}
	if _, err := f.PutUpload(big, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized: %v", err)
	}
	if big.read > 1<<20+64<<10 {
		t.Errorf("read %d bytes of an oversized upload with a 1 MiB limit", big.read)
	}
	if _, err := f.PutUpload(strings.NewReader("%PDF-1.7 not audio"), 1<<20); !errors.Is(err, ErrNotAudio) {
		t.Errorf("not audio: %v", err)
	}
	if left, _ := os.ReadDir(f.dir + "/tmp"); len(left) != 0 {
		t.Errorf("left %d temporary files", len(left))
	}
}

func TestServeFiles(t *testing.T) {
	f, _ := NewFiles(t.TempDir(), "http://sb.test")
	u, err := f.Publish([]byte("mp3 bytes"), ".mp3")
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(u, "http://sb.test")
	rec := httptest.NewRecorder()
	if err := f.ServeMedia(rec, httptest.NewRequest(http.MethodGet, path, nil)); err != nil {
		t.Fatal(err)
	}
	h := rec.Header()
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), []byte("mp3 bytes")) || h.Get("Content-Type") != "audio/mpeg" ||
		h.Get("Content-Disposition") != "inline" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("served %d %q %v", rec.Code, rec.Body, h)
	}
	for _, bad := range []string{FilesPrefix + "nope.mp3", FilesPrefix + "../uploads/x.mp3", strings.TrimSuffix(path, ".mp3") + ".html"} {
		if err := f.ServeMedia(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, bad, nil)); err == nil {
			t.Errorf("%s served", bad)
		}
	}
}
