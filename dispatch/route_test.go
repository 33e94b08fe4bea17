package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/engine"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/viewer"
)

// namedEngine is an engine known by its id.
type namedEngine struct{ id string }

func (e namedEngine) ID() string   { return e.id }
func (e namedEngine) Kind() string { return engine.KindRegular }
func (e namedEngine) Close() error { return nil }
func (e namedEngine) Send(context.Context, engine.Outgoing) (engine.Key, error) {
	return engine.Key{}, nil
}

// registry has the connected engines by id; Pick answers "eng_pick", Provided
// "eng_sandbox".
type registry map[string]bool

func (r registry) Pick(context.Context, string) (engine.Engine, error) {
	return namedEngine{"eng_pick"}, nil
}

func (r registry) Find(_ context.Context, _, id string) (engine.Engine, error) {
	if !r[id] {
		return nil, engine.ErrDisconnected
	}
	return namedEngine{id}, nil
}

func (r registry) Provided(context.Context, string) (engine.Engine, error) {
	return namedEngine{"eng_sandbox"}, nil
}

// Route: the engine named, only it; else the chat's last engine (never the
// sandbox), else the workspace's default (the one set, else the first paired
// real engine), each while connected; else Pick.
func TestRoute(t *testing.T) {
	client := open(t)
	wctx := viewer.WorkspaceContext(context.Background(), ws)
	sys := viewer.SystemContext(context.Background())
	client.Workspace.Create().SetID(ws).SetName("numbers").ExecX(sys)
	t0 := time.Now().Add(-time.Hour)
	client.Engine.Create().SetID("eng_a").SetKind(entengine.KindRemote).SetConnectedAt(t0).SetCreatedAt(t0).ExecX(wctx)
	client.Engine.Create().SetID("eng_b").SetKind(entengine.KindGateway).SetDeviceJid("1555@s.whatsapp.net").
		SetCreatedAt(t0.Add(time.Minute)).ExecX(wctx)
	client.Engine.Create().SetID("eng_unpaired").SetKind(entengine.KindGateway).SetCreatedAt(t0.Add(-time.Minute)).ExecX(wctx)
	client.Engine.Create().SetID("eng_sb").SetKind(entengine.KindSandbox).SetCreatedAt(t0.Add(-2 * time.Minute)).ExecX(wctx)
	for jid, id := range map[string]string{"1@c.us": "eng_b", "2@c.us": "eng_sb", "3@c.us": "eng_gone"} {
		client.Chat.Create().SetJid(jid).SetKind("contact").SetEngineID(id).ExecX(wctx)
	}
	all := registry{"eng_a": true, "eng_b": true, "eng_unpaired": true}
	cases := []struct {
		name, to, named, setDefault string
		connected                   registry
		want                        string // "" for engine.ErrNoEngine
	}{
		{"named", "9@c.us", "eng_b", "", all, "eng_b"},
		{"named, away", "9@c.us", "eng_b", "", registry{"eng_a": true}, ""},
		{"named, unknown", "9@c.us", "eng_nope", "", all, ""},
		{"named sandbox", "9@c.us", "eng_sb", "", all, "eng_sandbox"},
		{"the chat's", "1@c.us", "", "", all, "eng_b"},
		{"the chat's away: the default", "1@c.us", "", "", registry{"eng_a": true}, "eng_a"},
		{"the chat's is the sandbox: the default", "2@c.us", "", "", all, "eng_a"},
		{"the chat's is gone: the default", "3@c.us", "", "", all, "eng_a"},
		{"a new chat: the first paired", "9@c.us", "", "", all, "eng_a"},
		{"the default away: Pick", "9@c.us", "", "", registry{"eng_b": true}, "eng_pick"},
		{"the default set", "9@c.us", "", "eng_b", all, "eng_b"},
		{"the default set, away: Pick", "9@c.us", "", "eng_b", registry{"eng_a": true}, "eng_pick"},
		{"the default set to the sandbox", "9@c.us", "", "eng_sb", all, "eng_sandbox"},
	}
	for _, tc := range cases {
		client.Workspace.UpdateOneID(ws).SetDefaultEngineID(tc.setDefault).ExecX(sys)
		d := &dispatch.Dispatcher{Client: client, Engines: tc.connected}
		eng, err := d.Route(wctx, ws, tc.to, tc.named)
		got := ""
		if err == nil {
			got = eng.ID()
		} else if !errors.Is(err, engine.ErrNoEngine) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: routed through %q, want %q", tc.name, got, tc.want)
		}
	}
}
