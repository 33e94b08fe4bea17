package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/ent/contact"
)

// The contact operations (issue 31: number checks, the block list, contact
// details) through a gateway engine: what reached the session's engine calls
// (engine.NumberChecker, engine.Blocker, engine.ContactDetailer; the
// whatsmeow calls behind them are engine/gateway's tests) and what the API
// answered, with engineId given and as the workspace's default engine; the
// session's events become contact.blocked, contact.unblocked and
// contact.updated webhooks.

// fakeContacts is what a fake gateway's network knows of contacts, and the
// contact calls the session was asked, in order ("Block 1555…@c.us").
type fakeContacts struct {
	// numbers answers CheckNumbers by digits; others are not on WhatsApp.
	numbers map[string]engine.NumberStatus
	// details answers ContactDetails by chat id; others are not on WhatsApp.
	details map[string]engine.ContactDetails
	blocked []string
	calls   []string
}

// contactCall records call, or fails as the real session does when it is
// not connected. f.mu is held.
func (f *fakeGateway) contactCall(call string) error {
	if !f.state.Connected {
		return gateway.ErrNotConnected
	}
	f.contacts.calls = append(f.contacts.calls, call)
	return nil
}

// CheckNumbers implements engine.NumberChecker: one answer per number, in order.
func (f *fakeGateway) CheckNumbers(_ context.Context, phones []string) ([]engine.NumberStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall("CheckNumbers " + strings.Join(phones, " ")); err != nil {
		return nil, err
	}
	out := make([]engine.NumberStatus, len(phones))
	for i, p := range phones {
		st, ok := f.contacts.numbers[p]
		if !ok {
			st = engine.NumberStatus{Phone: p}
		}
		out[i] = st
	}
	return out, nil
}

// Block implements engine.Blocker; blocking twice is fine.
func (f *fakeGateway) Block(_ context.Context, chatID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall("Block " + chatID); err != nil {
		return err
	}
	if !slices.Contains(f.contacts.blocked, chatID) {
		f.contacts.blocked = append(f.contacts.blocked, chatID)
	}
	return nil
}

// Unblock implements engine.Blocker; unblocking a contact not blocked is fine.
func (f *fakeGateway) Unblock(_ context.Context, chatID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall("Unblock " + chatID); err != nil {
		return err
	}
	f.contacts.blocked = slices.DeleteFunc(f.contacts.blocked, func(id string) bool { return id == chatID })
	return nil
}

// Blocklist implements engine.Blocker.
func (f *fakeGateway) Blocklist(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall("Blocklist"); err != nil {
		return nil, err
	}
	return slices.Clone(f.contacts.blocked), nil
}

// ContactDetails implements engine.ContactDetailer; a contact the network
// does not know is engine.ErrNotFound, as the gateway answers it.
func (f *fakeGateway) ContactDetails(_ context.Context, jid string) (engine.ContactDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.contactCall("ContactDetails " + jid); err != nil {
		return engine.ContactDetails{}, err
	}
	d, ok := f.contacts.details[jid]
	if !ok {
		return d, fmt.Errorf("%w: %s is not on WhatsApp", engine.ErrNotFound, jid)
	}
	return d, nil
}

// setContacts changes what the fake's network knows.
func (f *fakeGateway) setContacts(change func(c *fakeContacts)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(&f.contacts)
}

// takeCalls returns the contact calls made since the last take.
func (f *fakeGateway) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.contacts.calls
	f.contacts.calls = nil
	return out
}

// report hands ev to the sink as the gateway does (its workspace, engine and time filled in).
func (f *fakeGateway) report(t *testing.T, ev engine.Event) {
	t.Helper()
	ev.WorkspaceID, ev.EngineID, ev.At = f.cfg.WorkspaceID, f.cfg.EngineID, time.Now()
	if err := f.cfg.Sink.HandleEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

// contactsGateway runs the default workspace (its sandbox too) with a paired
// gateway engine in it; e.Key is a "*" key of the workspace.
func contactsGateway(t *testing.T) (*apptest.Env, *fakeGateway, string) {
	t.Helper()
	var fakes fakeGateways
	e := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	e.Key = e.NewKey("default", "*")
	id, f := pairedGateway(t, e, &fakes, e.Key)
	return e, f, id
}

// makeDefault makes the engine id the workspace's default engine.
func makeDefault(t *testing.T, e *apptest.Env, id string) {
	t.Helper()
	if r := e.Do("POST", "/v1/engines/"+id+"/default", e.Key, nil); r.Status != 200 {
		t.Fatalf("make %s the default: %d %s", id, r.Status, r.Raw)
	}
}

// callsAre compares the contact calls the session got since the last look.
func callsAre(t *testing.T, step string, f *fakeGateway, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, f.takeCalls()); diff != "" {
		t.Errorf("%s: the session's calls (-want +got):\n%s", step, diff)
	}
}

