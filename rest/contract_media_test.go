package rest_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/viewer"
)

// GET /v1/messages/media/{waMessageKey} answers the reference's envelope: data.url
// where the bytes are served (an unguessable /media/ URL: an upload's own, or the
// engine's download stored once and kept by the message), mimetype and filename;
// or mediaUnavailable (no_media for a message without media). maxAttempts bounds
// the engine's attempts while it is still fetching; chatId completes a bare id.
func TestMessageMediaEnvelope(t *testing.T) {
	e := newEnv(t)
	img := e.Do("GET", "/v1/messages?messageTypes=image&limit=1", e.Key, nil).List()[0]
	key := img["waMessageKey"].(map[string]any)["_serialized"].(string)
	first := e.Do("GET", "/v1/messages/media/"+key, e.Key, nil)
	d := first.Data()
	u, _ := d["url"].(string)
	if first.Status != 200 || !strings.HasPrefix(u, e.Server.URL+"/media/") || d["mimetype"] != "image/png" || d["mediaUnavailable"] != nil {
		t.Fatalf("image media = %d %s", first.Status, first.Raw)
	}
	// Kept by the message: asked again (by bare id and chatId) it is the same URL,
	// and the message's mediaUrl says so.
	bare := img["waMessageKey"].(map[string]any)["id"].(string)
	again := e.Do("GET", "/v1/messages/media/"+bare+"?chatId="+img["chatId"].(string)+"&maxAttempts=1", e.Key, nil)
	if again.Status != 200 || again.Data()["url"] != u {
		t.Errorf("asked again = %d %s, want url %s", again.Status, again.Raw, u)
	}
	if m := e.Do("GET", "/v1/messages/"+key, e.Key, nil).Data(); m["mediaUrl"] != u {
		t.Errorf("the message's mediaUrl = %v, want %s", m["mediaUrl"], u)
	}
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET url = %d %v", res.StatusCode, res.Header)
	}

	// An upload sent as bytes: its own URL, without the engine.
	sent := e.Do("POST", "/v1/messages/+15550180001", e.Key, map[string]any{"type": "media",
		"mediaBase64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 tiny")), "mediaFilename": "terms.pdf"})
	if sent.Status != 201 {
		t.Fatalf("send = %d %s", sent.Status, sent.Raw)
	}
	own := e.Do("GET", "/v1/messages/media/"+sent.Data()["id"].(string), e.Key, nil).Data()
	if own["url"] != sent.Data()["mediaUrl"] || own["filename"] != "terms.pdf" || own["mimetype"] == nil {
		t.Errorf("own upload's media = %v (sent %v)", own, sent.Data()["mediaUrl"])
	}

	text := e.Do("GET", "/v1/messages?messageTypes=chat&limit=1", e.Key, nil).List()[0]
	tkey := text["waMessageKey"].(map[string]any)["_serialized"].(string)
	if r := e.Do("GET", "/v1/messages/media/"+tkey, e.Key, nil); r.Status != 200 || !cmp.Equal(r.Data(), map[string]any{"mediaUnavailable": "no_media"}) {
		t.Errorf("text message's media = %d %s", r.Status, r.Raw)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v1/messages/media/false_15550000000@c.us_NOPE", 404},
		{"/v1/messages/media/" + key + "?maxAttempts=0", 400},
		{"/v1/messages/media/" + key + "?maxAttempts=11", 400},
		{"/v1/messages/media/" + key + "?maxAttempts=two", 400},
	} {
		if r := e.Do("GET", tc.path, e.Key, nil); r.Status != tc.status {
			t.Errorf("GET %s = %d %s", tc.path, r.Status, r.Raw)
		}
	}
}

// fetchingEngine is a remote engine whose media is still being fetched for the
// first fetching attempts of each key, then answers the bytes, or fails as
// unavailable names it by the key's id.
type fetchingEngine struct {
	mu       sync.Mutex
	fetching int
	attempts map[string]int
}

