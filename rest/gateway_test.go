package rest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mau.fi/whatsmeow"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/engine/host"
)

// fakeGateway stands in for a whatsmeow session: the test pairs it, bans it
// and reads what it was asked to send.
type fakeGateway struct {
	cfg     gateway.Config
	replica string // the app that opened it

	mu     sync.Mutex
	state  gateway.State
	sent   []engine.Outgoing
	closed bool
	// restarts counts Restart calls (restart_test.go).
	restarts int
	// checkMedia answers CheckMedia (engine.MediaChecker) when set; asked
	// records its questions as "kind type".
	checkMedia func(kind, contentType string) error
	asked      []string
	// serverError is the code the network answers a send to a chat with, as
	// whatsmeow returns it ("server returned error <code>"), classified as
	// the gateway classifies it.
	serverError map[string]int
	// contacts is the network's side of the contact operations
	// (gateway_contacts_test.go).
	contacts fakeContacts
}

// CheckMedia implements engine.MediaChecker.
func (f *fakeGateway) CheckMedia(kind, contentType string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, kind+" "+contentType)
	if f.checkMedia == nil {
		return nil
	}
	return f.checkMedia(kind, contentType)
}

func (f *fakeGateway) ID() string   { return f.cfg.EngineID }
func (f *fakeGateway) Kind() string { return engine.KindGateway }

func (f *fakeGateway) State() gateway.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

// set changes the state and tells the host, as the real engine does.
func (f *fakeGateway) set(change func(s *gateway.State)) {
	f.mu.Lock()
	change(&f.state)
	s := f.state
	f.mu.Unlock()
	f.cfg.OnState(s)
}

func (f *fakeGateway) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.set(func(s *gateway.State) { s.Status, s.Connected = gateway.StatusClosed, false })
	return nil
}

func (f *fakeGateway) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *fakeGateway) Send(_ context.Context, m engine.Outgoing) (engine.Key, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.state.Connected {
		return engine.Key{}, gateway.ErrNotConnected
	}
	if code, ok := f.serverError[m.To]; ok {
		return engine.Key{}, gateway.ClassifySend(fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, code))
	}
	f.sent = append(f.sent, m)
	return engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}, nil
}

func (f *fakeGateway) sends() []engine.Outgoing {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]engine.Outgoing(nil), f.sent...)
}

func (f *fakeGateway) PairingQR(context.Context) (string, error) {
	if f.State().DeviceJID != "" {
		return "", gateway.ErrAlreadyPaired
	}
	f.set(func(s *gateway.State) { s.Status = gateway.StatusPairing })
	return "2@fake-qr," + f.cfg.EngineID, nil
}

func (f *fakeGateway) PairingCode(_ context.Context, phone string) (string, error) {
	f.set(func(s *gateway.State) { s.Status = gateway.StatusPairing })
	return "FAKE-" + phone[len(phone)-4:], nil
}

func (f *fakeGateway) Logout(context.Context) error {
	f.set(func(s *gateway.State) {
		s.Status, s.Connected, s.DeviceJID, s.Me = gateway.StatusLoggedOut, false, "", ""
	})
	return nil
}

func (f *fakeGateway) Restriction() (string, bool) {
	why, _, ok := f.State().Restriction(time.Now())
	return why, ok
}

// pair is the phone scanning the code: the device is linked and online.
func (f *fakeGateway) pair(device string) {
	f.set(func(s *gateway.State) {
		s.Status, s.Connected, s.DeviceJID, s.Me, s.HasSynced = gateway.StatusConnected, true, device, "15550001111@c.us", true
	})
}

// fakeGateways opens fakeGateways and keeps them, newest last per engine.
type fakeGateways struct {
	mu     sync.Mutex
	opened map[string][]*fakeGateway
}