// Number checks through the gateway: the session is asked the numbers' digits
// in the order given and its answers are the API's (the sandbox, in the same
// workspace, would answer other LIDs); the cache spares it the numbers it
// answered; bad input never reaches it.
func TestGatewayCheckNumbers(t *testing.T) {
	e, f, id := contactsGateway(t)
	f.setContacts(func(c *fakeContacts) {
		c.numbers = map[string]engine.NumberStatus{
			"15551230001": {Phone: "15551230001", OnNetwork: true, ChatID: "15551230001@c.us", LID: "777000001@lid"},
			"15551235555": {Phone: "15551235555", OnNetwork: true, ChatID: "15551235555@c.us", IsBusiness: true, BusinessName: "Acme Shop"},
		}
	})
	r := e.Do("POST", "/v1/contacts/check", e.Key, map[string]any{"engineId": id,
		"phones": []string{"+15551230001", "15551235555@c.us", "+15551230000"}})
	if r.Status != 200 || r.Data()["engineId"] != id {
		t.Fatalf("check: %d %s", r.Status, r.Raw)
	}
	want := []string{
		"+15551230001 true 15551230001@c.us 777000001@lid false <nil>",
		"15551235555@c.us true 15551235555@c.us <nil> true Acme Shop",
		"+15551230000 false <nil> <nil> false <nil>",
	}
	if diff := cmp.Diff(want, statusLines(r.Data()["items"].([]any))); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	callsAre(t, "first check", f, "CheckNumbers 15551230001 15551235555 15551230000")

	makeDefault(t, e, id)
	r = e.Do("POST", "/v1/contacts/check", e.Key, map[string]any{"phones": []string{"+15551230000", "+15551230002"}})
	if r.Status != 200 || r.Data()["engineId"] != id {
		t.Fatalf("check through the default engine: %d %s", r.Status, r.Raw)
	}
	if diff := cmp.Diff([]string{"+15551230000 false <nil> <nil> false <nil>", "+15551230002 false <nil> <nil> false <nil>"},
		statusLines(r.Data()["items"].([]any))); diff != "" {
		t.Errorf("answers through the default engine (-want +got):\n%s", diff)
	}
	callsAre(t, "second check (one number cached)", f, "CheckNumbers 15551230002")

	bad := e.Do("POST", "/v1/contacts/check", e.Key, map[string]any{"phones": []string{"+15551230003", "hello"}, "engineId": id})
	if bad.Status != 422 || !cmp.Equal(bad.DetailPaths(), []string{"phones.1"}) {
		t.Errorf("a bad number: %d %s", bad.Status, bad.Raw)
	}
	callsAre(t, "bad input", f)
}

