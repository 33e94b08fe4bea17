package remote_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// mediaServer is a replica that moves media by reference: one origin serves
// the engine endpoint (through a frame-recording proxy), the upload slots and
// the media store's /media URLs, as the API's router does.
type mediaServer struct {
	hub         *remote.Hub
	client      *ent.Client
	redis       *miniredis.Miniredis
	url         string
	frames      *frameLog
	workspaceID string
	// tokens and ids of two remote engines of the workspace
	token, other     string
	engineID, other2 string
}

// writeEnvelope answers err as the API does: its status and the error envelope.
func writeEnvelope(w http.ResponseWriter, _ *http.Request, err error) {
	status := map[string]int{switchboard.EUNAUTHORIZED: 401, switchboard.EFORBIDDEN: 403, switchboard.ENOTFOUND: 404,
		switchboard.ECONFLICT: 409, switchboard.ETOOLARGE: 413}[switchboard.ErrorCode(err)]
	if status == 0 {
		status = 500
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"success": false,
		"error": map[string]string{"code": switchboard.ErrorCode(err), "message": switchboard.ErrorMessage(err)}})
}

func newMediaServer(t *testing.T, maxFrame, maxBytes int64) mediaServer {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	ws := client.Workspace.Create().SetName("acme").SaveX(sys)
	s := mediaServer{client: client, workspaceID: ws.ID, frames: &frameLog{}, redis: miniredis.RunT(t)}
	for _, into := range []struct{ token, id *string }{{&s.token, &s.engineID}, {&s.other, &s.other2}} {
		token, hash, prefix := auth.NewEngineToken()
		row := client.Engine.Create().SetWorkspaceID(ws.ID).SetKind(entengine.KindRemote).SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
		*into.token, *into.id = token, row.ID
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.redis.Addr()})
	reg := engine.NewRegistry(engine.NewPresence(rdb, time.Minute), &recorder{}, nil)
	s.hub = remote.NewHub(rdb, client, reg, &recorder{})
	s.hub.MaxFrame = maxFrame
	reg.SetRemote(s.hub)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := s.hub.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sockets := httptest.NewServer(s.hub.Handler(writeEnvelope, nil))
	t.Cleanup(sockets.Close)
	mux := http.NewServeMux()
	front := httptest.NewServer(mux)
	t.Cleanup(func() {
		front.Close()
		validateFrames(t, s.frames)
	})
	store := media.NewStore(client, front.URL)
	store.MaxBytes = maxBytes
	s.hub.Media, s.hub.PublicURL, s.url = store, front.URL, front.URL
	mux.Handle(remote.Path, recordingProxy(sockets.URL, s.frames))
	mux.Handle("PUT "+remote.UploadPath+"{token}", s.hub.UploadHandler(writeEnvelope))
	mux.HandleFunc("GET /media/", func(w http.ResponseWriter, r *http.Request) {
		if err := store.ServeMedia(w, r); err != nil {
			writeEnvelope(w, r, err)
		}
	})
	return s
}

// connect runs a reference client serving eng for the first engine and
// returns it as the server sees it.
func (s mediaServer) connect(t *testing.T, eng engine.Engine, inline bool) engine.Engine {
	t.Helper()
	c := &remote.Client{URL: s.url, Token: s.token, Kind: engine.KindRegular, Capabilities: engine.CapabilitiesOf(eng),
		NoReconnect: true, InlineMedia: inline}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return eng, nil })
	}()
	var far engine.Engine
	eventually(t, "the engine connects", func() bool {
		got, err := s.hub.Get(context.Background(), s.workspaceID, s.engineID)
		far = got
		return err == nil
	})
	return far
}

// mediaRows counts the media the store holds.
func (s mediaServer) mediaRows(t *testing.T) int {
	t.Helper()
	return s.client.Media.Query().CountX(sys)
}

// commands are the params of the commands of method the server sent.
func (s mediaServer) commands(method string) []json.RawMessage {
	s.frames.mu.Lock()
	defer s.frames.mu.Unlock()
	var out []json.RawMessage
	for _, f := range s.frames.frames {
		var head struct {
			Type, Method string
			Params       json.RawMessage
		}
		if !f.toServer && json.Unmarshal(f.raw, &head) == nil && head.Type == remote.FrameCommand && head.Method == method {
			out = append(out, head.Params)
		}
	}
	return out
}

