package rest_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/apptest"
)

type gqlResult struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func gql(e *apptest.Env, key, query string, vars map[string]any) gqlResult {
	e.T.Helper()
	resp := e.Do("POST", "/graphql", key, map[string]any{"query": query, "variables": vars})
	var out gqlResult
	if err := json.Unmarshal(resp.Raw, &out); err != nil {
		e.T.Fatalf("graphql: %d %s", resp.Status, resp.Raw)
	}
	return out
}

func TestGraphQLSharesTheCore(t *testing.T) {
	e := newEnv(t)
	res := gql(e, e.Key, `mutation($in: MessageInput!) {
		scheduleMessage(chatId: "+15550002020", input: $in, idempotencyKey: "g-1") { replayed message { id status to type } }
	}`, map[string]any{"in": map[string]any{"type": "text", "text": "from graphql"}})
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	msg := res.Data["scheduleMessage"].(map[string]any)["message"].(map[string]any)
	id := msg["id"].(string)
	if msg["to"] != "15550002020@c.us" || msg["status"] != "pending" {
		t.Errorf("message = %v", msg)
	}
	// REST sees what GraphQL created, and vice versa.
	waitStatus(e, id, "read")
	res = gql(e, e.Key, `{ account { id name } scheduledMessages(limit: 10) { total items { id status ack waMessageKey { serialized fromMe } } }
		messages(first: 5, where: {status: "read"}) { totalCount edges { node { id } } } }`, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	page := res.Data["scheduledMessages"].(map[string]any)
	item := page["items"].([]any)[0].(map[string]any)
	if page["total"] != float64(1) || item["id"] != id || item["ack"] != float64(3) || item["waMessageKey"] == nil {
		t.Errorf("scheduledMessages = %v", page)
	}
	if conn := res.Data["messages"].(map[string]any); conn["totalCount"] != float64(1) {
		t.Errorf("messages connection = %v", conn)
	}

	// Validation and scope errors carry the same codes as REST.
	res = gql(e, e.Key, `mutation { scheduleMessage(chatId: "+15550002020", input: {type: "text"}) { message { id } } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "validation_failed" || res.Errors[0].Extensions["details"] == nil {
		t.Errorf("validation error = %+v", res.Errors)
	}
	reader := e.NewKey("default", "messages:read")
	res = gql(e, reader, `mutation { cancelScheduledMessage(id: "`+id+`") { deleted } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "insufficient_scope" {
		t.Errorf("scope error = %+v", res.Errors)
	}
	// Another workspace cannot reach the message through node() either.
	other := e.NewKey("acme", "*")
	res = gql(e, other, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
	if res.Data["node"] != nil {
		t.Errorf("node from another workspace = %v", res.Data)
	}
}

func TestGraphiQLOnBrowserGet(t *testing.T) {
	e := newEnv(t)
	// The page needs no key; the queries it sends do.
	resp := e.Do("GET", "/graphql", "", nil, "Accept", "text/html")
	if resp.Status != 200 || !strings.Contains(string(resp.Raw), "<html") {
		t.Errorf("GET /graphql = %d", resp.Status)
	}
	if r := e.Do("GET", "/graphql?query={account{id}}", "", nil); r.Status != 401 {
		t.Errorf("query without a key = %d, want 401", r.Status)
	}
	if r := e.Do("POST", "/graphql", "", map[string]any{"query": "{ account { id } }"}); r.Status != 401 {
		t.Errorf("POST without a key = %d, want 401", r.Status)
	}
}

func TestGraphQLWebhookDeliveriesAndAttempts(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(n int) int {
		if n == 0 {
			return 500
		}
		return 200
	})
	res := gql(e, e.Key, `mutation($in: WebhookInput!) { createWebhook(input: $in) { secret webhook { id status events } } }`,
		map[string]any{"in": map[string]any{"url": rc.URL, "events": []string{"message.queued"}}})
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	hookID := res.Data["createWebhook"].(map[string]any)["webhook"].(map[string]any)["id"].(string)
	scheduleMsg(e, "+15550505050")
	e.Eventually(5*time.Second, "the first attempt", func() bool { return len(rc.all()) == 1 })
	page := e.Do("GET", "/v1/webhooks/"+hookID+"/deliveries", e.Key, nil).List()
	if len(page) != 1 {
		t.Fatalf("deliveries = %v", page)
	}
	res = gql(e, e.Key, `mutation($w: ID!, $d: ID!) { redeliverWebhookDelivery(webhookId: $w, deliveryId: $d) { id status } }`,
		map[string]any{"w": hookID, "d": page[0]["id"]})
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	e.Eventually(5*time.Second, "the redelivery", func() bool { return len(rc.all()) == 2 })
	var conn map[string]any
	e.Eventually(5*time.Second, "the attempt log", func() bool {
		res = gql(e, e.Key, `{ webhooks(first: 5) { totalCount edges { node { id consecutiveFailures
			deliveries(first: 10) { totalCount edges { node { id status attempts attemptLog { number statusCode success } } } } } } } }`, nil)
		if len(res.Errors) > 0 {
			t.Fatalf("errors: %+v", res.Errors)
		}
		node := res.Data["webhooks"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)
		conn = node["deliveries"].(map[string]any)
		return conn["totalCount"] == float64(2) && node["consecutiveFailures"] == float64(0)
	})
	statuses := map[string]bool{}
	for _, edge := range conn["edges"].([]any) {
		d := edge.(map[string]any)["node"].(map[string]any)
		statuses[d["status"].(string)] = true
		if len(d["attemptLog"].([]any)) != int(d["attempts"].(float64)) {
			t.Errorf("attempt log does not match attempts: %v", d)
		}
	}
	if !statuses["succeeded"] || !statuses["pending"] {
		t.Errorf("delivery statuses = %v, want one pending retry and one succeeded redelivery", statuses)
	}
}
