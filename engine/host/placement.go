package host

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/viewer"
)

// replicasKey is a sorted set of the replicas running hosts, each scored with
// the time (Unix ms) its registration expires: renewed with the leases, so a
// dead replica drops out within a lease TTL.
const replicasKey = "switchboard:gateway-replicas"

// register renews this replica's registration, drops expired ones, and
// returns how many replicas run hosts (at least 1: this one).
func (h *Host) register(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, h.ttl()/6)
	defer cancel()
	now := time.Now()
	pipe := h.Redis.TxPipeline()
	pipe.ZAdd(ctx, replicasKey, redisZ(float64(now.Add(h.ttl()).UnixMilli()), h.Hub.Replica()))
	pipe.ZRemRangeByScore(ctx, replicasKey, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
	n := pipe.ZCard(ctx, replicasKey)
	if _, err := pipe.Exec(ctx); err != nil {
		return 1, err
	}
	return max(int(n.Val()), 1), nil
}

// unregister takes this replica out of the registrations (it is stopping).
func (h *Host) unregister() {
	ctx, cancel := context.WithTimeout(context.Background(), h.ttl()/6)
	defer cancel()
	_ = h.Redis.ZRem(ctx, replicasKey, h.Hub.Replica()).Err()
}

// share is how many engines this replica may run: its fair share of the
// engines it knows of, rounded up, plus the slack.
func (h *Host) share(engines, replicas int) int {
	slack := h.Slack
	if slack <= 0 {
		slack = 1
	}
	return (engines+replicas-1)/replicas + slack
}

// place registers this replica, re-reads the engines' ids when a resync is
// due, then takes up engines no replica runs while this one runs fewer than
// its share, or hands surplus engines off while it runs more.
func (h *Host) place(ctx context.Context) error {
	if err := h.resyncIfDue(ctx); err != nil {
		return err
	}
	replicas, err := h.register(ctx)
	if err != nil {
		return err
	}
	known := h.knownIDs()
	share := h.share(len(known), replicas)
	if n := h.count(); n > share {
		h.handOff(ctx, n-share)
		return nil
	}
	return h.takeUp(ctx, known, share)
}

// takeUp starts, in random order (so replicas starting together seldom race
// for the same engine), known engines whose lease no replica holds, until this
// replica runs share of them.
func (h *Host) takeUp(ctx context.Context, known []string, share int) error {
	free, err := h.unleased(ctx, known)
	if err != nil {
		return err
	}
	rand.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	sys := viewer.SystemContext(ctx)
	for i, id := range free {
		if i > 0 && i%16 == 0 { // replicas starting together learn of each other as they go
			if replicas, err := h.register(ctx); err == nil {
				share = h.share(len(known), replicas)
			}
		}
		if h.count() >= share || ctx.Err() != nil {
			break
		}
		row, err := h.Client.Engine.Get(sys, id)
		if err != nil {
			if isNotFound(err) {
				h.forget(id)
				continue
			}
			return err
		}
		if err := h.start(ctx, row); err != nil {
			h.log().Warn("gateway engine not started", "engine", id, "err", err)
		}
	}
	return nil
}

// unleased lists the ids among ids that this replica does not run and whose
// lease no replica holds, asking Redis in pages.
func (h *Host) unleased(ctx context.Context, ids []string) ([]string, error) {
	var out []string
	for len(ids) > 0 {
		page := ids[:min(len(ids), 500)]
		ids = ids[len(page):]
		keys := make([]string, len(page))
		for i, id := range page {
			keys[i] = leasePrefix + id
		}
		rctx, cancel := context.WithTimeout(ctx, h.ttl()/6)
		vals, err := h.Redis.MGet(rctx, keys...).Result()
		cancel()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			if v == nil && !h.runs(page[i]) {
				out = append(out, page[i])
			}
		}
	}
	return out, nil
}

// handOff stops up to surplus (at most Handoff) paired engines, the most
// recently started first, and gives their leases up for another replica to
// take: an unpaired engine stays, its QR code may be on someone's screen.
func (h *Host) handOff(ctx context.Context, surplus int) {
	batch := h.Handoff
	if batch <= 0 {
		batch = 10
	}
	h.mu.Lock()
	var ids []string
	for id, r := range h.running {
		if r.paired {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return h.running[ids[i]].started.After(h.running[ids[j]].started) })
	h.mu.Unlock()
	for _, id := range ids[:min(len(ids), surplus, batch)] {
		h.log().Info("gateway engine handed off", "engine", id)
		h.stop(ctx, id)
	}
}

func (h *Host) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.running)
}

func (h *Host) runs(engineID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.running[engineID]
	return ok
}

// Running lists the engines this replica runs.
func (h *Host) Running() []string {
	ids := h.ids()
	sort.Strings(ids)
	return ids
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
