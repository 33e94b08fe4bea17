package host

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// leasePrefix + engine id holds the token of the hold running the engine:
// the replica's id, a slash and a random part (hosted.token).
const leasePrefix = "switchboard:engine-lease:"

// renewLease extends a lease that still holds the token; 0 when it does not.
var renewLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
return 0`)

// dropLease deletes a lease that still holds the token.
var dropLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)

// margin is how long before its lease can expire an unrenewed engine is
// closed: a third of the TTL, so that two renewals (every sixth) may fail
// before the fence closes it.
func (h *Host) margin() time.Duration { return h.ttl() / 3 }

// renewEvery renews the leases every sixth of the TTL until ctx ends.
func (h *Host) renewEvery(ctx context.Context) {
	t := time.NewTicker(h.ttl() / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.renew(ctx)
		}
	}
}

// renew extends this replica's leases, each in one round trip bounded by a
// sixth of the TTL; a renewal that succeeds moves the engine's deadline to the
// time it began plus the TTL. An engine whose lease was lost (Redis lost it,
// or another replica took it after a long pause) is stopped here; one whose
// lease Redis did not answer for is left to the fence.
func (h *Host) renew(ctx context.Context) {
	for id, token := range h.holds() {
		began := time.Now()
		rctx, cancel := context.WithTimeout(ctx, h.ttl()/6)
		n, err := renewLease.Run(rctx, h.Redis, []string{leasePrefix + id}, token, h.ttl().Milliseconds()).Int()
		cancel()
		switch {
		case err != nil:
			h.log().Warn("gateway lease not renewed", "engine", id, "err", err)
		case n == 0:
			h.log().Warn("gateway lease lost: stopping the engine here", "engine", id)
			h.stopHold(ctx, id, token)
		default:
			h.renewed(id, token, began.Add(h.ttl()))
		}
	}
}

// holds is the token of every engine this replica runs, by engine id.
func (h *Host) holds() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.running))
	for id, r := range h.running {
		out[id] = r.token
	}
	return out
}

// stopHold stops the engine if this replica still runs it under token (not
// under a later hold).
func (h *Host) stopHold(ctx context.Context, engineID, token string) {
	h.mu.Lock()
	r := h.running[engineID]
	h.mu.Unlock()
	if r != nil && r.token == token {
		h.stop(ctx, engineID)
	}
}

func (h *Host) renewed(engineID, token string, validUntil time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.running[engineID]; r != nil && r.token == token && validUntil.After(r.validUntil) {
		r.validUntil = validUntil
	}
}

// fence closes, every tenth of the TTL until ctx ends, the engines whose lease
// may expire within the margin: this replica could not renew it (Redis is
// unreachable or slow), and another replica may take the engine once it
// expires. It needs nothing from Redis to do so.
func (h *Host) fence(ctx context.Context) {
	t := time.NewTicker(h.ttl() / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, id := range h.expiring(now) {
				h.log().Warn("gateway lease not renewed in time: closing the engine here", "engine", id)
				h.fenced(id)
			}
		}
	}
}

// expiring lists the running engines whose lease may expire within the margin.
func (h *Host) expiring(now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, r := range h.running {
		if !now.Before(r.validUntil.Add(-h.margin())) {
			out = append(out, id)
		}
	}
	return out
}

// fenced closes an engine first, without Redis, and then tries (briefly) to
// release it in the hub and give its lease up.
func (h *Host) fenced(engineID string) {
	r := h.take(engineID)
	if r == nil {
		return
	}
	defer h.stopped(engineID)
	h.close(engineID, r)
	ctx, cancel := context.WithTimeout(context.Background(), h.ttl()/6)
	defer cancel()
	h.Hub.Release(ctx, engineID)
	h.giveUp(ctx, engineID, r.token)
	h.log().Info("gateway engine fenced", "engine", engineID)
}

func (h *Host) ids() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.running))
	for id := range h.running {
		out = append(out, id)
	}
	return out
}
