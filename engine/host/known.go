package host

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/viewer"
)

// enginesChannel carries "+<engine id>" when a gateway engine is created and
// "-<engine id>" when one is deleted, to every replica's host.
const enginesChannel = "switchboard:gateway-engines"

// resyncPage is how many engine ids a resync reads at a time.
const resyncPage = 500

func (h *Host) resyncEvery() time.Duration {
	if h.Resync > 0 {
		return h.Resync
	}
	return DefaultResync
}

// learn adds an engine to those this replica knows of.
func (h *Host) learn(engineID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.known == nil {
		h.known = map[string]time.Time{}
	}
	h.known[engineID] = time.Now()
}

// forget drops an engine from those this replica knows of (it was deleted).
func (h *Host) forget(engineID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.known, engineID)
}

// knownIDs lists the engines this replica knows of, in id order.
func (h *Host) knownIDs() []string {
	h.mu.Lock()
	out := make([]string, 0, len(h.known))
	for id := range h.known {
		out = append(out, id)
	}
	h.mu.Unlock()
	sort.Strings(out)
	return out
}

// announce tells every replica that a gateway engine was created.
func (h *Host) announce(ctx context.Context, engineID string) {
	if err := h.Redis.Publish(ctx, enginesChannel, "+"+engineID).Err(); err != nil {
		h.log().Warn("new gateway engine not announced", "engine", engineID, "err", err)
	}
}

// announceGone tells every replica that a gateway engine was deleted.
func (h *Host) announceGone(ctx context.Context, engineID string) {
	if err := h.Redis.Publish(ctx, enginesChannel, "-"+engineID).Err(); err != nil {
		h.log().Warn("deleted gateway engine not announced", "engine", engineID, "err", err)
	}
}

// subscribe subscribes to the notices of created and deleted engines, waiting
// (a little) for Redis to confirm it, so that a notice published after Run began
// reaches this replica; the first resync covers the engines created before.
func (h *Host) subscribe(ctx context.Context) *redis.PubSub {
	ps := h.Redis.Subscribe(ctx, enginesChannel)
	rctx, cancel := context.WithTimeout(ctx, h.ttl()/6)
	defer cancel()
	if _, err := ps.Receive(rctx); err != nil {
		h.log().Warn("gateway engine notices not subscribed yet", "err", err)
	}
	return ps
}

// listen applies the notices of created and deleted engines until ctx ends.
// A notice missed (Redis was away) is made up for by the next resync, and a
// deleted engine is also forgotten when a replica finds its row gone.
func (h *Host) listen(ctx context.Context, ps *redis.PubSub) {
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			if id, ok := strings.CutPrefix(m.Payload, "+"); ok && id != "" {
				h.learn(id)
			} else if id, ok := strings.CutPrefix(m.Payload, "-"); ok && id != "" {
				h.forget(id)
			}
		}
	}
}

// resyncIfDue re-reads the ids of the gateway engines (a page at a time, by
// id cursor) when the last read is older than the resync period, and stops the
// engines this replica runs whose row is gone.
func (h *Host) resyncIfDue(ctx context.Context) error {
	h.mu.Lock()
	due := time.Since(h.synced) >= h.resyncEvery()
	h.mu.Unlock()
	if !due {
		return nil
	}
	began := time.Now()
	sys := viewer.SystemContext(ctx)
	seen := map[string]time.Time{}
	after := ""
	for {
		ids, err := h.Client.Engine.Query().
			Where(entengine.KindEQ(entengine.KindGateway), entengine.IDGT(after)).
			Order(ent.Asc(entengine.FieldID)).Limit(resyncPage).IDs(sys)
		if err != nil {
			return err
		}
		for _, id := range ids {
			seen[id] = began
		}
		if len(ids) < resyncPage {
			break
		}
		after = ids[len(ids)-1]
	}
	h.mu.Lock()
	for id, at := range h.known { // learnt while the pages were read
		if _, ok := seen[id]; !ok && !at.Before(began) {
			seen[id] = at
		}
	}
	var gone []string
	for id, r := range h.running {
		if _, ok := seen[id]; !ok && r.started.Before(began) {
			gone = append(gone, id)
		}
	}
	h.known, h.synced = seen, began
	h.mu.Unlock()
	for _, id := range gone {
		h.stop(ctx, id)
	}
	return nil
}

func isNotFound(err error) bool { return ent.IsNotFound(err) }
