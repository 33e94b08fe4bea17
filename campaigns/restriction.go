package campaigns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/campaign"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	"github.com/switchboardhq/switchboard/webhook"
)

// A campaign whose engine the network restricts (a temporary ban, a reach-out
// time lock, a logged-out account) pauses itself with the restriction as its
// reason and the engine in its pause_engine_id; it resumes by itself once that
// engine is no longer restricted (ResumeLifted, which the host calls when it
// sees the restriction end and the reconciler calls on every pass). A campaign
// a user paused has no pause_engine_id and stays paused until a user resumes it.
// An engine is restricted when its row says so (the host writes what the
// gateway reports, on whichever replica runs it) or when the engine itself
// reports it (engine.Restrictor).

// RestrictionOf is the restriction an engine row shows at now, ok false when
// it shows none (or one that has ended).
func RestrictionOf(row *ent.Engine, now time.Time) (why string, ok bool) {
	if row == nil || row.Restriction == "" {
		return "", false
	}
	if row.RestrictedUntil != nil && !now.Before(*row.RestrictedUntil) {
		return "", false
	}
	return row.Restriction, true
}

// gone reports whether err says the engine is not connected now.
func gone(err error) bool {
	return errors.Is(err, engine.ErrNoEngine) || errors.Is(err, engine.ErrDisconnected)
}

// restricted says why the engine engineID (eng when connected, else nil) is
// restricted at now: by its row, or by what it reports itself.
func (s *Stepper) restricted(ctx context.Context, engineID string, eng engine.Engine, now time.Time) (string, bool, error) {
	if r, ok := eng.(engine.Restrictor); ok {
		if why, restricted := r.Restriction(); restricted {
			return why, true, nil
		}
	}
	row, err := s.Client.Engine.Get(ctx, engineID)
	if ent.IsNotFound(err) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	why, ok := RestrictionOf(row, now)
	return why, ok, nil
}

// unrestricted is another engine of the workspace than except, connected and
// not restricted, for a campaign that is not pinned; nil when there is none.
// The sandbox is never the other engine (it never shadows a real one).
func (s *Stepper) unrestricted(ctx context.Context, except string, now time.Time) (engine.Engine, error) {
	rows, err := s.Client.Engine.Query().
		Where(entengine.IDNEQ(except), entengine.KindNEQ(entengine.KindSandbox)).
		Order(ent.Asc(entengine.FieldID)).Limit(50).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if _, ok := RestrictionOf(row, now); ok {
			continue
		}
		eng, err := s.Engines.Find(ctx, row.WorkspaceID, row.ID)
		if gone(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		if _, restricted, err := s.restricted(ctx, row.ID, eng, now); err != nil {
			return nil, err
		} else if !restricted {
			return eng, nil
		}
	}
	return nil, nil
}

// restrictedRow is an engine of the workspace whose row shows a restriction
// now, and why; "" when none does.
func (s *Stepper) restrictedRow(ctx context.Context, now time.Time) (id, why string, err error) {
	rows, err := s.Client.Engine.Query().Where(entengine.RestrictionNEQ("")).Order(ent.Asc(entengine.FieldID)).Limit(100).All(ctx)
	if err != nil {
		return "", "", err
	}
	for _, row := range rows {
		if why, ok := RestrictionOf(row, now); ok {
			return row.ID, why, nil
		}
	}
	return "", "", nil
}

// PauseReason is the pause reason of a campaign paused by the restriction why
// of the engine engineID.
func PauseReason(engineID, why string) string {
	return fmt.Sprintf("the engine %s reports a restriction: %s", engineID, why)
}

// pauseFor pauses the campaign under its step token for the restriction why of
// the engine engineID, which it names as the one to wait for.
func (s *Stepper) pauseFor(ctx context.Context, c *ent.Campaign, token, engineID, why string, now time.Time) error {
	return storage.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
		_, moved, err := Move(ctx, tx, c, ActionPause, token, PauseReason(engineID, why), now)
		if err != nil || !moved {
			return err
		}
		return tx.Campaign.UpdateOneID(c.ID).SetPauseEngineID(engineID).Exec(ctx)
	})
}

// ResumeLifted resumes, as of now, the campaigns that a restriction of the
// engine engineID paused, unless the engine is still restricted; it queues
// their steps and returns how many it resumed. Any replica may call it any
// number of times: each campaign resumes once (Move is a compare-and-set).
func (s *Stepper) ResumeLifted(ctx context.Context, engineID string, now time.Time) (int, error) {
	sys := viewer.SystemContext(ctx)
	paused, err := s.Client.Campaign.Query().
		Where(campaign.PauseEngineID(engineID), StatusIs(StatusPaused)).All(sys)
	if err != nil || len(paused) == 0 {
		return 0, err
	}
	wctx := viewer.WorkspaceContext(ctx, paused[0].WorkspaceID)
	eng, err := s.Engines.Find(wctx, paused[0].WorkspaceID, engineID)
	if err != nil && !gone(err) {
		return 0, err
	}
	if _, still, err := s.restricted(sys, engineID, eng, now); err != nil || still {
		return 0, err
	}
	n := 0
	for _, c := range paused {
		var next *ent.Campaign
		var moved bool
		err := storage.WithTx(sys, s.Client, func(tx *ent.Tx) (err error) {
			next, moved, err = Move(viewer.WorkspaceContext(ctx, c.WorkspaceID), tx, c, ActionResume, "", "", now)
			return err
		})
		if err != nil {
			return n, err
		} else if moved {
			n++
			s.queueStep(ctx, next, next.StepToken, now)
		}
	}
	return n, nil
}

// ResumeAllLifted runs ResumeLifted for every engine that paused a campaign:
// the reconciler's pass, which resumes them even when no replica saw the
// restriction end (a time lock that ran out, a replica that died).
func (s *Stepper) ResumeAllLifted(ctx context.Context, now time.Time) (int, error) {
	ids, err := s.Client.Campaign.Query().
		Where(campaign.PauseEngineIDNEQ(""), campaign.PauseEngineIDNotNil(), StatusIs(StatusPaused)).
		Unique(true).Select(campaign.FieldPauseEngineID).Strings(viewer.SystemContext(ctx))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, id := range ids {
		n, err := s.ResumeLifted(ctx, id, now)
		if err != nil {
			slog.Warn("campaigns: resume after a restriction", "engine", id, "err", err)
			continue
		}
		total += n
	}
	return total, nil
}

// KeepPaused makes the pause of campaign c, paused by a restriction, the user's
// own (POST …/pause on it): it no longer resumes by itself, and reason is its
// pause reason; campaign.paused is recorded again. moved is false when c is not
// (or no longer) paused by a restriction.
func KeepPaused(ctx context.Context, tx *ent.Tx, c *ent.Campaign, reason string, now time.Time) (next *ent.Campaign, moved bool, err error) {
	if StatusOf(c) != StatusPaused || c.PauseEngineID == "" {
		return c, false, nil
	}
	n, err := tx.Campaign.Update().
		Where(campaign.ID(c.ID), StatusIs(StatusPaused), campaign.PauseEngineID(c.PauseEngineID)).
		SetPauseEngineID("").SetPauseReason(reason).SetPausedAt(now).Save(ctx)
	if err != nil || n == 0 {
		return c, false, err
	}
	k := *c
	k.PauseEngineID, k.PauseReason, k.PausedAt = "", reason, &now
	return &k, true, Record(ctx, tx, &k, webhook.EventCampaignPaused)
}
