package rest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardhq/switchboard/auth"
)

// Keys are checked from memory; a revocation announced through Redis is refused at
// once, and one that no replica heard of within the key TTL.
func TestRevokedKeyIsRefusedAcrossTheCache(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, announce := range []bool{true, false} {
		key := e.NewKey("default", "account:read")
		if r := e.Do("GET", "/v1/account", key, nil); r.Status != 200 {
			t.Fatalf("fresh key = %d", r.Status)
		}
		rec, err := auth.RevokeKey(ctx, e.App.Client, key)
		if err != nil {
			t.Fatal(err)
		}
		if announce {
			if err := auth.AnnounceRevoked(ctx, e.App.Redis, rec.Hash); err != nil {
				t.Fatal(err)
			}
			e.Eventually(2*time.Second, "the announced revocation to be heard", func() bool {
				return e.Do("GET", "/v1/account", key, nil).Status == 401
			})
			continue
		}
		revokedAt := time.Now()
		e.Eventually(5*time.Second, "the key TTL to run out", func() bool {
			return e.Do("GET", "/v1/account", key, nil).Status == 401
		})
		if d := time.Since(revokedAt); d > auth.DefaultKeyTTL+2*time.Second {
			t.Errorf("a revoked key was accepted for %s", d)
		}
	}
}

// A key revokes only keys whose scopes it holds, as it creates only such keys: a
// keys:write key cannot revoke the workspace's * key (issue 26, row 9).
func TestRevokeNeedsTheRevokedKeysScopes(t *testing.T) {
	e := newEnv(t)
	star := e.NewKey("default", "*")
	writer := e.NewKey("default", "keys:write")
	writerReader := e.NewKey("default", "keys:write", "messages:read")
	type outcome struct{ Code, Paths string }
	cases := []struct {
		name        string
		by, target  string
		want        outcome
		targetWorks bool
	}{
		{"keys:write cannot revoke *", writer, star, outcome{"insufficient_scope", "scopes[0]"}, true},
		{"keys:write cannot revoke a key with more scopes", writer, e.NewKey("default", "messages:read", "keys:write"), outcome{"insufficient_scope", "scopes[0]"}, true},
		{"cannot revoke operator without it", star, e.NewKey("default", "operator"), outcome{"insufficient_scope", "scopes[0]"}, true},
		{"revokes a key with scopes it holds", writerReader, e.NewKey("default", "messages:read"), outcome{}, false},
		{"* revokes any workspace key", star, e.NewKey("default", "chats:read", "keys:write"), outcome{}, false},
		{"a key revokes itself", writer, writer, outcome{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := keyID(t, e, e.Key, tc.target)
			res := gql(e, tc.by, `mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }`, map[string]any{"id": id})
			var got outcome
			if len(res.Errors) > 0 {
				got.Code, _ = res.Errors[0].Extensions["code"].(string)
				details, _ := res.Errors[0].Extensions["details"].([]any)
				var paths []string
				for _, d := range details {
					paths = append(paths, d.(map[string]any)["path"].(string))
				}
				got.Paths = strings.Join(paths, ",")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("revokeApiKey (-want +got):\n%s", diff)
			}
			if tc.targetWorks {
				if r := e.Do("GET", "/v1/ping", tc.target, nil); r.Status != 200 {
					t.Errorf("the key that was not revoked = %d", r.Status)
				}
				return
			}
			e.Eventually(3*time.Second, "the revoked key to be refused", func() bool {
				return e.Do("GET", "/v1/ping", tc.target, nil).Status == 401
			})
		})
	}
}
