package campaigns

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/storage"
)

// watch counts the messages of a campaign that made them all: complete_sent once
// none waits in the queue, complete_delivered once all were delivered or failed;
// until then it looks again later (WatchDelay), for up to WatchFor.
func (s *Stepper) watch(ctx context.Context, c *ent.Campaign, token string, now time.Time) error {
	counts, err := Count(ctx, s.Client.Message, c.ID)
	if err != nil {
		return err
	}
	n := counts[c.ID]
	action := watchAction(c, n)
	since := time.Duration(0)
	if c.SentThroughAt != nil {
		since = now.Sub(*c.SentThroughAt)
	}
	next, nextAt := switchboard.RandomToken(10), now.Add(WatchDelay(since))
	if action == "" && since > WatchFor {
		next = "" // stop looking: it stays as it is
	}
	err = storage.WithTx(ctx, s.Client, func(tx *ent.Tx) (err error) {
		next, err = s.observe(ctx, tx, c, n, action, token, next, nextAt, now)
		return err
	})
	if err != nil || next == "" {
		return err
	}
	s.queueStep(ctx, c, next, nextAt)
	return nil
}

// watchAction is the move the counts n of campaign c's messages call for, if any.
func watchAction(c *ent.Campaign, n Counts) string {
	switch {
	case AllDelivered(n):
		return ActionDelivered
	case AllSent(n) && StatusOf(c) == StatusRunning:
		return ActionSent
	}
	return ""
}

// observe records in tx what watch saw: the action (with the total of the
// messages made, when contacts left the audience first) and the next watch step
// next at nextAt, or none when next is empty; it returns the next step's token,
// empty when there is none (complete_delivered). errStale when the campaign
// changed under the step.
func (s *Stepper) observe(ctx context.Context, tx *ent.Tx, c *ent.Campaign, n Counts, action, token, next string, nextAt, now time.Time) (string, error) {
	if n.Made < c.TotalCount && action != "" {
		// Contacts removed from the audience before the campaign reached them.
		if err := tx.Campaign.UpdateOneID(c.ID).SetTotalCount(n.Made).Exec(ctx); err != nil {
			return next, err
		}
		c.TotalCount = n.Made
	}
	if action != "" {
		c, moved, err := Move(ctx, tx, c, action, token, "", now)
		if err != nil {
			return next, err
		} else if !moved {
			return next, errStale
		}
		if c.StepToken == "" {
			return "", nil // complete_delivered: nothing left to watch
		}
	}
	u := tx.Campaign.Update().Where(campaign.ID(c.ID), campaign.StepToken(token)).SetStepToken(next)
	if next == "" {
		u.ClearNextStepAt()
	} else {
		u.SetNextStepAt(nextAt)
	}
	if k, err := u.Save(ctx); err != nil {
		return next, err
	} else if k == 0 {
		return next, errStale
	}
	return next, nil
}
