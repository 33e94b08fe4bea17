package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/ent/media"
	"github.com/switchboardhq/switchboard/media/s3test"
)

// An upload sent with mediaBase64 on the S3 backend is served identically from
// /media/…, its bytes in the bucket (the row says so, and holds none), and
// still identically from a second app built on the same database and bucket
// (a restart, or another replica).
func TestMediaOnS3IsServedAfterARestart(t *testing.T) {
	bucket := s3test.URL(t)
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.MediaURL = bucket }})
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 300<<10)...)
	_, _ = rand.NewChaCha8([32]byte{3}).Read(png[8:])
	sent := e.Do("POST", "/v1/messages/+15550190001", e.Key, map[string]any{"type": "media",
		"mediaBase64": base64.StdEncoding.EncodeToString(png), "mediaFilename": "pic.png"})
	if sent.Status != 201 {
		t.Fatalf("send = %d %s", sent.Status, sent.Raw)
	}
	u, _ := sent.Data()["mediaUrl"].(string)
	path := strings.TrimPrefix(u, e.Server.URL)
	if got := fetchMedia(t, e.Server.URL+path); !bytes.Equal(got, png) {
		t.Fatalf("served %d bytes, not the %d uploaded", len(got), len(png))
	}
	token := strings.Split(strings.TrimPrefix(path, "/media/"), "/")[0]
	row := e.App.Client.Media.Query().Where(media.Token(token)).OnlyX(systemCtx())
	if row.Backend != "s3" || row.Data != nil || row.Size != int64(len(png)) {
		t.Errorf("the media row: backend %q, %d bytes in the row, size %d", row.Backend, len(row.Data), row.Size)
	}

	restarted, err := app.New(context.Background(), e.Config)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(restarted.Handler)
	t.Cleanup(func() { srv.Close(); restarted.Close() })
	if got := fetchMedia(t, srv.URL+path); !bytes.Equal(got, png) {
		t.Errorf("after the restart: served %d bytes, not the %d uploaded", len(got), len(png))
	}
}

// fetchMedia is the body of a 200 answer to a GET of url.
func fetchMedia(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" ||
		res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET %s = %d %v (%v)", url, res.StatusCode, res.Header, err)
	}
	return body
}
