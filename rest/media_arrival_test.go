package rest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/media"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/media/s3test"
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
// (and bucket) the URL serves the same bytes: on the database backend and on
// the S3 one.
func TestReceivedImageKeptOnArrival(t *testing.T) {
	for _, backend := range []string{"db", "s3"} {
		t.Run(backend, func(t *testing.T) {
			mediaURL := "db:"
			if backend == "s3" {
				mediaURL = s3test.URL(t)
			}
			receivedImageKept(t, mediaURL)
		})
	}
}

func receivedImageKept(t *testing.T, mediaBackend string) {
	first := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.MediaURL = mediaBackend }})
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
	token := strings.Split(strings.TrimPrefix(mediaURL, first.Config.PublicURL+"/media/"), "/")[0]
	wantBackend := map[bool]string{true: "s3", false: "db"}[strings.HasPrefix(mediaBackend, "s3:")]
	if row, err := first.App.Client.Media.Query().Where(media.Token(token)).Only(systemCtx()); err != nil || row.Backend != wantBackend {
		t.Fatalf("the media row of %s: %+v, %v; want its bytes on %s", token, row, err, wantBackend)
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
		c.DatabaseURL, c.MediaURL = first.Config.DatabaseURL, mediaBackend
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

// fakeCDN is the network's copy of the files the fake gateways' messages
// carry, by the reference they gave: a reference it lacks is a file the
// sender's phone did not upload again when asked.
var fakeCDN = map[string]string{"ref:photo": "the photo's bytes"}

// FetchMedia implements engine.MediaFetcher: a session remembers nothing of
// the messages it saw.
func (f *fakeGateway) FetchMedia(context.Context, engine.Key) (engine.Media, error) {
	return engine.Media{}, engine.ErrNotFound
}

// FetchMediaRef implements engine.MediaRefFetcher from fakeCDN, while the
// session is connected.
func (f *fakeGateway) FetchMediaRef(_ context.Context, _ engine.Key, ref []byte) (engine.Media, error) {
	if f.isClosed() || !f.State().Connected {
		return engine.Media{}, engine.ErrDisconnected
	}
	data, ok := fakeCDN[string(ref)]
	if !ok {
		return engine.Media{}, &engine.MediaUnavailableError{Reason: engine.MediaAwaitingSender,
			Message: "the sender's phone did not upload it again"}
	}
	return engine.Media{Body: io.NopCloser(strings.NewReader(data)), Size: int64(len(data))}, nil
}

// receive reports an image received by the session f, downloadable from ref.
func receive(t *testing.T, f *fakeGateway, id, ref string) engine.Key {
	t.Helper()
	k := engine.Key{Remote: "15550002222@c.us", ID: id}
	sum := sha256.Sum256([]byte(fakeCDN[ref]))
	ev := engine.Event{ID: "in_" + id, Type: engine.EventMessage, WorkspaceID: f.cfg.WorkspaceID, EngineID: f.cfg.EngineID,
		At: time.Now(), Key: k, Message: &engine.Incoming{Key: k, From: k.Remote, Type: "media", Media: &engine.MediaInfo{
			Kind: "image", MimeType: "image/jpeg", SHA256: hex.EncodeToString(sum[:]), Ref: []byte(ref)}}}
	if err := f.cfg.Sink.HandleEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return k
}

// A gateway's received image is downloaded by whichever process holds the
// session when the download runs, from the keys kept with the message: here
// the session moves (its lease lost) between the message and its download.
// An image whose sender's phone does not upload it again is unavailable,
// with that reason, at its URL (404) and as the message's media.
func TestGatewayMediaAcrossFailOver(t *testing.T) {
	var fakes fakeGateways
	a := remoteEnv(t, func(c *app.Config) {
		c.OpenGateway = fakes.opener("A")
		c.GatewayLeaseTTL = 3 * time.Second // fenced 2 s after the last renewal: room for a loaded -race run
	})
	key := a.NewKey("acme", "*")
	id := createEngine(a, key, "gateway")["id"].(string)
	f := fakes.latest(id)
	f.pair("15550001111:7@s.whatsapp.net")
	a.Eventually(10*time.Second, "the paired gateway in ping", func() bool { return pinged(a, key, id) })

	// The lease is lost: the session closes; a new one opens, not yet connected.
	if err := a.App.Redis.Del(context.Background(), "switchboard:engine-lease:"+id).Err(); err != nil {
		t.Fatal(err)
	}
	a.Eventually(10*time.Second, "the session reopened", func() bool {
		g := fakes.latest(id)
		return g != f && g != nil && f.isClosed()
	})
	photo := receive(t, f, "PHOTO1", "ref:photo") // reported by the old session before it went
	gone := receive(t, f, "GONE1", "ref:gone")
	stored := func(k engine.Key) *ent.Message {
		m, err := a.App.Client.Message.Query().Where(message.WaSerialized(k.Serialized())).Only(systemCtx())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a.Eventually(10*time.Second, "both images stored", func() bool {
		n, _ := a.App.Client.Message.Query().Where(message.MediaFetchNotNil()).Count(systemCtx())
		return n == 2
	})
	next := fakes.latest(id)
	next.pair(next.cfg.DeviceJID)
	a.Eventually(20*time.Second, "the downloads done", func() bool {
		return stored(photo).MediaFetch == "" && stored(gone).MediaFetch != inbox.FetchDue
	})
	m := stored(photo)
	if status, sum := getMedia(t, a, m.MediaURL); status != 200 || sum != m.MediaSha256 {
		t.Errorf("GET the photo = %d %s, want %s", status, sum, m.MediaSha256)
	}
	g := stored(gone)
	r := a.Do("GET", strings.TrimPrefix(g.MediaURL, a.Config.PublicURL), "", nil)
	if r.Status != 404 || !strings.Contains(string(r.Raw), engine.MediaAwaitingSender) {
		t.Errorf("GET the unanswered image = %d %s", r.Status, r.Raw)
	}
	got := a.Do("GET", "/v1/messages/media/"+g.WaSerialized, key, nil).Data()
	if got["mediaUnavailable"] != engine.MediaAwaitingSender {
		t.Errorf("message media = %v", got)
	}
}

// A media download Redis lost (a flush after the message was stored) is queued
// again by the reconciler, from the message's media_fetch; a second pass finds
// it queued.
func TestReconcilerQueuesLostMediaDownloads(t *testing.T) {
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, NoStart: true})
	ws := workspaceOf(e)
	k := engine.Key{Remote: "15550006601@c.us", ID: "3EB2LOST"}
	sum := sha256.Sum256([]byte("lost"))
	ev := engine.Event{ID: "lost1", Type: engine.EventMessage, WorkspaceID: ws, EngineID: "sandbox", At: time.Now(), Key: k,
		Message: &engine.Incoming{Key: k, From: k.Remote, Type: "media", Media: &engine.MediaInfo{Kind: "image",
			MimeType: "image/jpeg", SHA256: hex.EncodeToString(sum[:]), Ref: []byte("kind:6601")}}}
	if err := e.App.Inbox.HandleEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if n, err := e.App.Inbox.ApplyOnce(context.Background(), time.Now()); err != nil || n != 1 {
		t.Fatalf("ApplyOnce = %d, %v", n, err)
	}
	m, err := e.App.Client.Message.Query().Where(message.WaSerialized(k.Serialized())).Only(systemCtx())
	if err != nil || m.MediaFetch != inbox.FetchDue || m.MediaURL == "" {
		t.Fatalf("stored message %+v, %v", m, err)
	}
	if err := e.App.Redis.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || n != 1 {
		t.Fatalf("ReconcileOnce = %d, %v; want the lost download", n, err)
	}
	if n, err := e.App.Jobs.ReconcileOnce(context.Background(), time.Now(), 0); err != nil || n != 0 {
		t.Errorf("second pass = %d, %v", n, err)
	}
}
