package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/storage"
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
// NoEngineRetry) or stops (a restriction reported by the engine pauses the
// campaign with it as the reason).
func (s *Stepper) sender(ctx context.Context, c *ent.Campaign, token string, now time.Time) (engine.Engine, error) {
	var eng engine.Engine
	var err error
	if c.EngineID != "" {
		eng, err = s.Engines.Find(ctx, c.WorkspaceID, c.EngineID)
	} else {
		eng, err = s.Engines.Pick(ctx, c.WorkspaceID)
	}
	if errors.Is(err, engine.ErrNoEngine) || errors.Is(err, engine.ErrDisconnected) {
		return nil, s.reschedule(ctx, c, token, now.Add(NoEngineRetry))
	} else if err != nil {
		return nil, err
	}
	if r, ok := eng.(engine.Restrictor); ok {
		if why, restricted := r.Restriction(); restricted {
			return nil, storage.WithTx(ctx, s.Client, func(tx *ent.Tx) error {
				_, _, err := Move(ctx, tx, c, ActionPause, token, "the engine reports a restriction: "+why, now)
				return err
			})
		}
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
