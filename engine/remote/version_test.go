package remote_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/engine/remote"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage/storagetest"
)

// rawEngine dials a replica as a bare engine with token and returns the socket.
func rawEngine(t *testing.T, url, token string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hdr := http.Header{}
	hdr.Set("Authorization", "Bearer "+token)
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+remote.Path, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return ws
}

func writeRaw(t *testing.T, ws *websocket.Conn, frame string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
}

// readRaw reads the next frame as a map, or the close code.
func readRaw(t *testing.T, ws *websocket.Conn) (map[string]any, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, data, err := ws.Read(ctx)
	if err != nil {
		return nil, int(websocket.CloseStatus(err))
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m, 0
}

// remoteRow creates a workspace's remote engine and returns its token.
func remoteSetup(t *testing.T) (replica, string) {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	acme := client.Workspace.Create().SetName("acme").SaveX(sys)
	token, hash, prefix := auth.NewEngineToken()
	client.Engine.Create().SetWorkspaceID(acme.ID).SetKind(entengine.KindRemote).
		SetTokenHash(hash).SetTokenPrefix(prefix).SaveX(sys)
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	return newReplica(t, rdb, client, &recorder{}), token
}

// The welcome states the versions the server speaks and serves the highest
// common one; a hello without one is served at 1; an engine with none in common
// is closed 4005, a close the reference client does not retry.
func TestVersionNegotiation(t *testing.T) {
	r, token := remoteSetup(t)
	for _, tc := range []struct {
		name, versions string
		want           float64 // the welcome's version, or 0
		close          int
	}{
		{"no version", ``, 1, 0},
		{"version 1", `,"version":1`, 1, 0},
		{"versions with a newer one", `,"versions":[1,2,9]`, 1, 0},
		{"only newer versions", `,"versions":[2,3]`, 0, remote.CloseUnsupportedVersion},
		{"a newer version", `,"version":7`, 0, remote.CloseUnsupportedVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := rawEngine(t, r.url, token)
			writeRaw(t, ws, `{"type":"hello","kind":"regular","capabilities":["send"]`+tc.versions+`}`)
			f, code := readRaw(t, ws)
			if code != tc.close {
				t.Fatalf("close = %d, want %d (frame %v)", code, tc.close, f)
			}
			if tc.close != 0 {
				return
			}
			if f["type"] != "welcome" || f["version"] != tc.want {
				t.Errorf("welcome = %v, want version %v", f, tc.want)
			}
			if diff := cmp.Diff([]any{1.0}, f["versions"]); diff != "" {
				t.Errorf("welcome versions (-want +got):\n%s", diff)
			}
			if _, ok := f["deprecated"]; ok {
				t.Errorf("version 1 is not deprecated: %v", f)
			}
		})
	}
	if !remote.Terminal(remote.CloseUnsupportedVersion) {
		t.Error("4005 is not terminal: the client would retry forever")
	}
}

// A welcomed engine's frame of an unknown type is answered unsupported and the
// connection stays; unknown fields of known frames and events are ignored.
func TestUnknownFramesAndFieldsAreIgnored(t *testing.T) {
	r, token := remoteSetup(t)
	r.frames.offContract() // a later version's frames and fields
	ws := rawEngine(t, r.url, token)
	writeRaw(t, ws, `{"type":"hello","kind":"regular","capabilities":["send"],"versions":[1],"futureField":{"a":1}}`)
	if f, code := readRaw(t, ws); f["type"] != "welcome" {
		t.Fatalf("no welcome: %v %d", f, code)
	}
	writeRaw(t, ws, `{"type":"telemetry","id":"t1","cpu":0.5}`)
	f, code := readRaw(t, ws)
	if diff := cmp.Diff(map[string]any{"type": "unsupported", "id": "t1", "frameType": "telemetry"}, f); diff != "" || code != 0 {
		t.Fatalf("answer to an unknown frame (-want +got):\n%s (close %d)", diff, code)
	}
	writeRaw(t, ws, `{"type":"heartbeat","load":3}`)
	writeRaw(t, ws, `{"type":"events","id":"evb_1","compression":"none","events":[{"id":"e1","type":"ack","ack":3,"newField":[1,2],`+
		`"key":{"fromMe":true,"remote":"15550001111@c.us","id":"3EB0","shard":7}}]}`)
	f, code = readRaw(t, ws)
	if diff := cmp.Diff(map[string]any{"type": "events_ack", "id": "evb_1"}, f); diff != "" || code != 0 {
		t.Errorf("ack of an events frame with unknown fields (-want +got):\n%s (close %d)", diff, code)
	}
}