func (g *fakeGateways) opener(replica string) host.Opener {
	return func(_ context.Context, cfg gateway.Config) (host.Gateway, error) {
		status := gateway.StatusUnpaired
		if cfg.DeviceJID != "" {
			status = gateway.StatusConnecting
		}
		f := &fakeGateway{cfg: cfg, replica: replica, state: gateway.State{Status: status, DeviceJID: cfg.DeviceJID, Since: time.Now()}}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.opened == nil {
			g.opened = map[string][]*fakeGateway{}
		}
		g.opened[cfg.EngineID] = append(g.opened[cfg.EngineID], f)
		return f, nil
	}
}

// latest is the engine's last opened session, nil before one.
func (g *fakeGateways) latest(id string) *fakeGateway {
	g.mu.Lock()
	defer g.mu.Unlock()
	if all := g.opened[id]; len(all) > 0 {
		return all[len(all)-1]
	}
	return nil
}

// A gateway engine runs on one replica under a lease and is managed from any:
// created unpaired, paired by QR or code, sending with the message's own wire
// id, restricted by the network, logged out, taken over after a lost lease, and
// deleted, each through the other replica's API.
func TestGatewayEngineAcrossReplicas(t *testing.T) {
	var fakes fakeGateways
	a := remoteEnv(t, func(c *app.Config) {
		c.OpenGateway = fakes.opener("A")
		c.GatewayLeaseTTL = 3 * time.Second // fenced 2 s after the last renewal: room for a loaded -race run
	})
	redisURL := a.Config.RedisURL
	if redisURL == "" {
		redisURL = a.App.RedisURL()
	}
	b := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.SandboxWorkspaces = []string{"default"}
		c.PresenceTTL, c.GatewayLeaseTTL = a.Config.PresenceTTL, a.Config.GatewayLeaseTTL
		c.DatabaseURL, c.RedisURL, c.Role = a.Config.DatabaseURL, redisURL, app.RoleAPI
		c.OpenGateway = fakes.opener("B")
	}})
	key := a.NewKey("acme", "*")
	ws := mustWorkspace(t, a, key)

	gw := createEngine(a, key, "gateway")
	id := gw["id"].(string)
	if gw["state"] != "UNPAIRED" || gw["connected"] != false || gw["type"] != "gateway" || gw["stream"] != "closed" {
		t.Errorf("new gateway = %v", gw)
	}
	f := fakes.latest(id)
	if f == nil || f.replica != "A" {
		t.Fatalf("the gateway did not start on the replica that created it: %+v", f)
	}
	if f.cfg.WorkspaceID != ws || f.cfg.Sink == nil || f.cfg.Media == nil || f.cfg.SessionEvents {
		t.Errorf("gateway config = %+v", f.cfg)
	}
	// Unpaired, it is not in ping and cannot send.
	if pinged(b, key, id) {
		t.Error("an unpaired gateway in ping")
	}
	if r := b.Do("POST", "/v1/messages/+15550002222", key, map[string]any{"type": "text", "text": "hi"}); r.Status != 503 {
		t.Errorf("send before pairing = %d %s", r.Status, r.Raw)
	}

	// Pairing through B reaches the session on A.
	qr := b.Do("GET", "/v1/engines/"+id+"/qr?format=raw", key, nil)
	if qr.Status != 200 || qr.Text() != "2@fake-qr,"+id {
		t.Fatalf("qr through B = %d %s", qr.Status, qr.Raw)
	}
	if r := b.Do("GET", "/v1/engines/"+id+"/qr?format=png", key, nil); r.Status != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("png qr = %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	// The dashboard's form of it: the PNG as a data: URL, through GraphQL.
	res := gql(b, key, `mutation($id: String!) { enginePairingQRImage(id: $id) }`, map[string]any{"id": id})
	if img, _ := res.Data["enginePairingQRImage"].(string); len(res.Errors) > 0 || !strings.HasPrefix(img, "data:image/png;base64,iVBORw0KGgo") {
		t.Errorf("enginePairingQRImage = %+v", res)
	}
	code := b.Do("POST", "/v1/engines/"+id+"/pairing-code", key, map[string]any{"phone": "+15551234567"})
	if code.Status != 200 || code.Data()["code"] != "FAKE-4567" {
		t.Errorf("pairing code = %d %s", code.Status, code.Raw)
	}
	if got := b.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["state"] != "PAIRING" || got["stream"] != "connecting" {
		t.Errorf("pairing gateway = %v", got)
	}

	f.pair("15550001111:7@s.whatsapp.net")
	b.Eventually(10*time.Second, "the paired gateway in B's ping", func() bool { return pinged(b, key, id) })
	got := b.Do("GET", "/v1/engines/"+id, key, nil).Data()
	if got["state"] != "CONNECTED" || got["connected"] != true || got["stream"] != "open" || got["hasSynced"] != true || got["connectedAt"] == nil {
		t.Errorf("paired gateway = %v", got)
	}
	if qr := b.Do("GET", "/v1/engines/"+id+"/qr?format=raw", key, nil); qr.Status != 409 || qr.Error()["code"] != "conflict" {
		t.Errorf("qr of a paired gateway = %d %s", qr.Status, qr.Raw)
	}

	// A send on B goes to the session on A with the wire id stored beforehand.
	sent := b.Do("POST", "/v1/messages/+15550002222", key, map[string]any{"type": "text", "text": "over the gateway"})
	if sent.Status != 201 || sent.Data()["status"] != "confirmed" {
		t.Fatalf("send through B = %d %s", sent.Status, sent.Raw)
	}
	if s := f.sends(); len(s) != 1 || s[0].Text != "over the gateway" || s[0].To != "15550002222@c.us" ||
		s[0].WireID == "" || sent.Data()["id"] != (engine.Key{FromMe: true, Remote: s[0].To, ID: s[0].WireID}).Serialized() {
		t.Errorf("gateway got %+v for %s", s, sent.Raw)
	}

	// A reach-out time lock: the API shows it and campaigns, which ask the
	// engine wherever it runs, see it.
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	f.set(func(s *gateway.State) { s.ReachoutTimelockedUntil = &until })
	got = b.Do("GET", "/v1/engines/"+id, key, nil).Data()
	if r, _ := got["restriction"].(string); r == "" || got["restrictedUntil"] != until.Format(time.RFC3339) {
		t.Errorf("restricted gateway = %v", got)
	}
	b.Eventually(10*time.Second, "B sees the restriction", func() bool {
		eng, err := b.App.Engines.Find(context.Background(), ws, id)
		r, ok := eng.(engine.Restrictor)
		if err != nil || !ok {
			return false
		}
		_, restricted := r.Restriction()
		return restricted
	})
	f.set(func(s *gateway.State) { s.ReachoutTimelockedUntil = nil })
	if got := b.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["restriction"] != nil {
		t.Errorf("restriction after it ended = %v", got)
	}

	// The lease is lost (Redis forgot it): the session stops where it was and a
	// replica opens it again with the device stored on its row.
	if err := a.App.Redis.Del(context.Background(), "switchboard:engine-lease:"+id).Err(); err != nil {
		t.Fatal(err)
	}
	a.Eventually(10*time.Second, "the session reopened", func() bool {
		g := fakes.latest(id)
		return g != f && g != nil && f.isClosed()
	})
	f = fakes.latest(id)
	if f.cfg.DeviceJID != "15550001111:7@s.whatsapp.net" {
		t.Errorf("reopened with device %q", f.cfg.DeviceJID)
	}
	f.pair(f.cfg.DeviceJID)
	b.Eventually(10*time.Second, "the reopened gateway in ping", func() bool { return pinged(b, key, id) })

	// Logging out through B unlinks the device; the engine stays, unpaired.
	out := b.Do("POST", "/v1/engines/"+id+"/logout", key, nil)
	if out.Status != 200 || out.Data()["state"] != "LOGGED_OUT" {
		t.Errorf("logout = %d %s", out.Status, out.Raw)
	}
	b.Eventually(10*time.Second, "ping without the gateway", func() bool { return !pinged(b, key, id) })
	if f.State().DeviceJID != "" || f.isClosed() {
		t.Errorf("after logout: state %+v, closed %v", f.State(), f.isClosed())
	}
	if qr := b.Do("GET", "/v1/engines/"+id+"/qr?format=raw", key, nil); qr.Status != 200 {
		t.Errorf("qr after logout = %d %s", qr.Status, qr.Raw)
	}

	// Deleting it through B stops the session wherever it runs.
	if r := b.Do("DELETE", "/v1/engines/"+id, key, nil); r.Status != 200 {
		t.Fatalf("delete = %d %s", r.Status, r.Raw)
	}
	a.Eventually(10*time.Second, "the session closed", f.isClosed)
	if _, err := b.App.Engines.Find(context.Background(), ws, id); !errors.Is(err, engine.ErrDisconnected) {
		t.Errorf("find a deleted gateway = %v", err)
	}
	a.Eventually(10*time.Second, "the deleted gateway's lease given up", func() bool {
		n, err := a.App.Redis.Exists(context.Background(), "switchboard:engine-lease:"+id).Result()
		return err == nil && n == 0
	})
}

