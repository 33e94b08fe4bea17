package rest_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/auth"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	revoked := e.NewKey("default", "*")
	if _, err := auth.RevokeKey(context.Background(), e.App.Client, revoked); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		header   string
		wantCode int
		wantErr  string
		wantMsg  string // a word the message must contain
	}{
		{"missing", "", 401, "authentication_required", "Missing"},
		{"not bearer", "Basic abc", 401, "authentication_required", "Missing"},
		{"unknown", "Bearer sb_live_doesnotexist", 401, "authentication_required", "Unknown"},
		{"malformed", "Bearer hello", 401, "authentication_required", "Malformed"},
		{"revoked", "Bearer " + revoked, 401, "authentication_required", "revoked"},
		{"valid", "Bearer " + e.Key, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, e.Server.URL+"/v1/ping", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp := e.Send(req)
			if resp.Status != tt.wantCode {
				t.Fatalf("status = %d, want %d: %s", resp.Status, tt.wantCode, resp.Raw)
			}
			if tt.wantErr != "" {
				if got := resp.Error()["code"]; got != tt.wantErr {
					t.Errorf("code = %v, want %s", got, tt.wantErr)
				}
				if msg, _ := resp.Error()["message"].(string); !strings.Contains(msg, tt.wantMsg) {
					t.Errorf("message = %q, want it to say %q", msg, tt.wantMsg)
				}
				if resp.Body["success"] != false || resp.Error()["requestId"] == "" {
					t.Errorf("bad error envelope: %s", resp.Raw)
				}
			}
		})
	}
}

func TestScopes(t *testing.T) {
	e := newEnv(t)
	readOnly := e.NewKey("default", "messages:read")
	noScopes := e.NewKey("default", "groups:read")
	tests := []struct {
		method, path, key string
		body              any
		want              int
		scope             string
	}{
		{"GET", "/v1/ping", noScopes, nil, 200, ""},
		{"GET", "/v1/account", noScopes, nil, 403, "account:read"},
		{"GET", "/v1/scheduled-messages", noScopes, nil, 403, "messages:read"},
		{"GET", "/v1/scheduled-messages", readOnly, nil, 200, ""},
		{"POST", "/v1/scheduled-messages/+15551234567", readOnly, map[string]any{"type": "text", "text": "hi"}, 403, "messages:write"},
		{"POST", "/v1/messages/+15551234567", readOnly, map[string]any{"type": "text", "text": "hi"}, 403, "messages:write"},
		{"GET", "/v1/messages/true_1@c.us_X", readOnly, nil, 403, "chats:read"},
		{"DELETE", "/v1/scheduled-messages/msg_x", readOnly, nil, 403, "messages:write"},
		{"GET", "/monitoring/", readOnly, nil, 403, "operator"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp := e.Do(tt.method, tt.path, tt.key, tt.body)
			if resp.Status != tt.want {
				t.Fatalf("status = %d, want %d: %s", resp.Status, tt.want, resp.Raw)
			}
			if tt.scope != "" && !strings.Contains(resp.Error()["message"].(string), tt.scope) {
				t.Errorf("error does not name scope %s: %s", tt.scope, resp.Raw)
			}
		})
	}
}

// The queue monitor sees every workspace: it is for operators only. A workspace's
// keys, even "*" or admin ones, never open it; an operator key opens it read-only and
// the operator token read-write.
func TestMonitoringIsForOperators(t *testing.T) {
	const token = "op-secret-token-for-the-monitor"
	e := apptest.New(t, apptest.Options{RedisDB: redisDB, Configure: func(c *app.Config) { c.OperatorToken = token }})
	operator := e.NewKey("ops", "operator")
	admin := e.NewKey("default", "admin")
	basic := func(pass string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("op:"+pass)) }
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		{"no credential", "GET", "/monitoring/api/queues", "", 401},
		{"all-scopes key", "GET", "/monitoring/api/queues", "Bearer " + e.Key, 403},
		{"admin key", "GET", "/monitoring/api/queues", "Bearer " + admin, 403},
		{"wrong token", "GET", "/monitoring/api/queues", basic("guess"), 401},
		{"operator key reads", "GET", "/monitoring/api/queues", "Bearer " + operator, 200},
		{"operator key in a browser", "GET", "/monitoring/api/queues", basic(operator), 200},
		{"operator key cannot pause", "POST", "/monitoring/api/queues/messages:pause", "Bearer " + operator, 405},
		{"token reads", "GET", "/monitoring/api/queues", "Bearer " + token, 200},
		{"token pauses", "POST", "/monitoring/api/queues/messages:pause", basic(token), 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, e.Server.URL+tt.path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp := e.Send(req)
			if resp.Status != tt.want {
				t.Fatalf("status = %d, want %d: %.300s", resp.Status, tt.want, resp.Raw)
			}
			if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("401 without a Basic challenge: %v", resp.Header)
			}
			if tt.want >= 400 && tt.want != 405 && resp.Error()["code"] == nil {
				t.Errorf("not the error envelope: %s", resp.Raw)
			}
		})
	}
}

func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	other := e.NewKey("acme", "*")
	created := e.Do("POST", "/v1/scheduled-messages/+15551234567", e.Key, map[string]any{"type": "text", "text": "secret plans"})
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	id := created.Data()["id"].(string)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/scheduled-messages/" + id},
		{"PATCH", "/v1/scheduled-messages/" + id},
		{"DELETE", "/v1/scheduled-messages/" + id},
	} {
		var body any
		if tc.method == "PATCH" {
			body = map[string]any{"text": "hijacked"}
		}
		if resp := e.Do(tc.method, tc.path, other, body); resp.Status != 404 {
			t.Errorf("%s %s from another workspace = %d, want 404: %s", tc.method, tc.path, resp.Status, resp.Raw)
		}
	}
	list := e.Do("GET", "/v1/scheduled-messages", other, nil)
	if list.Body["total"].(float64) != 0 {
		t.Errorf("other workspace lists %v messages, want 0", list.Body["total"])
	}
	acct := e.Do("GET", "/v1/account", other, nil)
	if acct.Data()["name"] != "acme" {
		t.Errorf("account = %v", acct.Data())
	}
	// The message's key is only visible to its own workspace too.
	e.Eventually(5e9, "confirmation", func() bool {
		return e.Do("GET", "/v1/scheduled-messages/"+id, e.Key, nil).Data()["waMessageKey"] != nil
	})
	key := e.Do("GET", "/v1/scheduled-messages/"+id, e.Key, nil).Data()["waMessageKey"].(map[string]any)["_serialized"].(string)
	if resp := e.Do("GET", "/v1/messages/"+key, other, nil); resp.Status != 404 {
		t.Errorf("GET /v1/messages from another workspace = %d, want 404", resp.Status)
	}
	if resp := e.Do("GET", "/v1/messages/"+key, e.Key, nil); resp.Status != 200 {
		t.Errorf("GET /v1/messages own = %d: %s", resp.Status, resp.Raw)
	}
}

func TestUnknownRoutes(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/nope", 404},
		{"PUT", "/v1/ping", 405},
		{"GET", "/nothing", 404},
	} {
		resp := e.Do(tc.method, tc.path, e.Key, nil)
		if resp.Status != tc.want || resp.Body["success"] != false || resp.Error()["code"] == nil {
			t.Errorf("%s %s = %d %s, want %d with the error envelope", tc.method, tc.path, resp.Status, resp.Raw, tc.want)
		}
	}
}
