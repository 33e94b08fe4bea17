package rest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent/inboxevent"
)

// Issue 32 row 4: an events frame of the welcome's maxBatch events, each
// an incoming media message with every field it can carry, is stored whole on
// the backend under test (SQLite, or PostgreSQL with TEST_DATABASE_URL): the
// inbox inserts it in chunks under each database's parameter limit.
func TestRemoteEngineFullBatchStored(t *testing.T) {
	e := remoteEnv(t)
	key := e.NewKey("acme", "*")
	eng := createEngine(e, key, "remote")
	s := dialEngine(t, e, eng["token"].(string))
	w := s.hello()
	if w.MaxBatch != remote.DefaultMaxBatch {
		t.Fatalf("welcome maxBatch = %d, want %d", w.MaxBatch, remote.DefaultMaxBatch)
	}
	evs := make([]any, w.MaxBatch)
	for i := range evs {
		k := engine.Key{Remote: "15550207777@c.us", ID: fmt.Sprintf("3EB0FULL%d", i), Participant: ""}
		evs[i] = map[string]any{"id": fmt.Sprintf("full-%d", i), "type": "message", "at": "2026-11-26T10:00:00Z",
			"message": map[string]any{"key": k, "from": k.Remote, "type": "media", "text": "caption " + fmt.Sprint(i),
				"pushName": "Ann", "forwarded": true, "quotedId": "3EB0Q",
				"media": map[string]any{"kind": "image", "mimeType": "image/jpeg", "size": 48213, "width": 1280, "height": 960,
					"sha256": strings.Repeat("9f", 32), "caption": "caption", "fileName": "pic.jpg", "ref": "cmVm"}}}
	}
	if ack := s.events("evb_full", evs); ack.Error != nil || ack.Rejected != nil {
		t.Fatalf("a frame of maxBatch events: error %+v, rejected %d (first %+v)", ack.Error, len(ack.Rejected), ack.Rejected)
	}
	ws := mustWorkspace(t, e, key)
	n, err := e.App.Client.InboxEvent.Query().Where(inboxevent.WorkspaceID(ws), inboxevent.TypeEQ("message")).Count(systemCtx())
	if err != nil || n != w.MaxBatch {
		t.Errorf("stored %d (%v), want %d", n, err, w.MaxBatch)
	}
}
