package rest_test

import (
	"context"
	"testing"

	"github.com/switchboardhq/switchboard/ent/event"
	"github.com/switchboardhq/switchboard/viewer"

	"github.com/switchboardhq/switchboard/app/apptest"
)

// redisDB is this package's database index on TEST_REDIS_URL.
const redisDB = 1

func newEnv(t *testing.T) *apptest.Env {
	t.Helper()
	return apptest.New(t, apptest.Options{RedisDB: redisDB})
}

func countEvents(e *apptest.Env, typ string) int {
	n, err := e.App.Client.Event.Query().Where(event.Type(typ)).Count(systemCtx())
	if err != nil {
		e.T.Fatal(err)
	}
	return n
}

func systemCtx() context.Context { return viewer.SystemContext(context.Background()) }
