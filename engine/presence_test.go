package engine

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestPresenceBeatListReap(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	p := NewPresence(redis.NewClient(&redis.Options{Addr: m.Addr()}), time.Minute)
	c := Connection{ID: "eng-1", Kind: KindGateway}
	if fresh, err := p.Beat(ctx, "ws_a", c); err != nil || !fresh {
		t.Fatalf("first beat = %v, %v; want fresh", fresh, err)
	}
	if fresh, _ := p.Beat(ctx, "ws_a", c); fresh {
		t.Errorf("second beat reported fresh")
	}
	if list, _ := p.List(ctx, "ws_a"); len(list) != 1 || list[0] != c {
		t.Errorf("List = %v", list)
	}
	if list, _ := p.List(ctx, "ws_b"); len(list) != 0 {
		t.Errorf("another workspace sees %v", list)
	}
	if lapses, _ := p.Reap(ctx, time.Now()); len(lapses) != 0 {
		t.Errorf("reaped a live engine: %v", lapses)
	}
	later := time.Now().Add(2 * time.Minute)
	lapses, err := p.Reap(ctx, later)
	if err != nil || len(lapses) != 1 || lapses[0].WorkspaceID != "ws_a" || lapses[0].Connection != c {
		t.Fatalf("Reap = %v, %v", lapses, err)
	}
	if again, _ := p.Reap(ctx, later); len(again) != 0 {
		t.Errorf("a lapse was reaped twice")
	}
	if list, _ := p.List(ctx, "ws_a"); len(list) != 0 {
		t.Errorf("reaped engine still listed: %v", list)
	}
	// A goodbye removes it from the reaper's index too.
	_, _ = p.Beat(ctx, "ws_a", c)
	_ = p.Leave(ctx, "ws_a", c)
	if lapses, _ := p.Reap(ctx, later); len(lapses) != 0 {
		t.Errorf("an engine that left was reaped: %v", lapses)
	}
}
