package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// Pictures go to an engine that announced media_refs as a URL of the server's
// media store, which it fetches; the profile picture comes back through an
// upload slot, as data (its callers read Data). Nothing is left in the store
// after.
func TestPicturesByReference(t *testing.T) {
	s := newMediaServer(t, 0, 0)
	a := &album{payload: randomBytes(t, 4000)}
	far := s.connect(t, a, false)
	ctx := context.Background()
	group, profile := randomBytes(t, 3000), randomBytes(t, 2000)
	if err := far.(engine.GroupAdmin).SetGroupPicture(ctx, "g1@g.us", engine.Media{Data: group, MimeType: "image/png"}); err != nil {
		t.Fatal(err)
	}
	if err := far.(engine.Profiler).SetProfile(ctx, engine.ProfileUpdate{Picture: &engine.Media{Data: profile, MimeType: "image/jpeg"}}); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"SetGroupPicture", "SetProfile"} {
		params := s.commands(method)
		if len(params) != 1 || !strings.Contains(string(params[0]), `"url":"`+s.url+`/media/`) || strings.Contains(string(params[0]), `"data"`) {
			t.Errorf("%s params = %s, want the picture by url, without data", method, params)
		}
	}
	a.mu.Lock()
	if diff := cmp.Diff([][]byte{group, profile}, a.pictures); diff != "" {
		t.Errorf("pictures the engine fetched (-want +got):\n%s", diff)
	}
	a.mu.Unlock()
	pic, err := far.(engine.Profiler).ProfilePicture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pic.Data, a.payload[:100]) || pic.Body != nil || pic.MimeType != "image/jpeg" {
		t.Errorf("ProfilePicture = %d bytes of data of %s, want the engine's 100 of image/jpeg", len(pic.Data), pic.MimeType)
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store, want 0", n)
	}
}

// The slot works across replicas: the caller is on replica A, the engine's
// socket on B, and the PUT lands on C; the bytes still reach A's caller whole.
func TestUploadSlotAcrossReplicas(t *testing.T) {
	client, _ := storagetest.SQLite(t)
	ws := client.Workspace.Create().SetName("acme").SaveX(sys)
	token, hash, prefix := auth.NewEngineToken()
	row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind(entengine.KindRemote).SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	mux := http.NewServeMux()
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	store := media.NewStore(client, front.URL)
	hubs := make([]*remote.Hub, 3)
	for i := range hubs {
		reg := engine.NewRegistry(engine.NewPresence(rdb, time.Minute), &recorder{}, nil)
		hubs[i] = remote.NewHub(rdb, client, reg, &recorder{})
		hubs[i].MaxFrame, hubs[i].Media, hubs[i].PublicURL = 64<<10, store, front.URL
		reg.SetRemote(hubs[i])
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		if err := hubs[i].Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := hubs[0], hubs[1], hubs[2]
	sockets := httptest.NewServer(b.Handler(writeEnvelope, nil))
	t.Cleanup(sockets.Close)
	var reachedC atomic.Bool // a PUT reached replica C
	mux.Handle(remote.Path, recordingProxy(sockets.URL, &frameLog{}))
	mux.Handle("PUT "+remote.UploadPath+"{token}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reachedC.Store(true)
		c.UploadHandler(writeEnvelope).ServeHTTP(w, r)
	}))

	al := &album{payload: randomBytes(t, 300<<10)}
	cl := &remote.Client{URL: front.URL, Token: token, Kind: engine.KindRegular, Capabilities: engine.CapabilitiesOf(al), NoReconnect: true}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		_ = cl.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return al, nil })
	}()
	var far engine.Engine
	eventually(t, "replica A finds the engine on B", func() bool {
		got, err := a.Get(context.Background(), ws.ID, row.ID)
		far = got
		return err == nil
	})
	m, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0E"})
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, m); !bytes.Equal(b, al.payload) {
		t.Errorf("read %d bytes on A, not the engine's %d", len(b), len(al.payload))
	}
	if !reachedC.Load() {
		t.Error("the upload did not go to replica C")
	}
	if n := client.Media.Query().CountX(sys); n != 0 {
		t.Errorf("%d media left in the store, want 0", n)
	}
}

// The reference client announces media_refs and talks to its own server only:
// an uploadUrl or a picture's url on another origin is refused (the reply is
// an error) and never requested, so the engine token never leaves the server.
func TestClientRefusesForeignMediaURLs(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { foreignHits.Add(1) }))
	t.Cleanup(foreign.Close)
	commands := []struct {
		name, method, params string
	}{
		{"an uploadUrl elsewhere", "FetchMedia", `[{"fromMe":false,"remote":"1@c.us","id":"A"},"` + foreign.URL + `/v1/engines/uploads/x"]`},
		{"a picture elsewhere", "SetGroupPicture", `["1@g.us",{"url":"` + foreign.URL + `/media/x","mimeType":"image/png"}]`},
		{"a profile picture elsewhere", "SetProfile", `[{"picture":{"url":"` + foreign.URL + `/media/y","mimeType":"image/jpeg"}}]`},
	}
	type answer struct {
		hello   remote.Frame
		replies []remote.Frame
	}
	answers := make(chan answer, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		var got answer
		_, raw, err := ws.Read(ctx)
		if err != nil || json.Unmarshal(raw, &got.hello) != nil {
			return
		}
		welcome, _ := json.Marshal(remote.Frame{Type: remote.FrameWelcome, EngineID: "eng_x", WorkspaceID: "ws_x",
			HeartbeatMs: 10000, TTLMs: 30000, MaxFrame: 64 << 10, Version: 1})
		_ = ws.Write(ctx, websocket.MessageText, welcome)
		for i, c := range commands {
			cmd, _ := json.Marshal(remote.Frame{Type: remote.FrameCommand, ID: fmt.Sprint("c", i), Method: c.method, Params: json.RawMessage(c.params)})
			_ = ws.Write(ctx, websocket.MessageText, cmd)
			for {
				_, raw, err := ws.Read(ctx)
				var f remote.Frame
				if err != nil || json.Unmarshal(raw, &f) != nil {
					return
				}
				if f.Type == remote.FrameReply {
					got.replies = append(got.replies, f)
					break
				}
			}
		}
		answers <- got
	}))
	t.Cleanup(srv.Close)
	a := &album{payload: []byte("clip")}
	c := &remote.Client{URL: srv.URL, Token: "sb_engine_test", Capabilities: engine.CapabilitiesOf(a), NoReconnect: true}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return a, nil })
	}()
	var got answer
	select {
	case got = <-answers:
	case <-ctx.Done():
		t.Fatal("the client answered not every command")
	}
	if diff := cmp.Diff([]string{remote.FeatureMediaRefs}, got.hello.Features); diff != "" {
		t.Errorf("hello features (-want +got):\n%s", diff)
	}
	for i, c := range commands {
		if r := got.replies[i]; r.Error == nil || !strings.Contains(r.Error.Message, "not on the server's origin") {
			t.Errorf("%s: reply %+v, want an error refusing the origin", c.name, r)
		}
	}
	if n := foreignHits.Load(); n != 0 {
		t.Errorf("the foreign origin was asked %d times", n)
	}
}
