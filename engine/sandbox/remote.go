package sandbox

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/engine/remote"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/poll"
)

// ServeRemote runs the sandbox out of process: a network whose memory is db,
// serving one engine behind the protocol client c until c.Run returns (the
// server ended the engine, or ctx ended). Its acks are spaced by delay; its
// account's own number is c.Phone (the hello announces it), else one derived
// from the workspace.
func ServeRemote(ctx context.Context, c *remote.Client, db *ent.Client, delay time.Duration) error {
	c.Capabilities = engine.CapabilitiesOf((*Engine)(nil))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return c.Run(ctx, func(_ context.Context, w remote.Welcome, sink engine.BatchSink) (engine.Engine, error) {
		n := NewNetwork(db, delay, sink)
		n.Phone = c.Phone
		tick := min(max(delay/5, 10*time.Millisecond), 200*time.Millisecond)
		go n.Run(ctx, poll.Pace{Min: tick, Max: time.Second})
		go n.RunGroups(ctx, poll.Pace{Min: tick, Max: time.Second})
		return n.EngineFor(w.WorkspaceID, w.EngineID), nil
	})
}
