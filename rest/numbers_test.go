package rest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/engine/sandbox"
	"github.com/switchboardhq/switchboard/poll"
)

// Several numbers in one workspace (docs/engines.md, "Several numbers"): two
// remote engines, each an out-of-process sandbox with its own memory.

// sendOnly is a sandbox engine that only sends: its history sync reports
// nothing, so the store holds only what a test makes.
type sendOnly struct{ engine.Engine }

func (sendOnly) SyncHistory(context.Context) (bool, error) { return false, nil }

// number is one phone number of a test: its engine's id and protocol client.
type number struct {
	id     string
	client *remote.Client
	stop   func()
}

// runNumber creates a remote engine through the API and runs a send-only
// sandbox behind it; it returns once the engine is in ping.
func runNumber(t *testing.T, e *apptest.Env, key string) number {
	t.Helper()
	rec := createEngine(e, key, "remote")
	db := sandboxDB(t)
	c := &remote.Client{URL: e.Server.URL, Token: rec["token"].(string), NoReconnect: true,
		Capabilities: engine.CapabilitiesOf(sendOnly{})}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = c.Run(ctx, func(_ context.Context, w remote.Welcome, sink engine.BatchSink) (engine.Engine, error) {
			n := sandbox.NewNetwork(db, 50*time.Millisecond, sink)
			go n.Run(ctx, poll.Pace{Min: 10 * time.Millisecond, Max: time.Second})
			return sendOnly{n.EngineFor(w.WorkspaceID, w.EngineID)}, nil
		})
	}()
	stop := func() {
		cancel()
		select { // bounded: a client that does not stop must not hang the suite
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("the sandbox client did not stop")
		}
	}
	t.Cleanup(stop)
	id := rec["id"].(string)
	e.Eventually(10*time.Second, "engine "+id+" in ping", func() bool { return pinged(e, key, id) })
	return number{id: id, client: c, stop: stop}
}

// sendThrough sends a text to chat directly, through engineID when it is not
// "", and returns the message's engineId.
func sendThrough(e *apptest.Env, key, chat, engineID string) string {
	e.T.Helper()
	body := map[string]any{"type": "text", "text": "hello", "withTyping": false}
	if engineID != "" {
		body["engineId"] = engineID
	}
	r := e.Do("POST", "/v1/messages/"+chat, key, body)
	if r.Status != 201 {
		e.T.Fatalf("send to %s through %q = %d %s", chat, engineID, r.Status, r.Raw)
	}
	got, _ := r.Data()["engineId"].(string)
	return got
}

// listTotal is the total of the list at path.
func listTotal(e *apptest.Env, key, path string) int {
	e.T.Helper()
	r := e.Do("GET", path, key, nil)
	if r.Status != 200 {
		e.T.Fatalf("GET %s = %d %s", path, r.Status, r.Raw)
	}
	n, _ := r.Body["total"].(float64)
	return int(n)
}

// twoNumbers is a workspace with two numbers, a and b; x replies to what it
// gets (the sandbox's rule for numbers ending in 2222), y does not.
type twoNumbers struct {
	t    *testing.T
	e    *apptest.Env
	key  string
	a, b number
}

const x, y = "15550012222@c.us", "15550013333@c.us"

// Sends go through the number named, else back through the number the
// conversation last used; replies are stored with the number that received
// them; every list filters by engineId with exact totals.
func TestTwoNumbersRouteAndFilter(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	n := &twoNumbers{t: t, e: e, key: key, a: runNumber(t, e, key), b: runNumber(t, e, key)}
	n.replyComesBackOnItsNumber()
	n.sendsToY()
	n.listsFilterByEngine()
	n.graphQLFiltersByEngine()
	n.conversationMovesToA()
	n.scheduledNamesItsEngine()
	n.namedEngineAway()
}

