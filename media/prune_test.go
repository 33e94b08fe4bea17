package media

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "modernc.org/sqlite"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/viewer"
)

// Prune deletes the expired media no waiting message points at and keeps the
// rest; when nothing has expired, it reads no message at all (the waiting
// messages may be many).
func TestPrune(t *testing.T) {
	ctx := viewer.SystemContext(context.Background())
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "media.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	var messageReads atomic.Int32
	client := ent.NewClient(ent.Driver(dialect.DebugWithContext(entsql.OpenDB(dialect.SQLite, db),
		func(_ context.Context, args ...any) {
			if s := fmt.Sprint(args...); strings.Contains(s, "driver.Query") && strings.Contains(s, "FROM `messages`") {
				messageReads.Add(1)
			}
		})))
	defer client.Close()
	if err := client.Schema.Create(ctx); err != nil {
		t.Fatal(err)
	}
	uploaded := time.Now()
	for _, token := range []string{"waited", "done"} {
		client.Media.Create().SetWorkspaceID("ws1").SetToken(token).SetContentType("image/png").SetSize(1).
			SetData([]byte("x")).SetCreatedAt(uploaded).SaveX(ctx)
	}
	// A scheduled message still waits for the first; the second is sent.
	client.Message.Create().SetWorkspaceID("ws1").SetOrigin(message.OriginScheduled).SetTo("15550001111@s.whatsapp.net").
		SetType("image").SetMediaURL("https://switchboard.example/media/waited/a.png").SaveX(ctx)
	messageReads.Store(0)
	store := NewStore(client, "https://switchboard.example")

	if n, err := store.Prune(ctx, uploaded.Add(-time.Minute)); err != nil || n != 0 || messageReads.Load() != 0 {
		t.Fatalf("nothing expired: Prune = %d, %v after %d reads of messages; want 0, none", n, err, messageReads.Load())
	}
	if n, err := store.Prune(ctx, uploaded.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("both expired: Prune = %d, %v; want 1", n, err)
	}
	left := client.Media.Query().Select("token").StringsX(ctx)
	if !slices.Equal(left, []string{"waited"}) {
		t.Errorf("media left %v, want [waited]", left)
	}
}
