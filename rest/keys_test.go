package rest_test

import (
	"context"
	"testing"
	"time"

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
