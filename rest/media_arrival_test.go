package rest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent/message"
)

// getMedia fetches the path of a media URL from e's server: its status and the
// hex SHA-256 of its body.
func getMedia(t *testing.T, e *apptest.Env, mediaURL string) (int, string) {
	t.Helper()
	u, err := url.Parse(mediaURL)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(e.Server.URL + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, hex.EncodeToString(h.Sum(nil))
}

// A received image is kept on arrival: the webhook carries its mediaUrl and
// metadata at once, the URL serves the exact bytes (their SHA-256 is the one
// the network told, which the stored message keeps), the message's media
// answers the same URL, and after every process restarts on the same database
// the URL serves the same bytes.
func TestReceivedImageKeptOnArrival(t *testing.T) {
	first := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(first, rc.URL, "new_message_received_webhook")
	schedule(first, "+15550006601", map[string]any{"type": "text", "text": "send me a photo"})
	first.Eventually(10*time.Second, "the received image's webhook", func() bool {
		return len(rc.ofType("new_message_received_webhook")) == 1
	})
	data := rc.ofType("new_message_received_webhook")[0].payload["data"].(map[string]any)
	mediaURL, _ := data["mediaUrl"].(string)
	want := sandbox.Kinds["6601"].Media
	if mediaURL == "" || data["mimetype"] != want.MimeType || data["sha256"] != want.SHA256 || data["size"] != float64(want.Size) {
		t.Fatalf("webhook data %v; want a mediaUrl and the image's metadata %+v", data, want)
	}
	if status, sum := getMedia(t, first, mediaURL); status != 200 || sum != want.SHA256 {
		t.Fatalf("GET %s = %d with SHA-256 %s, want %s", mediaURL, status, sum, want.SHA256)
	}
	stored, err := first.App.Client.Message.Query().Where(message.MediaURL(mediaURL)).Only(systemCtx())
	if err != nil || stored.MediaSha256 != want.SHA256 || stored.MediaFetch != "" {
		t.Fatalf("stored message %+v, %v", stored, err)
	}
	got := first.Do("GET", "/v1/messages/media/"+stored.WaSerialized, first.Key, nil).Data()
	if got["url"] != mediaURL || got["mimetype"] != want.MimeType {
		t.Errorf("message media = %v, want %s", got, mediaURL)
	}
	list := first.Do("GET", "/v1/messages?chatId=15550006601@c.us&messageTypes=image", first.Key, nil).List()
	if len(list) != 1 || list[0]["mediaUrl"] != mediaURL {
		t.Errorf("stored messages = %v", list)
	}

	// Every process restarts on the same database.
	first.Server.Close()
	first.App.Close()
	second := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.DatabaseURL = first.Config.DatabaseURL
	}})
	if status, sum := getMedia(t, second, mediaURL); status != 200 || sum != want.SHA256 {
		t.Errorf("after a restart GET %s = %d with SHA-256 %s", mediaURL, status, sum)
	}
}

// With SWITCHBOARD_MEDIA_DOWNLOAD=none nothing is downloaded on arrival: the
// webhook carries no mediaUrl, and the message's media is downloaded when it is
// first read.
func TestMediaDownloadNone(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.MediaDownload = app.MediaDownloadNone
	}})
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "new_message_received_webhook")
	schedule(e, "+15550006603", map[string]any{"type": "text", "text": "send me the invoice"})
	e.Eventually(10*time.Second, "the received document's webhook", func() bool {
		return len(rc.ofType("new_message_received_webhook")) == 1
	})
	data := rc.ofType("new_message_received_webhook")[0].payload["data"].(map[string]any)
	if _, ok := data["mediaUrl"]; ok {
		t.Errorf("webhook data carries a mediaUrl without a download: %v", data)
	}
	stored, err := e.App.Client.Message.Query().Where(message.To("15550006603@c.us"), message.TypeEQ("media")).Only(systemCtx())
	if err != nil || stored.MediaURL != "" || string(stored.MediaRef) != "kind:6603" {
		t.Fatalf("stored message %+v, %v", stored, err)
	}
	got := e.Do("GET", "/v1/messages/media/"+stored.WaSerialized, e.Key, nil).Data()
	u, _ := got["url"].(string)
	if status, sum := getMedia(t, e, u); status != 200 || sum != sandbox.Kinds["6603"].Media.SHA256 {
		t.Errorf("lazy download %v: GET = %d %s", got, status, sum)
	}
}