// The sandbox never shadows a phone (issue 28): in the default workspace, served
// by its sandbox since the first ping, a gateway created but not yet paired
// stops implicit sends (503: the workspace's own engine is not connected);
// paired, it receives every send, direct and scheduled; deleted, the sandbox
// answers again.
func TestSandboxNeverShadowsAGateway(t *testing.T) {
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	key := e.NewKey("default", "*")
	e.Key = key
	ws := mustWorkspace(t, e, key)
	if !pinged(e, key, "eng_sandbox_"+ws) {
		t.Fatalf("the default workspace's sandbox is not in ping: %v", pingIDs(e, key))
	}
	send := func(text string) *apptest.Response {
		return e.Do("POST", "/v1/messages/+15550002222", key, map[string]any{"type": "text", "text": text, "withTyping": false})
	}
	if r := send("to the sandbox"); r.Status != 201 {
		t.Fatalf("send through the sandbox = %d %s", r.Status, r.Raw)
	}

	id := createEngine(e, key, "gateway")["id"].(string)
	if r := send("while unpaired"); r.Status != 503 || r.Error()["code"] != "engine_unavailable" {
		t.Errorf("send with an unpaired gateway = %d %s", r.Status, r.Raw)
	}
	f := fakes.latest(id)
	f.pair("15550001111:7@s.whatsapp.net")
	e.Eventually(10*time.Second, "the paired gateway in ping", func() bool { return pinged(e, key, id) })

	if r := send("direct"); r.Status != 201 {
		t.Fatalf("direct send = %d %s", r.Status, r.Raw)
	}
	queued := schedule(e, "+15550002222", map[string]any{"type": "text", "text": "scheduled"})
	waitStatus(e, queued["id"].(string), "confirmed")
	var got []string
	for _, s := range f.sends() {
		got = append(got, s.Text)
	}
	if diff := cmp.Diff([]string{"direct", "scheduled"}, got); diff != "" {
		t.Errorf("the gateway's sends (-want +got):\n%s", diff)
	}

	if r := e.Do("DELETE", "/v1/engines/"+id, key, nil); r.Status != 200 && r.Status != 204 {
		t.Fatalf("delete gateway = %d %s", r.Status, r.Raw)
	}
	if r := send("the sandbox again"); r.Status != 201 {
		t.Errorf("send after the gateway left = %d %s", r.Status, r.Raw)
	}
	if n := len(f.sends()); n != 2 {
		t.Errorf("the deleted gateway got %d sends, want 2", n)
	}
}
