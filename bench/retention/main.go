// Command retention measures the periodic prune against a backlog: it fills a
// fresh database with records past their retention (and as many that are not),
// runs one prune, and reports how long it took, what it removed, and how long a
// page of deliveries with their attempt logs takes to read afterwards.
//
//	go run ./bench/retention -db postgres://postgres@127.0.0.1:5432/scratch?sslmode=disable -rows 50000
//
// The database must be empty or a scratch one: the program migrates it and
// leaves its rows behind.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
)

const workspace = "ws_bench"

func main() {
	dir, _ := os.MkdirTemp("", "retention")
	defer os.RemoveAll(dir)
	dbURL := flag.String("db", "sqlite://"+dir+"/sb.db", "database URL")
	rows := flag.Int("rows", 50000, "expired records of each kind (as many recent ones are kept)")
	seedOnly := flag.Bool("seed-only", false, "seed and stop, to read the prune's plans with EXPLAIN")
	flag.Parse()

	ctx := viewer.SystemContext(context.Background())
	client, err := storage.Open(*dbURL)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if err := storage.Migrate(ctx, client, *dbURL); err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	start := time.Now()
	hook := seed(ctx, client, now, *rows)
	fmt.Printf("seeded %d expired and %d recent records of each kind in %s\n", *rows, *rows, time.Since(start).Round(time.Millisecond))
	if *seedOnly {
		return
	}

	h := &jobs.Handlers{Client: client}
	start = time.Now()
	p, err := h.Prune(ctx, now)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("prune: %s, removed %+v\n", time.Since(start).Round(time.Millisecond), p)

	// What the deliveries page reads: a page with each delivery's attempt log.
	start = time.Now()
	page, err := client.Delivery.Query().Where(delivery.WebhookID(hook)).WithAttemptLog().
		Order(ent.Desc(delivery.FieldCreatedAt), ent.Desc(delivery.FieldID)).Limit(50).All(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("a page of %d deliveries with their attempts: %s\n", len(page), time.Since(start).Round(time.Microsecond))
}

// seed writes n records past their retention and n within it for every table
// the prune reads, and returns the webhook the deliveries belong to.
func seed(ctx context.Context, c *ent.Client, now time.Time, n int) string {
	const chunk = 500
	old := func(keep time.Duration) time.Time { return now.Add(-keep - time.Hour) }
	fresh := now.Add(-time.Minute)
	wh := c.Webhook.Create().SetWorkspaceID(workspace).SetURL("https://example.com/hook").
		SetEvents([]string{"*"}).SetSecret("whsec_bench").SaveX(ctx)
	data := json.RawMessage(`{"x":1}`)
	for base := 0; base < 2*n; base += chunk {
		var (
			keys     []*ent.IdempotencyKeyCreate
			events   []*ent.EventCreate
			inbox    []*ent.InboxEventCreate
			dlvs     []*ent.DeliveryCreate
			attempts []*ent.DeliveryAttemptCreate
		)
		for i := base; i < min(base+chunk, 2*n); i++ {
			expired := i < n
			at := func(keep time.Duration) time.Time {
				if expired {
					return old(keep)
				}
				return fresh
			}
			keys = append(keys, c.IdempotencyKey.Create().SetWorkspaceID(workspace).SetKey(fmt.Sprintf("k%d", i)).
				SetRequestHash("h").SetMessageID("msg").SetResponse([]byte("{}")).SetCreatedAt(at(jobs.KeepIdempotencyKeys)))
			events = append(events, c.Event.Create().SetWorkspaceID(workspace).SetType("message.sent").SetData(data).
				SetFannedOutAt(at(jobs.KeepEvents)))
			ev := c.InboxEvent.Create().SetWorkspaceID(workspace).SetDedupeKey(fmt.Sprintf("d%d", i)).SetType("ack").
				SetSubject(fmt.Sprintf("message:%d", i)).SetPayload(data).SetAt(fresh)
			if i%10 == 0 {
				ev.SetDeadAt(at(jobs.KeepDeliveries)).SetLastError("gave up")
			} else {
				ev.SetAppliedAt(at(jobs.KeepEvents))
			}
			inbox = append(inbox, ev)
			if i%4 == 0 { // a delivery with four attempts: as many attempts as rows
				id := fmt.Sprintf("dlv_%09d", i)
				ended := at(jobs.KeepDeliveries)
				dlvs = append(dlvs, c.Delivery.Create().SetID(id).SetWorkspaceID(workspace).SetWebhookID(wh.ID).
					SetEventID("evt").SetEventType("message.sent").SetPayload(data).SetStatus(jobs.DeliverySucceeded).
					SetAttempts(4).SetCreatedAt(ended).SetUpdatedAt(ended))
				for k := 1; k <= 4; k++ {
					attempts = append(attempts, c.DeliveryAttempt.Create().SetWorkspaceID(workspace).SetDeliveryID(id).
						SetWebhookID(wh.ID).SetNumber(k).SetAt(ended).SetLatencyMs(1).SetSuccess(k == 4))
				}
			}
		}
		c.IdempotencyKey.CreateBulk(keys...).ExecX(ctx)
		c.Event.CreateBulk(events...).ExecX(ctx)
		c.InboxEvent.CreateBulk(inbox...).ExecX(ctx)
		c.Delivery.CreateBulk(dlvs...).ExecX(ctx)
		c.DeliveryAttempt.CreateBulk(attempts...).ExecX(ctx)
	}
	return wh.ID
}