// replyComesBackOnItsNumber: b writes to x, x's reply is b's (in the store and
// in webhook data), and the next send to x goes back through b.
func (n *twoNumbers) replyComesBackOnItsNumber() {
	t, e, key, b := n.t, n.e, n.key, n.b
	rc := newReceiver(t, nil)
	if r := e.Do("POST", "/v1/webhooks", key, map[string]any{"url": rc.URL + "/hook",
		"events": []string{"message.delivered", "new_message_received_webhook"}}); r.Status != 201 {
		t.Fatalf("create webhook = %d %s", r.Status, r.Raw)
	}
	if got := sendThrough(e, key, "+15550012222", b.id); got != b.id {
		t.Fatalf("explicit send through b went through %s", got)
	}
	xOfB := "/v1/messages?chatId=" + x + "&engineId=" + b.id
	e.Eventually(10*time.Second, "x's reply stored as b's", func() bool { return listTotal(e, key, xOfB) == 2 })
	reply := e.Do("GET", xOfB+"&limit=1", key, nil).List()[0] // newest first: the reply
	if reply["fromMe"] != false || reply["engineId"] != b.id {
		t.Errorf("reply = %v, want x's message with engineId %s", reply, b.id)
	}
	e.Eventually(10*time.Second, "the webhooks of b's send and x's reply", func() bool {
		return len(rc.ofType("message.delivered")) > 0 && len(rc.ofType("new_message_received_webhook")) > 0
	})
	for _, typ := range []string{"message.delivered", "new_message_received_webhook"} {
		if data := rc.ofType(typ)[0].payload["data"].(map[string]any); data["engineId"] != b.id {
			t.Errorf("%s data = %v, want engineId %s", typ, data, b.id)
		}
	}
	if got := sendThrough(e, key, "+15550012222", ""); got != b.id {
		t.Errorf("implicit send to x went through %s, want b (the number x wrote to)", got)
	}
	e.Eventually(10*time.Second, "the second reply", func() bool { return listTotal(e, key, xOfB) == 4 })
}

// sendsToY: a writes to y, named then implied.
func (n *twoNumbers) sendsToY() {
	t, e, key, a := n.t, n.e, n.key, n.a
	if got := sendThrough(e, key, "+15550013333", a.id); got != a.id {
		t.Fatalf("explicit send through a went through %s", got)
	}
	if got := sendThrough(e, key, "+15550013333", ""); got != a.id {
		t.Errorf("implicit send to y went through %s, want a", got)
	}
	e.Eventually(10*time.Second, "y's messages delivered", func() bool {
		return listTotal(e, key, "/v1/contacts?engineId="+a.id) == 1
	})
}

// listsFilterByEngine: every REST list's engineId filter, with exact totals,
// and each chat's engine.
func (n *twoNumbers) listsFilterByEngine() {
	t, e, key, a, b := n.t, n.e, n.key, n.a, n.b
	totals := map[string]int{
		"/v1/messages?engineId=" + a.id:                                 2,
		"/v1/messages?engineId=" + b.id:                                 4,
		"/v1/messages?chatId=" + y + "&engineId=" + b.id:                0,
		"/v1/chats?includeWithoutName=true&engineId=" + a.id:            1,
		"/v1/chats?includeWithoutName=true&engineId=" + b.id:            1,
		"/v1/chats?includeWithoutName=true":                             2,
		"/v1/contacts?engineId=" + a.id:                                 1,
		"/v1/contacts?engineId=" + b.id:                                 1,
		"/v1/contacts?limit=-1&engineId=" + b.id:                        1,
		"/v1/scheduled-messages?engineId=" + a.id:                       0,
		"/v1/messages?engineId=eng_not_ours":                            0,
		"/v1/chats?includeWithoutName=true&engineId=eng_not_ours":       0,
		"/v1/contacts?engineId=eng_not_ours":                            0,
		"/v1/scheduled-messages?engineId=eng_not_ours":                  0,
		"/v1/messages?chatId=" + x + "&engineId=" + a.id + "&limit=200": 0,
	}
	got := map[string]int{}
	for path := range totals {
		got[path] = listTotal(e, key, path)
	}
	if d := cmp.Diff(totals, got); d != "" {
		t.Errorf("totals (-want +got):\n%s", d)
	}
	chats := map[string]string{}
	for _, c := range e.Do("GET", "/v1/chats?includeWithoutName=true", key, nil).List() {
		chats[c["chatId"].(string)], _ = c["engineId"].(string)
	}
	if d := cmp.Diff(map[string]string{x: b.id, y: a.id}, chats); d != "" {
		t.Errorf("chats' engines (-want +got):\n%s", d)
	}
}