// largest is the size of the largest frame either side sent.
func (s mediaServer) largest() int {
	s.frames.mu.Lock()
	defer s.frames.mu.Unlock()
	n := 0
	for _, f := range s.frames.frames {
		n = max(n, len(f.raw))
	}
	return n
}

// put PUTs body to an upload URL with token; it returns the status and the
// error envelope's code.
func put(t *testing.T, url, token string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "image/png")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	return resp.StatusCode, env.Error.Code
}

// album is an engine whose media are big: FetchMedia answers payload once
// release is closed (at once when nil); it serves the profile and groups too.
type album struct {
	phone
	payload []byte
	release chan struct{}
	asked   chan struct{} // closed at the first FetchMedia

	once     sync.Once
	mu       sync.Mutex
	pictures [][]byte // the group and profile pictures it was handed
}

func (a *album) FetchMedia(ctx context.Context, _ engine.Key) (engine.Media, error) {
	if a.asked != nil {
		a.once.Do(func() { close(a.asked) })
	}
	if a.release != nil {
		select {
		case <-a.release:
		case <-ctx.Done():
			return engine.Media{}, ctx.Err()
		}
	}
	return engine.Media{Data: a.payload, MimeType: "video/mp4", Filename: "clip.mp4"}, nil
}

func (a *album) Profile(context.Context) (engine.Profile, error) { return engine.Profile{}, nil }
func (a *album) ProfilePicture(context.Context) (engine.Media, error) {
	return engine.Media{Data: a.payload[:100], MimeType: "image/jpeg"}, nil
}
func (a *album) SetProfile(_ context.Context, u engine.ProfileUpdate) error {
	return a.picture(*u.Picture)
}
func (a *album) CreateGroup(context.Context, string, []string) (string, []engine.Added, error) {
	return "", nil, nil
}
func (a *album) UpdateGroup(context.Context, string, engine.GroupUpdate) error { return nil }
func (a *album) AddParticipants(context.Context, string, []string) ([]engine.Added, error) {
	return nil, nil
}
func (a *album) RemoveParticipant(context.Context, string, string) error { return nil }
func (a *album) SetAdmin(context.Context, string, string, bool) error    { return nil }
func (a *album) LeaveGroup(context.Context, string) error                { return nil }
func (a *album) SetGroupPicture(_ context.Context, _ string, p engine.Media) error {
	return a.picture(p)
}