// The states of the media answer through a remote engine: fetching until
// maxAttempts runs out (one attempt per try, paced), then the bytes;
// awaiting_sender, expired and error as the engine says.
func TestMessageMediaStates(t *testing.T) {
	e := remoteEnv(t)
	e.App.Resolver.MediaRetryPace = 20 * time.Millisecond
	key := e.NewKey("acme", "*")
	ws := workspaceOfKey(e, key)
	rem := createEngine(e, key, "remote")
	fe := &fetchingEngine{fetching: 2, attempts: map[string]int{}}
	c := &remote.Client{URL: e.Server.URL, Token: rem["token"].(string), NoReconnect: true,
		Capabilities: engine.CapabilitiesOf(fe)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = c.Run(ctx, func(context.Context, remote.Welcome, engine.BatchSink) (engine.Engine, error) { return fe, nil })
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	e.Eventually(10*time.Second, "the remote engine in ping", func() bool { return pinged(e, key, rem["id"].(string)) })

	wctx := viewer.WorkspaceContext(context.Background(), ws)
	for _, id := range []string{"SLOW", "SLOWER", "AWAIT", "GONE", "BROKEN"} {
		k := engine.Key{Remote: "15550190001@c.us", ID: id}
		err := e.App.Client.Message.Create().SetOrigin(message.OriginIncoming).SetTo(k.Remote).SetFrom(k.Remote).
			SetType("media").SetMediaKind("image").SetStatus("received").SetFromMe(false).SetWaID(id).
			SetWaSerialized(k.Serialized()).Exec(wctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	media := func(id, query string) map[string]any {
		t.Helper()
		r := e.Do("GET", "/v1/messages/media/false_15550190001@c.us_"+id+query, key, nil)
		if r.Status != 200 {
			t.Fatalf("media of %s = %d %s", id, r.Status, r.Raw)
		}
		return r.Data()
	}
	if d := media("SLOW", "?maxAttempts=1"); !cmp.Equal(d["mediaUnavailable"], "fetching") || d["url"] != nil {
		t.Errorf("maxAttempts=1 while fetching: %v", d)
	}
	d := media("SLOW", "?maxAttempts=2") // attempts 2 and 3: the third has the bytes
	if u, _ := d["url"].(string); !strings.HasPrefix(u, e.Server.URL+"/media/") || d["mimetype"] != "image/jpeg" || d["originalQuality"] != false {
		t.Errorf("after fetching: %v", d)
	}
	if d := media("SLOWER", ""); d["url"] == nil { // the default 6 attempts outlast 2 fetching answers
		t.Errorf("default attempts: %v", d)
	}
	for id, want := range map[string]string{"AWAIT": "awaiting_sender", "GONE": "expired", "BROKEN": "error"} {
		if d := media(id, ""); d["mediaUnavailable"] != want || d["url"] != nil {
			t.Errorf("%s: %v, want mediaUnavailable %s", id, d, want)
		}
	}
	fe.mu.Lock()
	got := maps.Clone(fe.attempts)
	fe.mu.Unlock()
	want := map[string]int{"SLOW": 3, "SLOWER": 3, "AWAIT": 1, "GONE": 1, "BROKEN": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("engine attempts (-want +got):\n%s", diff)
	}
}

// GraphQL answers the same as REST for the contract rows: one core.
func TestGraphQLContractRows(t *testing.T) {
	e := newEnv(t)
	aud := createAudience(e, e.Key, map[string]any{"name": "GraphQL bare", "contacts": phones(800, 1)})
	made := gqlData(t, e, `mutation($a: String) { createCampaign(input: {name: "GraphQL bare", audienceId: $a}) { id status } }`,
		map[string]any{"a": aud["id"]})["createCampaign"].(map[string]any)
	id := made["id"].(string)
	if made["status"] != "pending" {
		t.Errorf("createCampaign without content: %v", made)
	}
	waitCampaign(e, id, "paused")
	res := gql(e, e.Key, `mutation($id: ID!) { resumeCampaign(id: $id) { status } }`, map[string]any{"id": id})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "validation_failed" {
		t.Errorf("resume without content: %+v", res.Errors)
	}
	upd := gqlData(t, e, `mutation($id: ID!) { updateCampaign(id: $id, input: {text: "Hello"}) { text status pauseReason } }`,
		map[string]any{"id": id})["updateCampaign"].(map[string]any)
	if upd["text"] != "Hello" || upd["status"] != "paused" {
		t.Errorf("updateCampaign: %v", upd)
	}

	nl := gqlData(t, e, `mutation { createNewsletter(name: "GraphQL news", description: "Said in GraphQL") { jid description } }`, nil)["createNewsletter"].(map[string]any)
	if rest := e.Do("GET", "/v1/newsletters/"+nl["jid"].(string), e.Key, nil).Data(); nl["description"] != "Said in GraphQL" || rest["description"] != nl["description"] {
		t.Errorf("newsletter: GraphQL %v, REST %v", nl, rest)
	}

	img := e.Do("GET", "/v1/messages?messageTypes=image&limit=1", e.Key, nil).List()[0]
	key := img["waMessageKey"].(map[string]any)["_serialized"].(string)
	media := gqlData(t, e, `query($k: String!) { messageMedia(key: $k, maxAttempts: 1) { url mimetype mediaUnavailable } }`,
		map[string]any{"k": key})["messageMedia"].(map[string]any)
	if rest := e.Do("GET", "/v1/messages/media/"+key, e.Key, nil).Data(); media["url"] != rest["url"] || media["mimetype"] != "image/png" {
		t.Errorf("messageMedia: GraphQL %v, REST %v", media, rest)
	}

	ws := workspaceOf(e)
	gqlData(t, e, `mutation { sendMessage(chatId: "+15550210001", input: {type: "text", text: "typed"}, typingSeconds: 1) { id } }`, nil)
	if typed := e.App.Sandbox.Typing(ws); len(typed) != 1 || typed[0].For < 1400*time.Millisecond {
		t.Errorf("sendMessage typing: %+v", typed)
	}
	res = gql(e, e.Key, `mutation { sendMessage(chatId: "+15550210001", input: {type: "text", text: "x"}, typingSeconds: 30) { id } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "validation_failed" {
		t.Errorf("typingSeconds 30: %+v", res.Errors)
	}

	for i := range 2 {
		createWebhook(e, fmt.Sprintf("https://hooks.example.com/gql/%d", i), "message.read")
	}
	rows := gqlData(t, e, `{ webhookList(order: "asc") { items { url } } }`, nil)["webhookList"].(map[string]any)["items"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["url"] != "https://hooks.example.com/gql/0" {
		t.Errorf("webhookList(order: asc): %v", rows)
	}
}

func (f *fetchingEngine) ID() string { return "fetching" }

func (f *fetchingEngine) Kind() string { return engine.KindGateway }

func (f *fetchingEngine) Close() error { return nil }

func (f *fetchingEngine) Send(_ context.Context, m engine.Outgoing) (engine.Key, error) {
	return engine.Key{FromMe: true, Remote: m.To, ID: m.WireID}, nil
}

func (f *fetchingEngine) FetchMedia(_ context.Context, k engine.Key) (engine.Media, error) {
	f.mu.Lock()
	f.attempts[k.ID]++
	n := f.attempts[k.ID]
	f.mu.Unlock()
	switch k.ID {
	case "AWAIT":
		return engine.Media{}, &engine.MediaUnavailableError{Reason: engine.MediaAwaitingSender, Message: "asked the sender"}
	case "GONE":
		return engine.Media{}, engine.ErrNotFound
	case "BROKEN":
		return engine.Media{}, errors.New("the phone said something odd")
	}
	if n <= f.fetching {
		return engine.Media{}, &engine.MediaUnavailableError{Reason: engine.MediaFetching, Message: "downloading"}
	}
	return engine.Media{Data: []byte("\x89PNG\r\n\x1a\npreview"), MimeType: "image/jpeg", Preview: true}, nil
}
