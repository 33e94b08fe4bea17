package rest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
)

// Contact details through the sandbox (docs/contact-details.md): a world
// contact's about text and picture, stored and answered from the store while
// fresh; the magic numbers 0000 (not on the network), 8888 (business), 9999
// (hides about and picture).
func TestContactDetailsSandbox(t *testing.T) {
	e := newEnv(t)
	list := e.Do("GET", "/v1/contacts?limit=1", e.Key, nil)
	if list.Status != 200 || len(list.List()) != 1 {
		t.Fatalf("contacts: %d %s", list.Status, list.Raw)
	}
	id := list.List()[0]["chatId"].(string)
	r := e.Do("GET", "/v1/contacts/"+id+"/details", e.Key, nil)
	if r.Status != 200 {
		t.Fatalf("details: %d %s", r.Status, r.Raw)
	}
	d := r.Data()
	pic, _ := d["pictureUrl"].(string)
	if d["chatId"] != id || d["about"] != sandbox.SandboxAbout || !strings.Contains(pic, "/media/") || d["refreshedAt"] == nil || d["pushName"] == nil {
		t.Fatalf("details = %s", r.Raw)
	}
	img := e.Do("GET", strings.TrimPrefix(pic, e.Server.URL), "", nil)
	if img.Status != 200 || !strings.HasPrefix(string(img.Raw), "\x89PNG") {
		t.Fatalf("picture %s: %d", pic, img.Status)
	}
	again := e.Do("GET", "/v1/contacts/"+id+"/details", e.Key, nil).Data()
	if again["refreshedAt"] != d["refreshedAt"] || again["pictureUrl"] != pic {
		t.Errorf("fresh details were read again: %v, then %v", d, again)
	}
	refreshed := e.Do("GET", "/v1/contacts/"+id+"/details?refresh=true", e.Key, nil).Data()
	if refreshed["refreshedAt"] == d["refreshedAt"] || refreshed["pictureUrl"] != pic {
		t.Errorf("refresh: %v (the same picture id keeps its stored picture)", refreshed)
	}
	// Media are pruned after their retention: a fresh row whose picture is gone is read again.
	if _, err := e.App.Client.Media.Delete().Exec(systemCtx()); err != nil {
		t.Fatal(err)
	}
	after := e.Do("GET", "/v1/contacts/"+id+"/details", e.Key, nil).Data()
	if p, _ := after["pictureUrl"].(string); p == pic || p == "" || e.Do("GET", strings.TrimPrefix(p, e.Server.URL), "", nil).Status != 200 {
		t.Errorf("after the prune: %v, want a new stored picture", after)
	}

	biz := e.Do("GET", "/v1/contacts/+15550418888/details", e.Key, nil)
	b, _ := biz.Data()["business"].(map[string]any)
	if biz.Status != 200 || biz.Data()["isBusiness"] != true || b["name"] != "Sandbox Shop 8888" || len(b["hours"].([]any)) != 7 || b["email"] != "shop8888@example.com" {
		t.Errorf("business: %d %s", biz.Status, biz.Raw)
	}
	hidden := e.Do("GET", "/v1/contacts/15550419999@c.us/details", e.Key, nil)
	if hidden.Status != 200 || hidden.Data()["about"] != nil || hidden.Data()["pictureUrl"] != nil {
		t.Errorf("hidden: %d %s", hidden.Status, hidden.Raw)
	}
}

