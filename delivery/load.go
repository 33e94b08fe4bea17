package delivery

import (
	"context"

	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/viewer"
)

// A delivery attempt starts by reading its delivery, and the attempts that start
// at the same moment read theirs in one query while RunLoader runs: a read each
// was a fifth of a worker's time in a burst of deliveries (CPU profile of the
// delivery row of bench/compare).

// loadBatch bounds how many deliveries one query reads.
const loadBatch = 64

// loadRequest asks for one delivery of a workspace.
type loadRequest struct {
	workspaceID, id string
	done            chan loaded // buffered: the batch never waits for the task
}

// loaded answers a loadRequest: the delivery, nil when there is none.
type loaded struct {
	d   *ent.Delivery
	err error
}

// RunLoader reads the deliveries that attempts ask for at the same moment in
// batches of up to loadBatch, with workers batches in flight, until ctx is done.
// Attempts that start while it does not run read their delivery alone.
func (svc *Service) RunLoader(ctx context.Context, workers int) {
	poll.RunBatcher(ctx, &svc.loader, workers, loadBatch, 0, svc.loadDeliveries)
}

// loadDelivery returns the delivery id of workspaceID, or nil when it has none
// (deleted meanwhile).
func (svc *Service) loadDelivery(ctx context.Context, workspaceID, id string) (*ent.Delivery, error) {
	b := svc.loader.Load()
	if b == nil {
		d, err := svc.Client.Delivery.Get(viewer.WorkspaceContext(ctx, workspaceID), id)
		if ent.IsNotFound(err) {
			return nil, nil
		}
		return d, err
	}
	r := &loadRequest{workspaceID: workspaceID, id: id, done: make(chan loaded, 1)}
	if err := b.Send(ctx, r); err != nil {
		return nil, err
	}
	select {
	case l := <-r.done:
		return l.d, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loadDeliveries reads the deliveries of batch in one query and answers each
// request; a delivery of another workspace than the one asked for is none.
func (svc *Service) loadDeliveries(ctx context.Context, batch []*loadRequest) {
	ids := make([]string, len(batch))
	for i, r := range batch {
		ids[i] = r.id
	}
	rows, err := svc.Client.Delivery.Query().Where(entdelivery.IDIn(ids...)).All(viewer.SystemContext(ctx))
	byID := make(map[string]*ent.Delivery, len(rows))
	for _, d := range rows {
		byID[d.ID] = d
	}
	for _, r := range batch {
		d := byID[r.id]
		if d != nil && d.WorkspaceID != r.workspaceID {
			d = nil
		}
		r.done <- loaded{d: d, err: err}
	}
}