// The block list through the gateway: block (by number, by LID), unblock and
// list reach the session with the contact's chat id, each change answering
// the list the session then reads; the sandbox's own list is untouched; a
// disconnected session is 503 and is not asked.
func TestGatewayBlockList(t *testing.T) {
	e, f, id := contactsGateway(t)
	items := func(r *apptest.Response) []any {
		t.Helper()
		if r.Status != 200 || r.Data()["engineId"] != id {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		return r.Data()["items"].([]any)
	}
	got := items(e.Do("POST", "/v1/contacts/+15551230001/block?engineId="+id, e.Key, nil))
	if diff := cmp.Diff([]any{"15551230001@c.us"}, got); diff != "" {
		t.Errorf("after blocking (-want +got):\n%s", diff)
	}
	callsAre(t, "block with engineId", f, "Block 15551230001@c.us", "Blocklist")

	makeDefault(t, e, id)
	got = items(e.Do("POST", "/v1/contacts/91003215552@lid/block", e.Key, nil))
	if diff := cmp.Diff([]any{"15551230001@c.us", "91003215552@lid"}, got); diff != "" {
		t.Errorf("after blocking a LID (-want +got):\n%s", diff)
	}
	got = items(e.Do("DELETE", "/v1/contacts/15551230001@c.us/block", e.Key, nil))
	if diff := cmp.Diff([]any{"91003215552@lid"}, got); diff != "" {
		t.Errorf("after unblocking (-want +got):\n%s", diff)
	}
	if got := items(e.Do("GET", "/v1/contacts/blocked", e.Key, nil)); len(got) != 1 {
		t.Errorf("blocked: %v", got)
	}
	callsAre(t, "through the default engine", f, "Block 91003215552@lid", "Blocklist", "Unblock 15551230001@c.us", "Blocklist", "Blocklist")

	sandbox := "eng_sandbox_" + mustWorkspace(t, e, e.Key)
	if r := e.Do("GET", "/v1/contacts/blocked?engineId="+sandbox, e.Key, nil); r.Status != 200 || len(r.Data()["items"].([]any)) != 0 {
		t.Errorf("the sandbox's block list: %d %s", r.Status, r.Raw)
	}

	f.set(func(s *gateway.State) { s.Status, s.Connected = gateway.StatusConnecting, false })
	e.Eventually(10*time.Second, "the gateway out of ping", func() bool { return !pinged(e, e.Key, id) })
	if r := e.Do("POST", "/v1/contacts/+15551230001/block?engineId="+id, e.Key, nil); errorOf(r) != "503 engine_unavailable" {
		t.Errorf("block through a disconnected gateway: %s", r.Raw)
	}
	callsAre(t, "disconnected", f)
}

// The gateway's block-list events (made on the phone) are contact.blocked and
// contact.unblocked webhooks naming the gateway.
func TestGatewayBlockEvents(t *testing.T) {
	e, f, id := contactsGateway(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "contact.blocked", "contact.unblocked")
	for i, blocked := range []bool{true, false} {
		f.report(t, engine.Event{ID: fmt.Sprintf("wa_block_15550009999@c.us_%d_dhash%d", i, i), Type: engine.EventBlock,
			Block: &engine.BlockChange{ChatID: "15550009999@c.us", Blocked: blocked}})
		e.Eventually(10*time.Second, fmt.Sprint("event ", i), func() bool { return len(rc.all()) == i+1 })
	}
	for _, typ := range []string{"contact.blocked", "contact.unblocked"} {
		got := rc.ofType(typ)
		if len(got) != 1 {
			t.Fatalf("%d %s", len(got), typ)
		}
		d := got[0].payload["data"].(map[string]any)
		if d["chatId"] != "15550009999@c.us" || d["engineId"] != id || d["at"] == nil {
			t.Errorf("%s data %v", typ, d)
		}
	}
}

// fakePictureCDN serves profile pictures as WhatsApp's CDN does, by path, and
// records the paths fetched.
type fakePictureCDN struct {
	*httptest.Server
	mu      sync.Mutex
	fetched []string
}

func newPictureCDN(t *testing.T, png []byte) *fakePictureCDN {
	c := &fakePictureCDN{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.fetched = append(c.fetched, r.URL.Path)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(png)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *fakePictureCDN) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.fetched
	c.fetched = nil
	return out
}

// Contact details through the gateway: the session is asked the contact's
// chat id, the picture is fetched from the URL it answers and stored; fresh
// details are answered from the store without asking; a picture change the
// session reports is a contact.updated webhook and the next read asks again
// (through the default engine) and fetches the new picture; a business
// answers its profile; a number the network does not know is 404.
func TestGatewayContactDetails(t *testing.T) {
	e, f, id := contactsGateway(t)
	rc := newReceiver(t, nil)
	createWebhook(e, rc.URL, "contact.updated")
	_, png := pngDataURL(t, 4, 4)
	cdn := newPictureCDN(t, png)
	const ann, shop = "15550007001@c.us", "15550007002@c.us"
	f.setContacts(func(c *fakeContacts) {
		c.details = map[string]engine.ContactDetails{
			ann:  {About: "at work", Picture: &engine.ProfilePicture{ID: "p1", URL: cdn.URL + "/p1.jpg"}},
			shop: {IsBusiness: true, Business: &engine.BusinessProfile{Name: "Acme Shop", Email: "shop@example.com"}},
		}
	})
	f.report(t, engine.Event{ID: "wa_contacts_1", Type: engine.EventHistory,
		History: &engine.History{Contacts: []engine.ContactInfo{{ID: ann, PushName: "Ann"}}}})
	e.Eventually(10*time.Second, "Ann stored", func() bool {
		return e.App.Client.Contact.Query().Where(contact.Jid(ann)).CountX(systemCtx()) == 1
	})

	r := e.Do("GET", "/v1/contacts/+15550007001/details?engineId="+id, e.Key, nil)
	d := r.Data()
	pic, _ := d["pictureUrl"].(string)
	if r.Status != 200 || d["chatId"] != ann || d["about"] != "at work" || d["pushName"] != "Ann" || d["engineId"] != id || pic == "" {
		t.Fatalf("details: %d %s", r.Status, r.Raw)
	}
	if got := fetchURL(t, e, pic); string(got) != string(png) {
		t.Errorf("the stored picture is %d bytes, the CDN's %d", len(got), len(png))
	}
	callsAre(t, "first read", f, "ContactDetails "+ann)
	if diff := cmp.Diff([]string{"/p1.jpg"}, cdn.take()); diff != "" {
		t.Errorf("CDN fetches (-want +got):\n%s", diff)
	}
	if again := e.Do("GET", "/v1/contacts/"+ann+"/details?engineId="+id, e.Key, nil).Data(); again["refreshedAt"] != d["refreshedAt"] {
		t.Errorf("fresh details read again: %v", again)
	}
	callsAre(t, "fresh details", f)

	f.setContacts(func(c *fakeContacts) {
		c.details[ann] = engine.ContactDetails{About: "at work", Picture: &engine.ProfilePicture{ID: "p2", URL: cdn.URL + "/p2.jpg"}}
	})
	f.report(t, engine.Event{ID: "wa_contact_picture_" + ann + "_p2", Type: engine.EventHistory,
		History: &engine.History{Contacts: []engine.ContactInfo{{ID: ann, Changed: engine.ContactPicture}}}})
	e.Eventually(10*time.Second, "contact.updated delivered", func() bool { return len(rc.ofType("contact.updated")) == 1 })
	data := rc.ofType("contact.updated")[0].payload["data"].(map[string]any)
	if diff := cmp.Diff([]any{ann, "picture", id}, []any{data["chatId"], data["changed"], data["engineId"]}); diff != "" {
		t.Errorf("contact.updated data (-want +got):\n%s", diff)
	}

	makeDefault(t, e, id)
	after := e.Do("GET", "/v1/contacts/"+ann+"/details", e.Key, nil).Data()
	if p, _ := after["pictureUrl"].(string); p == pic || p == "" || after["engineId"] != id {
		t.Errorf("after the picture changed: %v", after)
	}
	callsAre(t, "after the change, through the default engine", f, "ContactDetails "+ann)
	if diff := cmp.Diff([]string{"/p2.jpg"}, cdn.take()); diff != "" {
		t.Errorf("CDN fetches after the change (-want +got):\n%s", diff)
	}

	biz := e.Do("GET", "/v1/contacts/+15550007002/details", e.Key, nil)
	b, _ := biz.Data()["business"].(map[string]any)
	if biz.Status != 200 || biz.Data()["isBusiness"] != true || b["name"] != "Acme Shop" || b["email"] != "shop@example.com" || biz.Data()["pictureUrl"] != nil {
		t.Errorf("business: %d %s", biz.Status, biz.Raw)
	}
	if r := e.Do("GET", "/v1/contacts/+15550007003/details", e.Key, nil); errorOf(r) != "404 not_found id:not_found" {
		t.Errorf("not on the network: %s", r.Raw)
	}
	callsAre(t, "business and unknown", f, "ContactDetails "+shop, "ContactDetails 15550007003@c.us")
}

// A gateway held by replica A serves the contact operations asked through
// replica B: the commands and their answers (a details' picture URL and
// business profile, the network not knowing a number) cross the hub intact.
// Reads that sync history first skip an engine that does not serve
// history_sync (B's handle of the gateway has the method, not the capability).
func TestGatewayContactOpsAcrossReplicas(t *testing.T) {
	var fakes fakeGateways
	a := remoteEnv(t, func(c *app.Config) { c.OpenGateway = fakes.opener("A") })
	redisURL := a.Config.RedisURL
	if redisURL == "" {
		redisURL = a.App.RedisURL()
	}
	b := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) {
		c.SandboxWorkspaces = []string{"default"}
		c.PresenceTTL = a.Config.PresenceTTL
		c.DatabaseURL, c.RedisURL, c.Role = a.Config.DatabaseURL, redisURL, app.RoleAPI
		c.OpenGateway = fakes.opener("B")
	}})
	key := a.NewKey("acme", "*")
	id, f := pairedGateway(t, a, &fakes, key)
	if f.replica != "A" {
		t.Fatalf("the gateway runs on %s", f.replica)
	}
	b.Eventually(10*time.Second, "the gateway in B's ping", func() bool { return pinged(b, key, id) })
	_, png := pngDataURL(t, 4, 4)
	cdn := newPictureCDN(t, png)
	f.setContacts(func(c *fakeContacts) {
		c.numbers = map[string]engine.NumberStatus{"15551230001": {Phone: "15551230001", OnNetwork: true, ChatID: "15551230001@c.us", LID: "777000001@lid"}}
		c.details = map[string]engine.ContactDetails{"15550007002@c.us": {About: "open 9-5", IsBusiness: true,
			Business: &engine.BusinessProfile{Name: "Acme Shop", Hours: []engine.BusinessHours{{Day: "mon", Mode: "specific_hours", OpenTime: 540, CloseTime: 1020}}},
			Picture:  &engine.ProfilePicture{ID: "p1", URL: cdn.URL + "/shop.jpg"}}}
	})

	r := b.Do("POST", "/v1/contacts/check", key, map[string]any{"phones": []string{"+15551230001", "+15551230000"}})
	items, _ := r.Data()["items"].([]any)
	if diff := cmp.Diff([]string{"+15551230001 true 15551230001@c.us 777000001@lid false <nil>", "+15551230000 false <nil> <nil> false <nil>"},
		statusLines(items)); r.Status != 200 || r.Data()["engineId"] != id || diff != "" {
		t.Errorf("check through B: %d %s %s", r.Status, r.Raw, diff)
	}
	if r := b.Do("POST", "/v1/contacts/+15551230001/block?engineId="+id, key, nil); r.Status != 200 || !cmp.Equal(r.Data()["items"], []any{"15551230001@c.us"}) {
		t.Errorf("block through B: %d %s", r.Status, r.Raw)
	}
	d := b.Do("GET", "/v1/contacts/15550007002@c.us/details?engineId="+id, key, nil)
	biz, _ := d.Data()["business"].(map[string]any)
	pic, _ := d.Data()["pictureUrl"].(string)
	if d.Status != 200 || d.Data()["about"] != "open 9-5" || biz["name"] != "Acme Shop" || len(biz["hours"].([]any)) != 1 || pic == "" {
		t.Errorf("details through B: %d %s", d.Status, d.Raw)
	} else if got := fetchURL(t, b, pic); string(got) != string(png) {
		t.Errorf("the stored picture is %d bytes, the CDN's %d", len(got), len(png))
	}
	if r := b.Do("GET", "/v1/contacts/+15550007003/details?engineId="+id, key, nil); errorOf(r) != "404 not_found id:not_found" {
		t.Errorf("not on the network, through B: %s", r.Raw)
	}
	// The reads of the store (which first ask the engine for its history when
	// it serves history_sync; the gateway does not) answer through B too.
	for _, path := range []string{"/v1/chats", "/v1/contacts"} {
		if r := b.Do("GET", path, key, nil); r.Status != 200 {
			t.Errorf("GET %s through B: %d %s", path, r.Status, r.Raw)
		}
	}
	callsAre(t, "through B", f, "CheckNumbers 15551230001 15551230000", "Block 15551230001@c.us", "Blocklist",
		"ContactDetails 15550007002@c.us", "ContactDetails 15550007003@c.us")
}