// graphQLFiltersByEngine: GraphQL filters alike, and shows each row's engine.
func (n *twoNumbers) graphQLFiltersByEngine() {
	t, e, key, a, b := n.t, n.e, n.key, n.a, n.b
	res := gql(e, key, `query($a: String!, $b: String!) {
		a: storedMessages(filter: {engineId: $a}) { total items { engineID } }
		b: scheduledMessages(filter: {engineId: $b}) { total }
		chats: chatList(filter: {engineId: $b, includeWithoutName: true}) { total items { jid engineID } }
		contacts: contactList(engineId: $a) { total items { jid engineID } }
	}`, map[string]any{"a": a.id, "b": b.id})
	if len(res.Errors) > 0 {
		t.Fatalf("graphql: %+v", res.Errors)
	}
	gqlTotals := map[string]any{}
	for k, v := range res.Data {
		gqlTotals[k] = v.(map[string]any)["total"]
	}
	if d := cmp.Diff(map[string]any{"a": 2.0, "b": 0.0, "chats": 1.0, "contacts": 1.0}, gqlTotals); d != "" {
		t.Errorf("GraphQL totals (-want +got):\n%s", d)
	}
	if item := res.Data["chats"].(map[string]any)["items"].([]any)[0].(map[string]any); item["jid"] != x || item["engineID"] != b.id {
		t.Errorf("GraphQL chat = %v, want %s of %s", item, x, b.id)
	}
}