// Bad input is 400/403/404 with details, never a 500.
func TestContactDetailsErrors(t *testing.T) {
	e := newEnv(t)
	readOnly := e.NewKey(workspaceOf(e), "groups:read")
	cases := []struct {
		path, key string
		status    int
		code      string
		detail    string
	}{
		{"/v1/contacts/+15550410000/details", e.Key, 404, "not_found", "id"},
		{"/v1/contacts/not-a-number/details", e.Key, 400, "invalid_request", "id"},
		{"/v1/contacts/120363000000000001@g.us/details", e.Key, 400, "invalid_request", "id"},
		{"/v1/contacts/+15550411234/details?refresh=maybe", e.Key, 400, "invalid_request", "refresh"},
		{"/v1/contacts/+15550411234/details?engineId=nope", e.Key, 400, "invalid_request", "engineId"},
		{"/v1/contacts/+15550411234/details?engineId=eng_missing", e.Key, 404, "not_found", "engineId"},
		{"/v1/contacts/+15550411234/details", readOnly, 403, "", ""},
	}
	for _, c := range cases {
		r := e.Do("GET", c.path, c.key, nil)
		if r.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, r.Status, r.Raw, c.status)
			continue
		}
		if c.code != "" && (r.Error()["code"] != c.code || !contains(r.DetailPaths(), c.detail)) {
			t.Errorf("%s: %s, want code %s naming %s", c.path, r.Raw, c.code, c.detail)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// An engine that does not serve contact_details answers 501 naming it.
func TestContactDetailsNotSupported(t *testing.T) {
	e := newEnv(t)
	n := runNumber(t, e, e.Key)
	r := e.Do("GET", "/v1/contacts/+15550411234/details?engineId="+n.id, e.Key, nil)
	if r.Status != 501 || r.Error()["code"] != "not_supported" || !strings.Contains(string(r.Raw), "contact_details") {
		t.Errorf("details through %s: %d %s", n.id, r.Status, r.Raw)
	}
}

// A change event makes the stored details stale (the next read asks the
// network) and sends contact.updated.
func TestContactUpdatedEvent(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "contact.updated")
	id := e.Do("GET", "/v1/contacts?limit=1", e.Key, nil).List()[0]["chatId"].(string)
	first := e.Do("GET", "/v1/contacts/"+id+"/details", e.Key, nil).Data()
	ws := workspaceOf(e)
	ev := engine.Event{Type: engine.EventHistory, History: &engine.History{Contacts: []engine.ContactInfo{{ID: id, Changed: engine.ContactPicture}}}}
	if err := e.App.Sandbox.Engine(ws).Simulate(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	e.Eventually(10*time.Second, "contact.updated delivered", func() bool { return len(rc.ofType("contact.updated")) == 1 })
	data := rc.ofType("contact.updated")[0].payload["data"].(map[string]any)
	if diff := cmp.Diff([]any{id, "picture"}, []any{data["chatId"], data["changed"]}); diff != "" {
		t.Errorf("contact.updated data (-want +got):\n%s", diff)
	}
	after := e.Do("GET", "/v1/contacts/"+id+"/details", e.Key, nil).Data()
	if after["refreshedAt"] == first["refreshedAt"] {
		t.Errorf("details after a picture change were not read again: %v", after)
	}
}

// A remote engine that announces contact_details serves them through the
// protocol (its ContactDetails command).
func TestContactDetailsRemote(t *testing.T) {
	e := newEnv(t)
	rec := createEngine(e, e.Key, "remote")
	db := sandboxDB(t)
	sb := (*sandbox.Engine)(nil)
	c := &remote.Client{URL: e.Server.URL, Token: rec["token"].(string), NoReconnect: true, Capabilities: engine.CapabilitiesOf(sb)}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = c.Run(ctx, func(_ context.Context, w remote.Welcome, sink engine.BatchSink) (engine.Engine, error) {
			return sandbox.NewNetwork(db, 50*time.Millisecond, sink).EngineFor(w.WorkspaceID, w.EngineID), nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("the sandbox client did not stop")
		}
	})
	id := rec["id"].(string)
	e.Eventually(10*time.Second, "engine "+id+" in ping", func() bool { return pinged(e, e.Key, id) })
	r := e.Do("GET", "/v1/contacts/+15550418888/details?engineId="+id, e.Key, nil)
	if r.Status != 200 || r.Data()["isBusiness"] != true || r.Data()["engineId"] != id || r.Data()["pictureUrl"] == nil {
		t.Errorf("details through the remote engine: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/v1/contacts/+15550410000/details?engineId="+id, e.Key, nil); r.Status != 404 {
		t.Errorf("not on the network, through the remote engine: %d %s", r.Status, r.Raw)
	}
}
