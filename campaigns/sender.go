package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
)

// A campaign sends through one engine at a time: the engine it is pinned to
// (engine_id), else the engine the step picks. Its cap and pace are that
// engine's: the daily cap counts the campaign messages made through the engine
// in the last 24 hours (every campaign of the workspace on it), and the
// campaigns on one engine share its send slot (the engine row's
// campaign_next_at): a step makes its messages only once the slot is due, and
// takes the next one (now plus its delay) with a conditional update in the
// transaction that makes them. The slot is in the database, not in Redis, so it
// holds across replicas, restarts and a Redis flush, and a step that goes stale
// gives it back with its rollback.

// errSlotTaken says another campaign took the engine's send slot first.
var errSlotTaken = errors.New("campaigns: the engine's send slot is taken")

// sender returns the engine campaign c sends through now, or nil when the step
// waits (no engine connected, or the pinned one is not: rescheduled after
// NoEngineRetry) or stops: a restriction of its engine (its row's, or what the
// engine reports) pauses the campaign with it as the reason, to be resumed when
// the restriction ends (see ResumeLifted). A campaign that is not pinned goes
// on through another engine of the workspace that is connected and not
// restricted, if there is one.
func (s *Stepper) sender(ctx context.Context, c *ent.Campaign, token string, now time.Time) (engine.Engine, error) {
	if c.EngineID != "" {
		eng, err := s.Engines.Find(ctx, c.WorkspaceID, c.EngineID)
		if err != nil && !gone(err) {
			return nil, err
		}
		return s.usable(ctx, c, token, c.EngineID, eng, now)
	}
	eng, err := s.Engines.Pick(ctx, c.WorkspaceID)
	if err != nil && !gone(err) {
		return nil, err
	}
	if eng != nil {
		why, restricted, err := s.restricted(ctx, eng.ID(), eng, now)
		if err != nil || !restricted {
			return eng, err
		}
		if other, err := s.unrestricted(ctx, eng.ID(), now); err != nil || other != nil {
			return other, err
		}
		return nil, s.pauseFor(ctx, c, token, eng.ID(), why, now)
	}
	id, why, err := s.restrictedRow(ctx, now)
	if err != nil {
		return nil, err
	} else if id != "" {
		return nil, s.pauseFor(ctx, c, token, id, why, now)
	}
	return nil, s.reschedule(ctx, c, token, now.Add(NoEngineRetry))
}

// usable returns the pinned engine engineID (eng, nil when it is not
// connected) unless it is restricted (the campaign pauses) or not connected
// (the step waits).
func (s *Stepper) usable(ctx context.Context, c *ent.Campaign, token, engineID string, eng engine.Engine, now time.Time) (engine.Engine, error) {
	why, restricted, err := s.restricted(ctx, engineID, eng, now)
	switch {
	case err != nil:
		return nil, err
	case restricted:
		return nil, s.pauseFor(ctx, c, token, engineID, why, now)
	case eng == nil:
		return nil, s.reschedule(ctx, c, token, now.Add(NoEngineRetry))
	}
	return eng, nil
}

// slotAt is when the engine's next campaign send slot is due (zero: now, or an
// engine without a row).
func (s *Stepper) slotAt(ctx context.Context, engineID string) (time.Time, error) {
	e, err := s.Client.Engine.Query().Where(entengine.ID(engineID)).Select(entengine.FieldCampaignNextAt).Only(ctx)
	if ent.IsNotFound(err) || err == nil && e.CampaignNextAt == nil {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, err
	}
	return *e.CampaignNextAt, nil
}

// takeSlot takes the engine's send slot due by now in tx and moves it to next;
// errSlotTaken when another step took it first. An engine without a row (one a
// test or a provider made) has no slot to share: nothing to take.
func takeSlot(ctx context.Context, tx *ent.Tx, engineID string, now, next time.Time) error {
	n, err := tx.Engine.Update().
		Where(entengine.ID(engineID), entengine.Or(entengine.CampaignNextAtIsNil(), entengine.CampaignNextAtLTE(now))).
		SetCampaignNextAt(next).Save(ctx)
	if err != nil || n > 0 {
		return err
	}
	if exists, err := tx.Engine.Query().Where(entengine.ID(engineID)).Exist(ctx); err != nil {
		return err
	} else if exists {
		return errSlotTaken
	}
	return nil
}

// dailyRoom is how many more campaign messages the engine engineID may make now:
// the cap in any 24 hours, less the campaign messages of the workspace made
// through it in the last 24 hours. Another engine of the workspace (a second
// number, the sandbox beside a phone) has its own count.
func (s *Stepper) dailyRoom(ctx context.Context, engineID string, cap int, now time.Time) (int, error) {
	made, err := s.Client.Message.Query().
		Where(message.CampaignIDNotNil(), message.EngineID(engineID), message.CreatedAtGT(now.Add(-24*time.Hour))).Count(ctx)
	if err != nil {
		return 0, err
	}
	return cap - made, nil
}
