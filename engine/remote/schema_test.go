package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboardhq/switchboard/engine/remote"
)

// protocolSchema compiles the protocol's JSON Schema document (remote.Schema),
// failing the test when it is not a valid 2020-12 schema.
func protocolSchema(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(remote.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(remote.SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	return c
}

// frameLog is what a recording proxy saw: every text frame, in order, with
// its direction.
type frameLog struct {
	mu     sync.Mutex
	frames []loggedFrame
	// engineOffContract: the test's engine sends frames from outside the
	// contract on purpose (a later version's); only the server's are checked.
	engineOffContract bool
}

// offContract marks the engine's frames as outside the contract on purpose.
func (l *frameLog) offContract() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.engineOffContract = true
}

type loggedFrame struct {
	toServer bool
	raw      []byte
}

func (l *frameLog) add(toServer bool, raw []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.frames = append(l.frames, loggedFrame{toServer, raw})
}

// recordingProxy stands between the reference client and the hub at upstream
// (an http:// URL): it forwards every frame both ways, close codes included,
// and logs each.
func recordingProxy(upstream string, log *frameLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := http.Header{}
		if a := r.Header.Get("Authorization"); a != "" {
			hdr.Set("Authorization", a)
		}
		up, resp, err := websocket.Dial(r.Context(), "ws"+strings.TrimPrefix(upstream, "http")+r.URL.Path, &websocket.DialOptions{HTTPHeader: hdr})
		if err != nil {
			code := http.StatusBadGateway
			if resp != nil {
				code = resp.StatusCode
			}
			http.Error(w, err.Error(), code)
			return
		}
		down, err := websocket.Accept(w, r, nil)
		if err != nil {
			up.CloseNow()
			return
		}
		up.SetReadLimit(-1)
		down.SetReadLimit(-1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		pump := func(src, dst *websocket.Conn, toServer bool) {
			defer cancel()
			for {
				typ, raw, err := src.Read(ctx)
				if err != nil {
					var ce websocket.CloseError
					if errors.As(err, &ce) && ce.Code != websocket.StatusNoStatusRcvd && ce.Code != websocket.StatusAbnormalClosure {
						_ = dst.Close(ce.Code, ce.Reason)
					} else {
						dst.CloseNow()
					}
					return
				}
				if typ == websocket.MessageText {
					log.add(toServer, raw)
				}
				if err := dst.Write(ctx, typ, raw); err != nil {
					src.CloseNow()
					return
				}
			}
		}
		go pump(down, up, true)
		pump(up, down, false)
	})
}

// validateFrames checks every frame of log against the protocol's schema: the
// frame itself, a command's params against params.<method>, and its reply's
// result against result.<method>.
func validateFrames(t *testing.T, log *frameLog) {
	t.Helper()
	v, err := remote.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	t.Logf("validating %d frames", len(log.frames))
	methods := map[string]string{}
	for _, f := range log.frames {
		if f.toServer && log.engineOffContract {
			continue
		}
		if err := v.Frame(f.raw); err != nil {
			t.Errorf("frame %s does not validate: %v", f.raw, err)
		}
		var head struct {
			Type   string          `json:"type"`
			ID     string          `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(f.raw, &head)
		part, ref := json.RawMessage(nil), ""
		switch {
		case head.Type == remote.FrameCommand:
			methods[head.ID] = head.Method
			part, ref = head.Params, "params."+head.Method
		case head.Type == remote.FrameReply && methods[head.ID] != "" && head.Result != nil:
			part, ref = head.Result, "result."+methods[head.ID]
		}
		if ref == "" || part == nil {
			continue
		}
		if err := v.Def(ref, part); err != nil {
			t.Errorf("%s %s does not validate: %v", ref, part, err)
		}
	}
}

// The schema is a valid 2020-12 document with a params and a result definition
// for every command, and it rejects what the protocol forbids.
func TestProtocolSchema(t *testing.T) {
	c := protocolSchema(t)
	frame, err := c.Compile(remote.SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range remote.Methods() {
		for _, p := range []string{"params.", "result."} {
			if _, err := c.Compile(remote.SchemaID + "#/$defs/" + p + m); err != nil {
				t.Errorf("%s%s: %v", p, m, err)
			}
		}
	}
	tests := []struct {
		name  string
		frame string
		ok    bool
	}{
		{"a heartbeat", `{"type":"heartbeat"}`, true},
		{"a hello", `{"type":"hello","kind":"regular","capabilities":["send"],"phone":"+15550001111","version":1}`, true},
		{"an event", `{"type":"events","id":"b1","events":[{"id":"e1","type":"pin","at":"2026-01-02T03:04:05Z","key":{"fromMe":false,"remote":"1@c.us","id":"A"},"pinnedMs":3600000}]}`, true},
		{"a hello with features", `{"type":"hello","kind":"regular","capabilities":["media"],"features":["media_refs","later"]}`, true},
		{"features not a list", `{"type":"hello","features":"media_refs"}`, false},
		{"no type", `{"id":"x"}`, false},
		{"an unknown frame type", `{"type":"hullo"}`, false},
		{"a PascalCase field", `{"type":"hello","Kind":"regular"}`, false},
		{"a phone not in E.164", `{"type":"hello","phone":"5550001111"}`, false},
		{"a time not in RFC 3339", `{"type":"command","id":"c","method":"Send","deadline":"tomorrow"}`, false},
		{"a negative pin", `{"type":"events","events":[{"type":"pin","pinnedMs":-1}]}`, false},
		{"a pin in nanoseconds", `{"type":"events","events":[{"type":"pin","pinned":3600000000000}]}`, false},
	}
	for _, tt := range tests {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.frame))
		if err != nil {
			t.Fatal(err)
		}
		if err := frame.Validate(v); (err == nil) != tt.ok {
			t.Errorf("%s: %s validates = %v, want %v", tt.name, tt.frame, err == nil, tt.ok)
		}
	}
}

// The copy of the schema the Node engine's tests validate against
// (examples/engine-node/test/protocol.json) is the server's. Refresh it with
// SWITCHBOARD_UPDATE_SCHEMA_COPY=1 go test ./engine/remote -run TestNodeSchemaCopy.
func TestNodeSchemaCopy(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "engine-node", "test", "protocol.json")
	if os.Getenv("SWITCHBOARD_UPDATE_SCHEMA_COPY") == "1" {
		if err := os.WriteFile(path, append(remote.Schema(), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var copied, served any
	if err := json.Unmarshal(raw, &copied); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(remote.Schema(), &served)
	if diff := cmp.Diff(served, copied); diff != "" {
		t.Errorf("%s is not the server's schema; refresh it (SWITCHBOARD_UPDATE_SCHEMA_COPY=1): %s", path, diff)
	}
}
