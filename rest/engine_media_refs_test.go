package rest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/viewer"
)

// bigMediaEngine answers every media fetch with the same large file.
type bigMediaEngine struct{ data []byte }

func (b *bigMediaEngine) ID() string   { return "big" }
func (b *bigMediaEngine) Kind() string { return engine.KindGateway }
func (b *bigMediaEngine) Close() error { return nil }
func (b *bigMediaEngine) Send(_ context.Context, m engine.Outgoing) (engine.Key, error) {
	return engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}, nil
}
func (b *bigMediaEngine) FetchMedia(context.Context, engine.Key) (engine.Media, error) {
	return engine.Media{Data: b.data, MimeType: "video/mp4"}, nil
}

// Issue 32 item 4, through the API's router: with engine frames bounded to 64
// KiB, a received 1 MiB video still downloads whole, the reference client
// uploading it to the server's upload slot (PUT /v1/engines/uploads/{token});
// that route answers refusals in the error envelope.
func TestRemoteEngineMediaLargerThanAFrame(t *testing.T) {
	e := remoteEnv(t, func(c *app.Config) { c.EngineMaxFrame = 64 << 10 })
	key := e.NewKey("acme", "*")
	ws := workspaceOfKey(e, key)
	rem := createEngine(e, key, "remote")
	token := rem["token"].(string)
	big := &bigMediaEngine{data: make([]byte, 1<<20)}
	if _, err := rand.Read(big.data); err != nil {
		t.Fatal(err)
	}
	c := &remote.Client{URL: e.Server.URL, Token: token, NoReconnect: true, Capabilities: engine.CapabilitiesOf(big)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return big, nil })
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	e.Eventually(10*time.Second, "the remote engine in ping", func() bool { return pinged(e, key, rem["id"].(string)) })

	k := engine.Key{Remote: "15550190001@c.us", ID: "BIGCLIP"}
	err := e.App.Client.Message.Create().SetOrigin(message.OriginIncoming).SetTo(k.Remote).SetFrom(k.Remote).
		SetType("media").SetMediaKind("video").SetStatus("received").SetFromMe(false).SetWaID(k.ID).
		SetWaSerialized(k.Serialized()).Exec(viewer.WorkspaceContext(context.Background(), ws))
	if err != nil {
		t.Fatal(err)
	}
	r := e.Do("GET", "/v1/messages/media/false_15550190001@c.us_BIGCLIP", key, nil)
	u, _ := r.Data()["url"].(string)
	if r.Status != 200 || !strings.HasPrefix(u, e.Server.URL+"/media/") {
		t.Fatalf("media = %d %s", r.Status, r.Raw)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, big.data) {
		t.Errorf("served %d bytes, not the engine's %d", len(got), len(big.data))
	}

	refusals := []struct {
		name, token, path string
		status            int
		code              string
	}{
		{"no token", "", "/v1/engines/uploads/abc", 401, "authentication_required"},
		{"an API key", key, "/v1/engines/uploads/abc", 401, "authentication_required"},
		{"a slot never minted", token, "/v1/engines/uploads/abc", 404, "not_found"},
	}
	for _, tt := range refusals {
		r := e.Do("PUT", tt.path, tt.token, []byte("bytes"))
		if r.Status != tt.status || r.Error()["code"] != tt.code {
			t.Errorf("PUT with %s = %d %s, want %d %s", tt.name, r.Status, r.Raw, tt.status, tt.code)
		}
	}
}
