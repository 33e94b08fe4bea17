package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Connection is one live engine session as presence reports it.
type Connection struct {
	ID   string
	Kind string
}

// Presence records which engines are live, in Redis, so that every replica sees the
// same engines. Each workspace has a sorted set whose members are "<kind>|<id>" and
// whose scores are the moment (Unix ms) the member's heartbeat lapses.
type Presence struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

// NewPresence returns a Presence whose heartbeats last ttl.
func NewPresence(rdb redis.UniversalClient, ttl time.Duration) *Presence {
	return &Presence{rdb: rdb, ttl: ttl}
}

// TTL is how long one heartbeat keeps an engine listed.
func (p *Presence) TTL() time.Duration { return p.ttl }

func presenceKey(workspaceID string) string { return "switchboard:presence:" + workspaceID }

// indexKey is a sorted set of every live engine of every workspace, members
// "<workspace>|<kind>|<id>", scored like the per-workspace sets; Reap reads it.
const indexKey = "switchboard:presence-index"

// Beat marks the engine live for another TTL. It reports whether the engine was not
// live before (a new or lapsed session).
func (p *Presence) Beat(ctx context.Context, workspaceID string, c Connection) (bool, error) {
	now := time.Now()
	member := c.Kind + "|" + c.ID
	key := presenceKey(workspaceID)
	prev, err := p.rdb.ZScore(ctx, key, member).Result()
	if err != nil && err != redis.Nil {
		return false, err
	}
	fresh := err == redis.Nil || int64(prev) < now.UnixMilli()
	expiry := float64(now.Add(p.ttl).UnixMilli())
	pipe := p.rdb.TxPipeline()
	pipe.ZAdd(ctx, key, redis.Z{Score: expiry, Member: member})
	pipe.PExpire(ctx, key, 2*p.ttl)
	pipe.ZAdd(ctx, indexKey, redis.Z{Score: expiry, Member: workspaceID + "|" + member})
	_, err = pipe.Exec(ctx)
	return fresh, err
}

// Leave removes the engine at once.
func (p *Presence) Leave(ctx context.Context, workspaceID string, c Connection) error {
	member := c.Kind + "|" + c.ID
	pipe := p.rdb.TxPipeline()
	pipe.ZRem(ctx, presenceKey(workspaceID), member)
	pipe.ZRem(ctx, indexKey, workspaceID+"|"+member)
	_, err := pipe.Exec(ctx)
	return err
}

// Lapse is an engine whose heartbeat stopped without a goodbye (its process died).
type Lapse struct {
	WorkspaceID string
	Connection
}

// Reap removes the engines whose heartbeat lapsed before now and returns them.
// Each lapse is returned to exactly one caller, however many replicas reap.
func (p *Presence) Reap(ctx context.Context, now time.Time) ([]Lapse, error) {
	max := strconv.FormatInt(now.UnixMilli(), 10)
	members, err := p.rdb.ZRangeByScore(ctx, indexKey, &redis.ZRangeBy{Min: "-inf", Max: max, Count: 500}).Result()
	if err != nil {
		return nil, err
	}
	var out []Lapse
	for _, m := range members {
		n, err := p.rdb.ZRem(ctx, indexKey, m).Result()
		if err != nil {
			return out, err
		}
		parts := strings.SplitN(m, "|", 3)
		if n == 0 || len(parts) != 3 {
			continue // another replica reaped it
		}
		l := Lapse{WorkspaceID: parts[0], Connection: Connection{Kind: parts[1], ID: parts[2]}}
		if err := p.rdb.ZRem(ctx, presenceKey(l.WorkspaceID), l.Kind+"|"+l.ID).Err(); err != nil {
			return out, err
		}
		out = append(out, l)
	}
	return out, nil
}

// List returns the engines of a workspace whose heartbeat is live.
func (p *Presence) List(ctx context.Context, workspaceID string) ([]Connection, error) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	members, err := p.rdb.ZRangeByScore(ctx, presenceKey(workspaceID), &redis.ZRangeBy{Min: "(" + now, Max: "+inf"}).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Connection, 0, len(members))
	for _, m := range members {
		kind, id, ok := strings.Cut(m, "|")
		if ok {
			out = append(out, Connection{ID: id, Kind: kind})
		}
	}
	return out, nil
}
