package rest_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine/gateway"
)

// Restart implements engine.Restarter as the real engine does: the session
// drops its connection and logs in again on the same device.
func (f *fakeGateway) Restart(context.Context) error {
	if f.State().DeviceJID == "" {
		return gateway.ErrNotPaired
	}
	f.mu.Lock()
	f.restarts++
	f.mu.Unlock()
	f.set(func(s *gateway.State) { s.Status, s.Connected = gateway.StatusConnecting, false })
	f.set(func(s *gateway.State) { s.Status, s.Connected, s.LastError = gateway.StatusConnected, true, "" })
	return nil
}

func (f *fakeGateway) restarted() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restarts
}

// A gateway whose session another client replaced (CONFLICT) recovers through
// POST /v1/engines/{id}/restart on another replica than the one running it:
// the same session, on the same device, connected again. Restart needs
// engines:write, answers 404 for an engine the workspace lacks, 409 for a
// sandbox and for a gateway with no phone paired; GraphQL's restartEngine is
// the same operation.
func TestRestartRecoversAReplacedGateway(t *testing.T) {
	var fakes fakeGateways
	retries := []time.Duration{time.Minute, 2 * time.Minute}
	a := remoteEnv(t, func(c *app.Config) { c.OpenGateway, c.Gateway.ReplacedRetry = fakes.opener("A"), retries })
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
	id := createEngine(a, key, "gateway")["id"].(string)
	sandbox := createEngine(a, key, "sandbox")["id"].(string)
	reader := a.NewKey("acme", "engines:read")
	stranger := a.NewKey("elsewhere", "*")
	restart := func(who, engineID string) *apptest.Response {
		return b.Do("POST", "/v1/engines/"+engineID+"/restart", who, nil)
	}
	for _, c := range []struct {
		name, key, id  string
		status         int
		code, detailOf string
	}{
		{"without engines:write", reader, id, 403, "insufficient_scope", ""},
		{"another workspace's", stranger, id, 404, "not_found", ""},
		{"unknown", key, "eng_nope", 404, "not_found", ""},
		{"unpaired", key, id, 409, "conflict", "invalid_state"},
		{"sandbox", key, sandbox, 409, "conflict", "not_restartable"},
	} {
		r := restart(c.key, c.id)
		if r.Status != c.status || r.Error()["code"] != c.code {
			t.Errorf("%s: restart = %d %s", c.name, r.Status, r.Raw)
			continue
		}
		if c.detailOf != "" {
			if d, _ := r.Error()["details"].([]any); len(d) != 1 || d[0].(map[string]any)["code"] != c.detailOf {
				t.Errorf("%s: details %s", c.name, r.Raw)
			}
		}
	}

	f := fakes.latest(id)
	if !cmp.Equal(f.cfg.ReplacedRetry, retries) { // SWITCHBOARD_GATEWAY_REPLACED_RETRY reaches the session
		t.Errorf("the session's replaced retries = %v", f.cfg.ReplacedRetry)
	}
	f.pair("15550001111:7@s.whatsapp.net")
	b.Eventually(10*time.Second, "the paired gateway in ping", func() bool { return pinged(b, key, id) })
	// Another client takes the session: CONFLICT, out of ping.
	f.set(func(s *gateway.State) {
		s.Status, s.Connected, s.LastError = gateway.StatusReplaced, false, "stream replaced; no retry left"
	})
	b.Eventually(10*time.Second, "the replaced gateway out of ping", func() bool { return !pinged(b, key, id) })
	b.Eventually(10*time.Second, "the replaced gateway in CONFLICT", func() bool {
		got := b.Do("GET", "/v1/engines/"+id, key, nil).Data()
		return got["state"] == "CONFLICT" && got["stream"] == "closed"
	})

	r := restart(key, id)
	if r.Status != 200 || r.Data()["state"] != "CONNECTED" || r.Data()["connected"] != true || r.Data()["id"] != id {
		t.Fatalf("restart = %d %s", r.Status, r.Raw)
	}
	if fakes.latest(id) != f || f.restarted() != 1 || f.isClosed() || f.State().DeviceJID != "15550001111:7@s.whatsapp.net" {
		t.Errorf("restart reopened or unpaired the session: restarts %d, closed %v, state %+v", f.restarted(), f.isClosed(), f.State())
	}
	b.Eventually(10*time.Second, "the restarted gateway in ping", func() bool { return pinged(b, key, id) })

	// GraphQL: the same operation.
	f.set(func(s *gateway.State) { s.Status, s.Connected = gateway.StatusReplaced, false })
	res := gql(b, key, `mutation($id: String!) { restartEngine(id: $id) { id state connected } }`, map[string]any{"id": id})
	if got, _ := res.Data["restartEngine"].(map[string]any); len(res.Errors) > 0 || got["state"] != "CONNECTED" || f.restarted() != 2 {
		t.Errorf("restartEngine = %+v (restarts %d)", res, f.restarted())
	}
}
