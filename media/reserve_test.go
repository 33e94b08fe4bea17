package media

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "modernc.org/sqlite"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/viewer"
)

func testStore(t *testing.T) *Store {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "media.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, db)))
	t.Cleanup(func() { client.Close() })
	if err := client.Schema.Create(viewer.SystemContext(context.Background())); err != nil {
		t.Fatal(err)
	}
	return NewStore(client, "https://sb.example")
}

// serve is the error code (or "") and body of a GET of rawURL from s.
func serve(s *Store, rawURL string) (string, string) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, strings.TrimPrefix(rawURL, "https://sb.example"), nil)
	if err := s.ServeMedia(rec, req); err != nil {
		return switchboard.ErrorCode(err), switchboard.ErrorMessage(err)
	}
	return "", rec.Body.String()
}

// Reserved media are served once filled; a read meanwhile waits up to FillWait
// and answers 503; failed media answer 404 with the reason.
func TestReserveFillFail(t *testing.T) {
	ctx := viewer.WorkspaceContext(context.Background(), "ws1")
	s := testStore(t)
	s.FillWait = 10 * time.Millisecond
	o, err := s.Reserve(ctx, "image/jpeg", "photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := serve(s, o.URL); code != switchboard.EUNAVAILABLE {
		t.Fatalf("pending read = %q, want unavailable", code)
	}
	got, err := s.Fill(ctx, o.URL, strings.NewReader("jpeg bytes"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != 10 || got.ContentType != "image/jpeg" || len(got.SHA256) != 64 {
		t.Fatalf("Fill = %+v", got)
	}
	if code, body := serve(s, o.URL); code != "" || body != "jpeg bytes" {
		t.Fatalf("filled read = %q %q", code, body)
	}
	rc, obj, ok, err := s.Open(ctx, o.URL)
	if err != nil || !ok || obj.SHA256 != got.SHA256 {
		t.Fatalf("Open = %+v %v %v", obj, ok, err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "jpeg bytes" {
		t.Fatalf("Open read %q", b)
	}

	gone, err := s.Reserve(ctx, "video/mp4", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, gone.URL, "expired"); err != nil {
		t.Fatal(err)
	}
	if code, msg := serve(s, gone.URL); code != switchboard.ENOTFOUND || !strings.Contains(msg, "expired") {
		t.Fatalf("failed read = %q %q", code, msg)
	}
	if _, err := s.Fill(ctx, "https://sb.example/media/nope", strings.NewReader("x"), ""); !errors.Is(err, errNoMedia) {
		t.Fatalf("Fill of an unknown URL = %v", err)
	}
}
