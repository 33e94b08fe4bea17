// Command retention measures the periodic prune against a backlog: it fills a
// fresh database with records past their retention (and as many that are not),
// runs one prune, and reports how long it took and what it removed.
//
//	go run ./bench/retention -db postgres://postgres@127.0.0.1:5432/scratch?sslmode=disable -rows 50000
//
// The database must be empty or a scratch one: the program migrates it and
// leaves its rows behind.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/jobs"
	"github.com/switchboardhq/switchboard/jobs/jobstest"
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
	seed(ctx, client, now, *rows)
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
}

// seed writes n records past their retention and then n within it of every
// kind the prune removes.
func seed(ctx context.Context, c *ent.Client, now time.Time, n int) {
	hook := c.Webhook.Create().SetWorkspaceID(workspace).SetURL("https://example.com/hook").
		SetEvents([]string{"*"}).SetSecret("whsec_bench").SaveX(ctx)
	// The expired records are a millisecond apart, as records written one by
	// one are (those written in one batch share a time).
	stamp := func(i int, keep time.Duration) time.Time {
		if i < n {
			return now.Add(-keep - time.Hour - time.Duration(i)*time.Millisecond)
		}
		return now.Add(-time.Minute)
	}
	if err := jobstest.SeedRetained(ctx, c, workspace, hook.ID, 2*n, stamp); err != nil {
		log.Fatal(err)
	}
}
