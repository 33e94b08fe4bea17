package app_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app"
	"github.com/switchboardhq/switchboard/app/apptest"
	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

// The worker's loops are woken by PostgreSQL notifications: a webhook event
// another replica records is fanned out long before the 30 s sweep. On SQLite
// and for the API role there is no listener.
func TestWakeListener(t *testing.T) {
	postgres := os.Getenv("TEST_DATABASE_URL") != ""
	for _, role := range []string{app.RoleAll, app.RoleWorker, app.RoleAPI} {
		t.Run(role, func(t *testing.T) {
			e := apptest.New(t, apptest.Options{RedisDB: 4, Configure: func(c *app.Config) { c.Role = role }})
			if got, want := e.App.Wake != nil, postgres && role != app.RoleAPI; got != want {
				t.Fatalf("listener running = %t, want %t", got, want)
			}
			if e.App.Wake == nil {
				return
			}
			deadline := time.Now().Add(10 * time.Second) // a third of the sweep
			for e.App.Wake.Sweeps() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the listener did not connect")
				}
				time.Sleep(5 * time.Millisecond)
			}
			replica, err := storage.Open(e.Config.DatabaseURL)
			if err != nil {
				t.Fatal(err)
			}
			defer replica.Close()
			sys := viewer.SystemContext(context.Background())
			rec, err := replica.Event.Create().SetWorkspaceID("default").SetType("message.delivered").
				SetData(json.RawMessage(`{}`)).Save(sys)
			if err != nil {
				t.Fatal(err)
			}
			for {
				done, err := e.App.Client.Event.Query().Where(event.ID(rec.ID), event.FannedOutAtNotNil()).Exist(sys)
				if err != nil {
					t.Fatal(err)
				}
				if done {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("an event recorded by another connection was not fanned out within 10 s")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
