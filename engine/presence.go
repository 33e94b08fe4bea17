package engine

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
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
//
// List answers from memory for up to ListFresh (a ping asks on every request):
// what this process changes shows at once, another replica's change within
// ListFresh.
type Presence struct {
	rdb redis.UniversalClient
	ttl time.Duration

	mu     sync.Mutex
	listed map[string]listing // by workspace
}

// ListFresh is how long List may answer from memory.
const ListFresh = time.Second

// listing is a remembered answer of List, good until until.
type listing struct {
	conns []Connection
	until time.Time
}

// NewPresence returns a Presence whose heartbeats last ttl.
func NewPresence(rdb redis.UniversalClient, ttl time.Duration) *Presence {
	return &Presence{rdb: rdb, ttl: ttl, listed: map[string]listing{}}
}

// forget drops the remembered List of a workspace.
func (p *Presence) forget(workspaceID string) {
	p.mu.Lock()
	delete(p.listed, workspaceID)
	p.mu.Unlock()
}

// Forget makes the next List of a workspace read Redis rather than answer from
// memory: for a caller that waited for a change another replica made (a
// restarted engine's session connected again).
func (p *Presence) Forget(workspaceID string) { p.forget(workspaceID) }

// TTL is how long one heartbeat keeps an engine listed.
func (p *Presence) TTL() time.Duration { return p.ttl }

func presenceKey(workspaceID string) string { return "switchboard:presence:" + workspaceID }

// indexKey is a sorted set of every live engine of every workspace, members
// "<workspace>|<kind>|<id>", scored like the per-workspace sets; Reap reads it.
const indexKey = "switchboard:presence-index"

// Beat marks the engine live for another TTL. It reports whether the engine was not
// live before (a new or lapsed session). An engine has one kind at a time: a beat
// drops the member of the engine under the other kind (a remote engine that
// connected again with another hello), so that ping never lists it twice, and
// Reap never reports the old member's lapse as the end of the live session.
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
	for _, k := range []string{KindGateway, KindRegular} {
		if k != c.Kind {
			pipe.ZRem(ctx, key, k+"|"+c.ID)
			pipe.ZRem(ctx, indexKey, workspaceID+"|"+k+"|"+c.ID)
		}
	}
	pipe.ZAdd(ctx, key, redis.Z{Score: expiry, Member: member})
	pipe.PExpire(ctx, key, 2*p.ttl)
	pipe.ZAdd(ctx, indexKey, redis.Z{Score: expiry, Member: workspaceID + "|" + member})
	_, err = pipe.Exec(ctx)
	if fresh {
		p.forget(workspaceID)
	}
	return fresh, err
}

// Leave removes the engine at once.
func (p *Presence) Leave(ctx context.Context, workspaceID string, c Connection) error {
	member := c.Kind + "|" + c.ID
	pipe := p.rdb.TxPipeline()
	pipe.ZRem(ctx, presenceKey(workspaceID), member)
	pipe.ZRem(ctx, indexKey, workspaceID+"|"+member)
	_, err := pipe.Exec(ctx)
	p.forget(workspaceID)
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
		p.forget(l.WorkspaceID)
		out = append(out, l)
	}
	return out, nil
}

// List returns the engines of a workspace whose heartbeat is live.
func (p *Presence) List(ctx context.Context, workspaceID string) ([]Connection, error) {
	now := time.Now()
	p.mu.Lock()
	l, ok := p.listed[workspaceID]
	p.mu.Unlock()
	if ok && now.Before(l.until) {
		return slices.Clone(l.conns), nil
	}
	members, err := p.rdb.ZRangeByScoreWithScores(ctx, presenceKey(workspaceID),
		&redis.ZRangeBy{Min: "(" + strconv.FormatInt(now.UnixMilli(), 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, err
	}
	// Remembered until ListFresh passes or the first heartbeat lapses.
	l = listing{conns: make([]Connection, 0, len(members)), until: now.Add(ListFresh)}
	// An engine listed under two kinds (a replica that beat before the other
	// kind was dropped) shows once, as its latest beat says; the order stays
	// the set's (soonest lapse first).
	latest := map[string]float64{}
	for _, m := range members {
		if _, id, ok := strings.Cut(m.Member.(string), "|"); ok {
			latest[id] = max(latest[id], m.Score)
		}
	}
	for _, m := range members {
		kind, id, ok := strings.Cut(m.Member.(string), "|")
		if ok && m.Score == latest[id] {
			latest[id] = math.Inf(1) // once, even for equal scores
			l.conns = append(l.conns, Connection{ID: id, Kind: kind})
		}
		if lapse := time.UnixMilli(int64(m.Score)); lapse.Before(l.until) {
			l.until = lapse
		}
	}
	p.mu.Lock()
	p.listed[workspaceID] = l
	p.mu.Unlock()
	return slices.Clone(l.conns), nil
}
