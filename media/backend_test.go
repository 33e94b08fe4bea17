package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/media/s3test"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

func TestMain(m *testing.M) {
	s3test.ServeIfChild()
	os.Exit(m.Run())
}

// backends are the backends under test, each built on demand: the database on
// SQLite, on PostgreSQL (TEST_DATABASE_URL), and S3 (in-process gofakes3, or
// TEST_MEDIA_S3_URL's server).
var backends = []struct {
	name string
	open func(t *testing.T) (Backend, *ent.Client)
}{
	{"db-sqlite", func(t *testing.T) (Backend, *ent.Client) {
		c, _ := storagetest.SQLite(t)
		return NewDBBackend(c), c
	}},
	{"db-postgres", func(t *testing.T) (Backend, *ent.Client) {
		if os.Getenv("TEST_DATABASE_URL") == "" {
			t.Skip("TEST_DATABASE_URL not set")
		}
		c := storagetest.Client(t, storagetest.DatabaseURL(t))
		return NewDBBackend(c), c
	}},
	{"s3", func(t *testing.T) (Backend, *ent.Client) {
		c, _ := storagetest.SQLite(t)
		return testS3(t, s3test.URL(t)), c
	}},
}

// testS3 is the S3 backend of a media URL.
func testS3(t *testing.T, rawURL string) Backend {
	t.Helper()
	b, err := OpenBackend(context.Background(), rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// randomBytes are n bytes of a seeded generator.
func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	_, _ = r.Read(b)
	return b
}

// failingReader yields data, then fails.
type failingReader struct{ data []byte }

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, errors.New("the upload was cut off")
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// Every backend stores and reads back files of every length around its
// chunk boundaries, seeks, deletes (a missing key too), and keeps nothing of
// an upload whose reader fails.
func TestBackendConformance(t *testing.T) {
	ctx := context.Background()
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b, _ := bk.open(t)
			key := func() string { return keyOf(switchboard.RandomToken(20)) }
			var keys []string
			for i, n := range []int{0, 1, 512, ChunkSize - 1, ChunkSize, ChunkSize + 1, 2*ChunkSize + 17} {
				k, data := key(), randomBytes(n, uint64(i))
				size := int64(n)
				if i%2 == 1 {
					size = -1 // unknown length
				}
				if err := b.Put(ctx, k, bytes.NewReader(data), size); err != nil {
					t.Fatalf("Put %d bytes: %v", n, err)
				}
				keys = append(keys, k)
				if got := readAll(t, b, k, n); !bytes.Equal(got, data) {
					t.Fatalf("%d bytes read back as %d different bytes", n, len(got))
				}
				if n > 2 {
					rc, err := b.Open(ctx, k, int64(n))
					if err != nil {
						t.Fatal(err)
					}
					if _, err := rc.Seek(int64(n/2), io.SeekStart); err != nil {
						t.Fatal(err)
					}
					tail, err := io.ReadAll(rc)
					rc.Close()
					if err != nil || !bytes.Equal(tail, data[n/2:]) {
						t.Fatalf("%d bytes from the middle: %d bytes, %v", n, len(tail), err)
					}
				}
			}
			if _, err := b.Open(ctx, key(), 1); !errors.Is(err, ErrMissing) {
				t.Errorf("Open of a key never stored = %v, want ErrMissing", err)
			}
			if err := b.Delete(ctx, append(keys[:2], key())...); err != nil {
				t.Fatalf("Delete (with a missing key) = %v", err)
			}
			for _, k := range keys[:2] {
				if _, err := b.Open(ctx, k, 1); !errors.Is(err, ErrMissing) {
					t.Errorf("Open after Delete = %v, want ErrMissing", err)
				}
			}
			cut := key()
			if err := b.Put(ctx, cut, &failingReader{data: randomBytes(ChunkSize+5, 9)}, -1); err == nil {
				t.Fatal("Put of a reader that fails succeeded")
			}
			if _, err := b.Open(ctx, cut, 1); !errors.Is(err, ErrMissing) {
				t.Errorf("Open after a failed Put = %v, want ErrMissing (nothing kept)", err)
			}
		})
	}
}

// readAll reads the n bytes under key.
func readAll(t *testing.T, b Backend, key string, n int) []byte {
	t.Helper()
	rc, err := b.Open(context.Background(), key, int64(n))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return got
}

// A bad SWITCHBOARD_MEDIA_URL is refused before anything is reached, naming
// what is wrong.
func TestCheckURL(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	tests := []struct {
		url, wantErr string
	}{
		{"", ""},
		{"db:", ""},
		{"s3://k:s@bucket/prefix?endpoint=127.0.0.1:9000&secure=false&region=eu-west-1", ""},
		{"s3://k:s@bucket", ""},
		{"file:///var/media", `unsupported "file"`},
		{"s3://k:s@/prefix", "needs a bucket"},
		{"s3://bucket/prefix", "needs credentials"},
		{"s3://k:s@bucket?secure=maybe", "not a boolean"},
		{"s3://k:s@bucket?endpoint=http://minio:9000", "without a scheme"},
		{"s3://k:s@bucket?bucket=x", `unknown parameter "bucket"`},
	}
	for _, tt := range tests {
		err := CheckURL(tt.url)
		if got := errString(err); tt.wantErr == "" && err != nil || tt.wantErr != "" && !bytes.Contains([]byte(got), []byte(tt.wantErr)) {
			t.Errorf("CheckURL(%q) = %v, want an error with %q", tt.url, err, tt.wantErr)
		}
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "env-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	c, err := ParseS3URL("s3://bucket/a/b/?endpoint=s3.example:443")
	if err != nil || c.AccessKey != "env-key" || c.SecretKey != "env-secret" || c.Prefix != "a/b" || !c.Secure || c.Bucket != "bucket" {
		t.Errorf("credentials from the environment: %+v, %v", c, err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
