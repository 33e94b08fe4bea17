package rest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
)

// Issue 32 row 3: a remote engine reports its session in state frames, and the
// server treats it exactly like a gateway's: while pairing the QR endpoint
// answers its QR; a temporary ban is the engine's state and restriction (API,
// session.restricted) and pauses the campaign pinned to it; connected again,
// the restriction ends (session.unrestricted) and the campaign resumes.
func TestRemoteEngineReportsItsState(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("reported", "*")
	rec := createEngine(e, key, "remote")
	id := rec["id"].(string)
	c := &remote.Client{URL: e.Server.URL, Token: rec["token"].(string), NoReconnect: true,
		Capabilities: []string{"send", "pairing"}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) {
			return nullEngine{id: "phone"}, nil
		})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	e.Eventually(10*time.Second, "the remote engine in ping", func() bool { return pinged(e, key, id) })
	rc := newReceiver(t, nil)
	e.Do("POST", "/v1/webhooks", key, map[string]any{"url": rc.URL, "events": restrictionEvents, "description": "t"})

	// Pairing: the QR the engine reported, without asking it (its engine
	// serves no PairingQR).
	if err := c.ReportState(ctx, remote.State{Status: "pairing", QR: "2@reported-qr,abc"}); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("GET", "/v1/engines/"+id+"/qr", key, nil); r.Status != 200 || !strings.Contains(string(r.Raw), "2@reported-qr,abc") {
		t.Errorf("QR while pairing: %d %s", r.Status, r.Raw)
	}
	if got := e.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["state"] != "PAIRING" || got["stream"] != "connecting" {
		t.Errorf("pairing engine = %v", got)
	}
	if err := c.ReportState(ctx, remote.State{Status: "connected", HasSynced: true}); err != nil {
		t.Fatal(err)
	}

	aud := createAudience(e, key, map[string]any{"name": "ban", "contacts": phones(900, 6)})
	cmp := createCampaign(e, key, map[string]any{"name": "ban", "audienceId": aud["id"], "text": "x", "engineId": id, "pacing": slow})["cmpId"].(string)
	e.Eventually(10*time.Second, "the campaign's first message", func() bool { return len(campaignMessages(e, cmp)) >= 1 })

	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if err := c.ReportState(ctx, remote.State{Status: "banned", BannedUntil: &until, BanReason: "too many messages"}); err != nil {
		t.Fatal(err)
	}
	var status, reason string
	e.Eventually(10*time.Second, "the campaign paused by the ban", func() bool {
		status, reason = campaignStatus(e, key, cmp)
		return status == "paused"
	})
	if !strings.Contains(reason, "too many messages") {
		t.Errorf("pauseReason %q", reason)
	}
	got := e.Do("GET", "/v1/engines/"+id, key, nil).Data()
	if r, _ := got["restriction"].(string); got["state"] != "BANNED" || !strings.Contains(r, "too many messages") ||
		got["restrictedUntil"] != until.Format(time.RFC3339) || got["hasSynced"] != false {
		t.Errorf("banned engine = %v", got)
	}
	e.Eventually(10*time.Second, "session.restricted", func() bool { return len(rc.ofType("session.restricted")) == 1 })
	data, _ := rc.ofType("session.restricted")[0].payload["data"].(map[string]any)
	if data["engineId"] != id || data["until"] != until.Format(time.RFC3339) {
		t.Errorf("session.restricted data = %v", data)
	}
	// The route carries the reported restriction: the engine, as any replica
	// finds it, says it is restricted.
	eng, err := e.App.Hub.Get(context.Background(), workspaceOfKey(e, key), id)
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := eng.(engine.Restrictor).Restriction(); !ok || !strings.Contains(why, "too many messages") {
		t.Errorf("the engine's Restriction() = %q, %v", why, ok)
	}

	if err := c.ReportState(ctx, remote.State{Status: "connected", HasSynced: true}); err != nil {
		t.Fatal(err)
	}
	e.Eventually(10*time.Second, "session.unrestricted", func() bool { return len(rc.ofType("session.unrestricted")) == 1 })
	e.Eventually(30*time.Second, "the campaign resumed", func() bool {
		status, _ := campaignStatus(e, key, cmp)
		return status == "running" || strings.HasPrefix(status, "complete")
	})
	if got := e.Do("GET", "/v1/engines/"+id, key, nil).Data(); got["restriction"] != nil || got["state"] != "CONNECTED" || got["hasSynced"] != true {
		t.Errorf("engine after the ban = %v", got)
	}

	// A state the server cannot apply is refused in its ack; the connection stays.
	if err := c.ReportState(ctx, remote.State{Status: "dancing"}); err == nil || !strings.Contains(err.Error(), "dancing") {
		t.Errorf("an unknown status = %v", err)
	}
	if !c.Connected() {
		t.Error("a refused state closed the connection")
	}
}
