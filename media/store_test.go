package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/mediachunk"
	"github.com/switchboardhq/switchboard/media/s3test"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
)

// storeOn is a Store whose bytes go to the backend of bk.
func storeOn(t *testing.T, open func(t *testing.T) (Backend, *ent.Client)) *Store {
	t.Helper()
	b, client := open(t)
	s := NewStore(client, "https://sb.example")
	s.Backend = b
	return s
}

// heapWatch records the peak heap in use, sampled every 4 MiB of a stream.
type heapWatch struct {
	since, peak uint64
}

func (h *heapWatch) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapInuse)
}

// grown is how far the heap grew past where it was when the watch began.
func (h *heapWatch) grown() uint64 { return h.peak - min(h.peak, h.since) }

func newHeapWatch() *heapWatch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &heapWatch{since: m.HeapInuse, peak: m.HeapInuse}
}

// generated yields n pseudo-random bytes, hashing them and sampling the heap.
type generated struct {
	rng   *rand.ChaCha8
	left  int
	sum   hash.Hash
	watch *heapWatch
	until int
}

func (g *generated) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), g.left)
	_, _ = g.rng.Read(p[:n])
	g.sum.Write(p[:n])
	g.left -= n
	if g.until -= n; g.until <= 0 {
		g.watch.sample()
		g.until = 4 << 20
	}
	return n, nil
}

// hashingSink hashes what is written to it, sampling the heap.
type hashingSink struct {
	sum   hash.Hash
	n     int64
	watch *heapWatch
	until int
}

func (s *hashingSink) Write(p []byte) (int, error) {
	s.sum.Write(p)
	s.n += int64(len(p))
	if s.until -= len(p); s.until <= 0 {
		s.watch.sample()
		s.until = 4 << 20
	}
	return len(p), nil
}

// A 64 MiB file goes into every backend and out again without being whole in
// memory: the heap grows by well under the file's size either way (the S3
// server runs in a child process, so only the client's memory counts).
func TestLargeFileIsStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB through every backend")
	}
	const size = 64 << 20
	const bound = 24 << 20
	ctx := viewer.WorkspaceContext(context.Background(), "ws1")
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			open := bk.open
			if bk.name == "s3" {
				open = func(t *testing.T) (Backend, *ent.Client) {
					c, _ := storagetest.SQLite(t)
					return testS3(t, s3test.Child(t)), c
				}
			}
			s := storeOn(t, open)
			in := &generated{rng: rand.NewChaCha8([32]byte{7}), left: size, sum: sha256.New()}
			in.watch = newHeapWatch()
			o, err := s.Save(ctx, in, "video/mp4", "big.mp4")
			if err != nil {
				t.Fatal(err)
			}
			want := hex.EncodeToString(in.sum.Sum(nil))
			if o.Size != size || o.SHA256 != want {
				t.Fatalf("saved %d bytes with SHA-256 %s, want %d and %s", o.Size, o.SHA256, size, want)
			}
			if in.watch.grown() > bound {
				t.Errorf("Save of %d MiB grew the heap by %d MiB", size>>20, in.watch.grown()>>20)
			}
			out := &hashingSink{sum: sha256.New(), watch: newHeapWatch()}
			rc, got, ok, err := s.Open(ctx, o.URL)
			if err != nil || !ok {
				t.Fatalf("Open = %v, %v", ok, err)
			}
			_, err = io.Copy(out, rc)
			rc.Close()
			if err != nil || out.n != size || hex.EncodeToString(out.sum.Sum(nil)) != want || got.SHA256 != want {
				t.Fatalf("read back %d bytes (%v), another SHA-256 or %s", out.n, err, got.SHA256)
			}
			if out.watch.grown() > bound {
				t.Errorf("Open of %d MiB grew the heap by %d MiB", size>>20, out.watch.grown()>>20)
			}
			t.Logf("heap growth: save %d MiB, open %d MiB", in.watch.grown()>>20, out.watch.grown()>>20)
		})
	}
}

// A file past the bound is ErrTooLarge and leaves nothing (no row, no bytes);
// Prune deletes expired media's bytes with their rows; a Range is served.
func TestStoreOnEveryBackend(t *testing.T) {
	ctx := viewer.WorkspaceContext(context.Background(), "ws1")
	sys := viewer.SystemContext(context.Background())
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			s := storeOn(t, bk.open)
			s.MaxBytes = 2*ChunkSize + 10
			_, err := s.Save(ctx, bytes.NewReader(randomBytes(3*ChunkSize, 1)), "", "big.bin")
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Save past the bound = %v, want ErrTooLarge", err)
			}
			if n := s.client.Media.Query().CountX(sys); n != 0 {
				t.Errorf("%d media rows left by a file past the bound", n)
			}
			if n := s.client.MediaChunk.Query().Where(mediachunk.KeyNEQ("")).CountX(sys); bk.name == "db-sqlite" && n != 0 {
				t.Errorf("%d chunks left by a file past the bound", n)
			}
			png := append([]byte("\x89PNG\r\n\x1a\n"), randomBytes(ChunkSize+100, 2)...)
			o, err := s.Save(ctx, bytes.NewReader(png), "", "pic.png")
			if err != nil || o.ContentType != "image/png" {
				t.Fatalf("Save = %+v, %v; want image/png sniffed", o, err)
			}
			req := httptest.NewRequest(http.MethodGet, o.URL[len("https://sb.example"):], nil)
			req.Header.Set("Range", "bytes=1048570-1048580")
			rec := httptest.NewRecorder()
			if err := s.ServeMedia(rec, req); err != nil || rec.Code != http.StatusPartialContent ||
				!bytes.Equal(rec.Body.Bytes(), png[1048570:1048581]) || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("Range across a chunk boundary = %d %v %q", rec.Code, err, rec.Header())
			}
			if n, err := s.Prune(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 {
				t.Fatalf("Prune = %d, %v; want 1", n, err)
			}
			if _, err := s.backend().Open(ctx, keyOf(o.Token), 1); !errors.Is(err, ErrMissing) {
				t.Errorf("the bytes of pruned media: %v, want ErrMissing", err)
			}
		})
	}
}

// Media stored before backends (bytes in the row's data column) are served as
// before.
func TestRowsFromBeforeBackends(t *testing.T) {
	s := testStore(t)
	sys := viewer.SystemContext(context.Background())
	token := switchboard.RandomToken(20)
	s.client.Media.Create().SetWorkspaceID("ws1").SetToken(token).SetContentType("text/plain").
		SetSize(5).SetData([]byte("hello")).ExecX(sys)
	if code, body := serve(s, "https://sb.example/media/"+token); code != "" || body != "hello" {
		t.Errorf("a row from before backends = %q %q", code, body)
	}
}
