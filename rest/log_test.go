package rest_test

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
)

// logBuffer collects log lines from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// No log line carries a credential (issue 26, row 11): a failed delivery names
// its webhook's URL without the query (?token=…), a redirect's Location without
// its query, and the access log shows /media/<token>/… and a song file's token
// redacted. The lines are those of the real router, the real delivery handler
// and the package-level logger the jobs use.
func TestLogsCarryNoSecrets(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// The jobs log some lines through slog's default: given the bare handler
	// here, those lines are redacted at their source or not at all.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(logger)
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.Logger = logger
		c.WebhookRetrySchedule = []time.Duration{time.Hour}
	}})

	const hookSecret, redirectSecret = "hooksecret4711", "locationsecret4712"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hook?token=" + hookSecret
	ln.Close() // nothing listens there: every attempt is refused
	redirecting := newReceiver(t, nil)
	redirecting.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/in?sig="+redirectSecret, http.StatusFound)
	})
	refused := createWebhook(e, closed, "message.queued")
	moved := createWebhook(e, redirecting.URL+"/in?token="+hookSecret, "message.queued")

	// A stored attachment, fetched by its URL; a song file that does not exist.
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nlogs"))
	m := schedule(e, "+15550401010", map[string]any{"type": "media", "mediaBase64": png, "mediaFilename": "a.png"})
	mediaURL := m["mediaUrl"].(string)
	mediaToken := strings.Split(strings.SplitAfter(mediaURL, "/media/")[1], "/")[0]
	for _, u := range []string{mediaURL, e.Server.URL + "/media/guessedtoken4713/x.png", e.Server.URL + "/music/files/songtoken4714.mp3"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	for _, hook := range []map[string]any{refused, moved} {
		path := "/v1/webhooks/" + hook["id"].(string) + "/deliveries"
		e.Eventually(10*time.Second, "a failed attempt of "+hook["url"].(string), func() bool {
			d := e.Do("GET", path, e.Key, nil).List()
			return len(d) > 0 && d[0]["lastError"] != nil && d[0]["lastError"] != ""
		})
		d := e.Do("GET", path, e.Key, nil).List()[0]
		if strings.Contains(d["lastError"].(string), hookSecret) || strings.Contains(d["lastError"].(string), redirectSecret) {
			t.Errorf("the attempt's error holds a secret: %v", d["lastError"])
		}
	}
	e.Eventually(10*time.Second, "the failures in the log", func() bool {
		out := logs.String()
		return strings.Contains(out, "connection refused") && strings.Contains(out, "redirect not followed") &&
			strings.Contains(out, "/music/files/")
	})
	out := logs.String()
	for _, secret := range []string{hookSecret, redirectSecret, mediaToken, "guessedtoken4713", "songtoken4714"} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, secret) {
				t.Errorf("a log line holds %s: %s", secret, line)
			}
		}
	}
	for _, want := range []string{"/hook?…", "/media/…/a.png", "/music/files/…"} {
		if !strings.Contains(out, want) {
			t.Errorf("no log line shows %s redacted:\n%s", want, out)
		}
	}
}