// conversationMovesToA: x writes to a; the conversation's number is a from
// here on, and nothing of b's moves.
func (n *twoNumbers) conversationMovesToA() {
	t, e, key, a, b := n.t, n.e, n.key, n.a, n.b
	err := a.client.HandleEvent(context.Background(), engine.Event{ID: "to-a-1", Type: engine.EventMessage, At: time.Now(),
		Message: &engine.Incoming{Key: engine.Key{Remote: x, ID: "3EB1TOA"}, From: x, Type: "text", Text: "on a now"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Eventually(10*time.Second, "x's chat on a", func() bool {
		c, _ := e.Do("GET", "/v1/chats/"+x, key, nil).Data()["engineId"].(string)
		return c == a.id
	})
	if got := sendThrough(e, key, "+15550012222", ""); got != a.id {
		t.Errorf("implicit send after x wrote to a went through %s, want a", got)
	}
	if n := listTotal(e, key, "/v1/messages?chatId="+x+"&engineId="+b.id); n != 4 {
		t.Errorf("x's messages on b = %d after a's, want 4 (nothing moved)", n)
	}
}

// scheduledNamesItsEngine: a scheduled message to y names b and goes through b.
func (n *twoNumbers) scheduledNamesItsEngine() {
	t, e, key, b := n.t, n.e, n.key, n.b
	r := e.Do("POST", "/v1/scheduled-messages/+15550013333", key, map[string]any{"type": "text", "text": "later", "engineId": b.id})
	if r.Status != 201 || r.Data()["engineId"] != b.id {
		t.Fatalf("schedule through b = %d %s", r.Status, r.Raw)
	}
	sched := r.Data()["id"].(string)
	e.Eventually(10*time.Second, "the scheduled message sent", func() bool {
		return e.Do("GET", "/v1/scheduled-messages/"+sched, key, nil).Data()["status"] != "pending"
	})
	if n := listTotal(e, key, "/v1/scheduled-messages?engineId="+b.id); n != 1 {
		t.Errorf("scheduled messages of b = %d, want 1", n)
	}
	if n := listTotal(e, key, "/v1/messages?chatId="+y+"&engineId="+b.id); n != 1 {
		t.Errorf("y's messages of b = %d, want 1 (the scheduled one)", n)
	}
}

// namedEngineAway: b goes away; a send that names it is refused, a scheduled
// one waits for it (never sent from a).
func (n *twoNumbers) namedEngineAway() {
	t, e, key, b := n.t, n.e, n.key, n.b
	b.stop()
	e.Eventually(10*time.Second, "b out of ping", func() bool { return !pinged(e, key, b.id) })
	r := e.Do("POST", "/v1/messages/+15550013333", key, map[string]any{"type": "text", "text": "x", "engineId": b.id, "withTyping": false})
	if r.Status != 503 || r.Error()["code"] != "engine_unavailable" {
		t.Errorf("send through a disconnected engine = %d %s, want 503 engine_unavailable", r.Status, r.Raw)
	}
	r = e.Do("POST", "/v1/scheduled-messages/+15550013333", key, map[string]any{"type": "text", "text": "waits", "engineId": b.id})
	if r.Status != 201 {
		t.Fatalf("schedule through b = %d %s", r.Status, r.Raw)
	}
	waiting := r.Data()["id"].(string)
	time.Sleep(500 * time.Millisecond)
	if st := e.Do("GET", "/v1/scheduled-messages/"+waiting, key, nil).Data()["status"]; st != "pending" {
		t.Errorf("a message for a disconnected engine is %v, want pending (it waits for its engine)", st)
	}
}

// The default engine: the first paired real engine until one is set; a send to
// a new chat goes through it; it is a preference, not a pin.
func TestDefaultEngine(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	a, b := runNumber(t, e, key), runNumber(t, e, key)
	defaults := func() map[string]bool {
		out := map[string]bool{}
		for _, en := range e.Do("GET", "/v1/engines", key, nil).List() {
			out[en["id"].(string)] = en["default"].(bool)
		}
		return out
	}
	e.Eventually(10*time.Second, "a is the default (paired first)", func() bool {
		return cmp.Equal(defaults(), map[string]bool{a.id: true, b.id: false})
	})
	for i := range 3 {
		if got := sendThrough(e, key, fmt.Sprintf("+1555002000%d", i), ""); got != a.id {
			t.Errorf("a new chat's send went through %s, want the default a", got)
		}
	}
	r := e.Do("POST", "/v1/engines/"+b.id+"/default", key, nil)
	if r.Status != 200 || r.Data()["default"] != true {
		t.Fatalf("set default = %d %s", r.Status, r.Raw)
	}
	if d := cmp.Diff(map[string]bool{a.id: false, b.id: true}, defaults()); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	if got := sendThrough(e, key, "+15550021000", ""); got != b.id {
		t.Errorf("a new chat's send went through %s, want the new default b", got)
	}
	if r := e.Do("POST", "/v1/engines/eng_missing/default", key, nil); r.Status != 404 {
		t.Errorf("default of an unknown engine = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("POST", "/v1/engines/"+b.id+"/default", e.NewKey("acme", "engines:read"), nil); r.Status != 403 {
		t.Errorf("default with engines:read = %d, want 403", r.Status)
	}
	// GraphQL shows and sets the same default.
	res := gql(e, key, `mutation($id: String!) { setDefaultEngine(id: $id) { id default } }`, map[string]any{"id": a.id})
	if len(res.Errors) > 0 || res.Data["setDefaultEngine"].(map[string]any)["default"] != true {
		t.Fatalf("setDefaultEngine = %+v", res)
	}
	// The default is a preference: while it is away, a new chat goes through b.
	a.stop()
	e.Eventually(10*time.Second, "a out of ping", func() bool { return !pinged(e, key, a.id) })
	if got := sendThrough(e, key, "+15550021001", ""); got != b.id {
		t.Errorf("with the default away a send went through %q, want b", got)
	}
}

// engineId is checked in the core: malformed 400, unknown or another
// workspace's 404, both naming engineId; REST and GraphQL alike.
func TestEngineIDValidation(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	theirs := createEngine(e, e.NewKey("other", "*"), "remote")["id"].(string)
	type outcome struct {
		Status int
		Code   string
		Paths  []string
	}
	cases := []struct {
		name, method, path string
		body               map[string]any
		want               outcome
	}{
		{"send malformed", "POST", "/v1/messages/+15550030000", map[string]any{"type": "text", "text": "x", "engineId": "not an id"},
			outcome{400, "invalid_request", []string{"engineId"}}},
		{"send unknown", "POST", "/v1/messages/+15550030000", map[string]any{"type": "text", "text": "x", "engineId": "eng_unknown"},
			outcome{404, "not_found", []string{"engineId"}}},
		{"send another workspace's", "POST", "/v1/messages/+15550030000", map[string]any{"type": "text", "text": "x", "engineId": theirs},
			outcome{404, "not_found", []string{"engineId"}}},
		{"schedule malformed", "POST", "/v1/scheduled-messages/+15550030000", map[string]any{"type": "text", "text": "x", "engineId": "eng_"},
			outcome{400, "invalid_request", []string{"engineId"}}},
		{"schedule another workspace's", "POST", "/v1/scheduled-messages/+15550030000", map[string]any{"type": "text", "text": "x", "engineId": theirs},
			outcome{404, "not_found", []string{"engineId"}}},
		{"messages filter malformed", "GET", "/v1/messages?engineId=x", nil, outcome{400, "invalid_request", []string{"engineId"}}},
		{"chats filter malformed", "GET", "/v1/chats?engineId=x", nil, outcome{400, "invalid_request", []string{"engineId"}}},
		{"contacts filter malformed", "GET", "/v1/contacts?engineId=x", nil, outcome{400, "invalid_request", []string{"engineId"}}},
		{"scheduled filter malformed", "GET", "/v1/scheduled-messages?engineId=x", nil, outcome{400, "invalid_request", []string{"engineId"}}},
	}
	for _, tc := range cases {
		r := e.Do(tc.method, tc.path, key, tc.body)
		code, _ := r.Error()["code"].(string)
		if d := cmp.Diff(tc.want, outcome{r.Status, code, r.DetailPaths()}); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	if n := listTotal(e, key, "/v1/scheduled-messages"); n != 0 {
		t.Errorf("refused sends stored %d messages", n)
	}
	// An edit names, changes or drops the engine of a message not sent yet.
	ours := createEngine(e, key, "remote")["id"].(string)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := e.Do("POST", "/v1/scheduled-messages/+15550030000", key, map[string]any{"type": "text", "text": "x", "sendAt": later, "engineId": ours})
	if r.Status != 201 || r.Data()["engineId"] != ours {
		t.Fatalf("schedule through ours = %d %s", r.Status, r.Raw)
	}
	path := "/v1/scheduled-messages/" + r.Data()["id"].(string)
	if r := e.Do("PATCH", path, key, map[string]any{"engineId": theirs}); r.Status != 404 {
		t.Errorf("edit to another workspace's engine = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("PATCH", path, key, map[string]any{"engineId": ""}); r.Status != 200 || r.Data()["engineId"] != nil {
		t.Errorf("edit dropping the engine = %d %s", r.Status, r.Raw)
	}
	if r := e.Do("PATCH", path, key, map[string]any{"text": "y"}); r.Status != 200 || r.Data()["engineId"] != nil {
		t.Errorf("edit of the text = %d %s, want no engine still", r.Status, r.Raw)
	}
	if r := e.Do("PATCH", path, key, map[string]any{"engineId": ours}); r.Status != 200 || r.Data()["engineId"] != ours {
		t.Errorf("edit naming the engine = %d %s", r.Status, r.Raw)
	}

	res := gql(e, key, `mutation($in: MessageInput!) { scheduleMessage(chatId: "+15550030000", input: $in) { message { id } } }`,
		map[string]any{"in": map[string]any{"type": "text", "text": "x", "engineId": theirs}})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "not_found" {
		t.Errorf("GraphQL another workspace's engine = %+v, want not_found", res.Errors)
	}
}
