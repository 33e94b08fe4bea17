package remote_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
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

// welcomeFeatures are the features of the welcome the server sent.
func (s mediaServer) welcomeFeatures() []string {
	s.frames.mu.Lock()
	defer s.frames.mu.Unlock()
	for _, f := range s.frames.frames {
		var w remote.Frame
		if !f.toServer && json.Unmarshal(f.raw, &w) == nil && w.Type == remote.FrameWelcome {
			return w.Features
		}
	}
	return nil
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
