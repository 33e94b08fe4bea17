package jobs

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine/host"
)

// LiftRestrictions is the reconciler's pass over restrictions, as of now: it
// ends those whose time ran out on engine rows that still show them
// (session.unrestricted), then resumes the campaigns whose engine is no longer
// restricted (campaigns.Stepper.ResumeAllLifted), and returns how many it
// resumed. It works from the database alone, so a restriction ends and its
// campaigns resume whichever replica runs, after a restart or a Redis loss.
func (h *Handlers) LiftRestrictions(ctx context.Context, now time.Time) (int, error) {
	if _, err := host.LiftExpired(ctx, h.Client, now); err != nil {
		return 0, err
	}
	if h.Campaigns == nil {
		return 0, nil
	}
	return h.Campaigns.ResumeAllLifted(ctx, now)
}
