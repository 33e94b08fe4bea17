package app_test

import (
	"context"
	"os"
	"testing"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/auth"
	"github.com/switchboardhq/switchboard/viewer"
)

// The bootstrap key is made on the first start of the embedded default only (or
// when asked for), never by a worker, never once a key existed.
func TestBootstrap(t *testing.T) {
	// apptest runs on PostgreSQL when TEST_DATABASE_URL is set, else on SQLite.
	sqlite := os.Getenv("TEST_DATABASE_URL") == ""
	tests := []struct {
		name      string
		role      string
		flag      bool
		revokeAll bool
		want      bool
	}{
		{"first start", app.RoleAll, false, false, sqlite},
		{"first start, asked for", app.RoleAll, true, false, true},
		{"api role, asked for", app.RoleAPI, true, false, true},
		{"worker", app.RoleWorker, true, false, false},
		{"every key revoked", app.RoleAll, true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := apptest.New(t, apptest.Options{RedisDB: 4, NoStart: true, Configure: func(c *app.Config) {
				c.Role, c.BootstrapKey = tt.role, tt.flag
			}})
			ctx := context.Background()
			keys, err := auth.ListKeys(ctx, e.App.Client)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys { // apptest made one; start from an empty database
				if tt.revokeAll {
					_, err = auth.RevokeKey(ctx, e.App.Client, k.ID)
				} else {
					err = e.App.Client.APIKey.DeleteOneID(k.ID).Exec(viewer.SystemContext(ctx))
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			key, err := e.App.Bootstrap(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := key != ""; got != tt.want {
				t.Errorf("bootstrap key made = %v, want %v", got, tt.want)
			}
		})
	}
}
