package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/storage/storagetest"
	"github.com/switchboardhq/switchboard/viewer"
	"github.com/switchboardhq/switchboard/webhook"
)

func openClient(t *testing.T) *ent.Client {
	t.Helper()
	client, _ := storagetest.SQLite(t)
	return client
}

func remembered(workspaceID string) bool {
	subscriptions.Lock()
	defer subscriptions.Unlock()
	_, ok := subscriptions.byWorkspace[workspaceID]
	return ok
}

// A change announced by another replica is forgotten here at once, not after
// the TTL: an event that happens after the change's answer is recorded.
func TestAnnouncedChangeIsForgotten(t *testing.T) {
	const ws = "ws_announced"
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	client := openClient(t)
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	lctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Listen(lctx, rdb)

	if wanted, err := Wants(ctx, client.Webhook, ws, webhook.EventMessageRead); err != nil || wanted {
		t.Fatalf("Wants before any webhook = %v, %v", wanted, err)
	}
	// Another replica creates a webhook: this process still remembers none.
	if err := client.Webhook.Create().SetURL("https://example.com/h").SetEvents([]string{webhook.EventMessageRead}).
		SetSecret("whsec_x").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if wanted, _ := Wants(ctx, client.Webhook, ws, webhook.EventMessageRead); wanted {
		t.Fatal("the memory was not in use: the test shows nothing")
	}
	// ... and announces it, as Announce does on that replica.
	for deadline := time.Now().Add(5 * time.Second); remembered(ws); {
		if err := rdb.Publish(context.Background(), ChangedChannel, ws).Err(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the announced change was never forgotten")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if wanted, err := Wants(ctx, client.Webhook, ws, webhook.EventMessageRead); err != nil || !wanted {
		t.Fatalf("Wants after the announcement = %v, %v", wanted, err)
	}
}

// A read of the webhooks that began before a change was forgotten is not
// remembered: it may predate the change.
func TestReadOverlappingAChangeIsNotRemembered(t *testing.T) {
	const ws = "ws_overlap"
	ctx := viewer.WorkspaceContext(context.Background(), ws)
	client := openClient(t)
	// The change commits and is forgotten while the read is under way (after
	// the read saw the table as it was).
	client.Intercept(ent.InterceptFunc(func(next ent.Querier) ent.Querier {
		return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
			v, err := next.Query(ctx, q)
			if _, ok := q.(*ent.WebhookQuery); ok {
				Forget(ws)
			}
			return v, err
		})
	}))
	if _, err := Wants(ctx, client.Webhook, ws, webhook.EventMessageRead); err != nil {
		t.Fatal(err)
	}
	if remembered(ws) {
		t.Error("a read that overlapped a change was remembered")
	}
}