func (a *album) picture(p engine.Media) error {
	if p.URL != "" {
		return errors.New("handed a url, not the bytes")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pictures = append(a.pictures, p.Data)
	return nil
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll reads and closes the bytes of m.
func readAll(t *testing.T, m engine.Media) []byte {
	t.Helper()
	r, done := m.Reader()
	defer done()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Issue 32 item 4: media sixteen times the frame limit arrives whole through
// the upload slot; every frame stays small; the slot takes one upload, only
// from its engine, and not once expired; the bytes are removed once read.
func TestFetchMediaLargerThanAFrame(t *testing.T) {
	s := newMediaServer(t, 64<<10, 0)
	a := &album{payload: randomBytes(t, 1<<20), release: make(chan struct{}), asked: make(chan struct{})}
	far := s.connect(t, a, false)

	type fetched struct {
		m   engine.Media
		err error
	}
	done := make(chan fetched, 1)
	go func() {
		m, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0A"})
		done <- fetched{m, err}
	}()
	select {
	case <-a.asked:
	case got := <-done:
		t.Fatalf("FetchMedia = %v before the engine was asked", got.err)
	}
	params := s.commands("FetchMedia")
	var args []json.RawMessage
	var uploadURL string
	if len(params) != 1 || json.Unmarshal(params[0], &args) != nil || len(args) != 2 || json.Unmarshal(args[1], &uploadURL) != nil {
		t.Fatalf("FetchMedia params = %s, want [key, uploadUrl]", params)
	}
	if !strings.HasPrefix(uploadURL, s.url+remote.UploadPath) {
		t.Fatalf("uploadUrl %q is not under %s", uploadURL, s.url+remote.UploadPath)
	}
	// While the engine works, nobody else fills its slot.
	refusals := []struct {
		name, token string
		status      int
		code        string
	}{
		{"no token", "", 401, switchboard.EUNAUTHORIZED},
		{"a wrong token", "sbe_nope", 401, switchboard.EUNAUTHORIZED},
		{"another engine's token", s.other, 403, switchboard.EFORBIDDEN},
	}
	for _, r := range refusals {
		if status, code := put(t, uploadURL, r.token, []byte("forged")); status != r.status || code != r.code {
			t.Errorf("PUT with %s = %d %s, want %d %s", r.name, status, code, r.status, r.code)
		}
	}
	close(a.release)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.m.Data != nil || got.m.Body == nil {
		t.Fatalf("media came inline (%d bytes of data), want streamed from the store", len(got.m.Data))
	}
	if status, code := put(t, uploadURL, s.token, []byte("again")); status != 409 || code != switchboard.ECONFLICT {
		t.Errorf("a second PUT = %d %s, want 409 conflict", status, code)
	}
	if diff := cmp.Diff(struct {
		Size           int64
		Mime, Filename string
	}{1 << 20, "video/mp4", "clip.mp4"}, struct {
		Size           int64
		Mime, Filename string
	}{got.m.Size, got.m.MimeType, got.m.Filename}); diff != "" {
		t.Errorf("media (-want +got):\n%s", diff)
	}
	if b := readAll(t, got.m); !bytes.Equal(b, a.payload) {
		t.Errorf("read %d bytes, not the %d the engine had", len(b), len(a.payload))
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store after the read, want 0", n)
	}
	if n := s.largest(); n > 8<<10 {
		t.Errorf("largest frame %d bytes, want small", n)
	}
}

// A slot expires at its command's deadline: a PUT after it is refused, and a
// command that ended leaves no media in the store.
func TestUploadSlotExpires(t *testing.T) {
	s := newMediaServer(t, 0, 0)
	a := &album{payload: []byte("late"), release: make(chan struct{}), asked: make(chan struct{})}
	far := s.connect(t, a, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := far.(engine.MediaFetcher).FetchMedia(ctx, engine.Key{Remote: "15552223333@c.us", ID: "3EB0B"})
		done <- err
	}()
	<-a.asked
	var args []string
	params := s.commands("FetchMedia")
	var raw []json.RawMessage
	_ = json.Unmarshal(params[0], &raw)
	for _, r := range raw {
		var u string
		if json.Unmarshal(r, &u) == nil {
			args = append(args, u)
		}
	}
	if len(args) != 1 {
		t.Fatalf("FetchMedia params = %s, want an uploadUrl", params)
	}
	s.redis.FastForward(31 * time.Second) // past the command's deadline
	if status, code := put(t, args[0], s.token, []byte("late")); status != 404 || code != switchboard.ENOTFOUND {
		t.Errorf("PUT to an expired slot = %d %s, want 404 not_found", status, code)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("FetchMedia after the deadline succeeded")
	}
	eventually(t, "the reserved media removed", func() bool { return s.mediaRows(t) == 0 })
}

// A PUT past the media store's bound is refused with 413 in the error
// envelope, and the command fails.
func TestUploadOverTheBound(t *testing.T) {
	s := newMediaServer(t, 0, 1000)
	a := &album{payload: randomBytes(t, 4000)}
	far := s.connect(t, a, false)
	_, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0C"})
	if err == nil || !strings.Contains(err.Error(), "413") {
		t.Errorf("FetchMedia of media over the bound = %v, want the upload's 413", err)
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store, want 0", n)
	}
}

// An engine that does not announce media_refs gets no uploadUrl and answers
// with inline data, as before; the server still takes it.
func TestEngineWithoutMediaRefsStaysInline(t *testing.T) {
	s := newMediaServer(t, 0, 0)
	a := &album{payload: []byte("small clip")}
	far := s.connect(t, a, true)
	m, err := far.(engine.MediaFetcher).FetchMedia(context.Background(), engine.Key{Remote: "15552223333@c.us", ID: "3EB0D"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Data, a.payload) || m.Body != nil {
		t.Errorf("FetchMedia = data %q, body %v; want the bytes inline", m.Data, m.Body)
	}
	if params := s.commands("FetchMedia"); len(params) != 1 || strings.Contains(string(params[0]), "http") {
		t.Errorf("FetchMedia params = %s, want no uploadUrl", params)
	}
	picture := []byte("\x89PNG inline")
	if err := far.(engine.GroupAdmin).SetGroupPicture(context.Background(), "g1@g.us", engine.Media{Data: picture, MimeType: "image/png"}); err != nil {
		t.Fatal(err)
	}
	if params := s.commands("SetGroupPicture"); len(params) != 1 || !strings.Contains(string(params[0]), `"data"`) {
		t.Errorf("SetGroupPicture params = %s, want the picture's data", params)
	}
	if n := s.mediaRows(t); n != 0 {
		t.Errorf("%d media left in the store, want 0", n)
	}
}

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
