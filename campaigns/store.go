package campaigns

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/view"
	"github.com/switchboardhq/switchboard/webhook"
)

// Which message statuses count as what. The counters are cumulative: a read
// message is also delivered and sent.
var (
	queuedStatuses    = []messaging.Status{messaging.StatusPending, messaging.StatusSending}
	sentStatuses      = []messaging.Status{messaging.StatusSent, messaging.StatusSentPendingAck, messaging.StatusConfirmed}
	deliveredStatuses = []messaging.Status{messaging.StatusDelivered, messaging.StatusReceived}
	readStatuses      = []messaging.Status{messaging.StatusRead, messaging.StatusPlayed}
	failedStatuses    = []messaging.Status{messaging.StatusFailed, messaging.StatusError, messaging.StatusExpired, messaging.StatusCancelled}
)

// Tally adds n messages in status to c.
func Tally(c *Counts, status messaging.Status, n int) {
	c.Made += n
	switch {
	case slices.Contains(queuedStatuses, status):
		c.Queued += n
	case slices.Contains(readStatuses, status):
		c.Read += n
		c.Delivered += n
		c.Sent += n
	case slices.Contains(deliveredStatuses, status):
		c.Delivered += n
		c.Sent += n
	case slices.Contains(sentStatuses, status):
		c.Sent += n
	case slices.Contains(failedStatuses, status):
		c.Failed += n
	default: // before-wa-send, bt-sent: on its way
		c.Queued += n
	}
}

// Counts are a campaign's counters (see view.Counts).
type Counts = view.Counts

// AllSent reports whether every message made has left the queue.
func AllSent(n Counts) bool { return n.Queued == 0 }

// AllDelivered reports whether every message made reached its recipient or failed.
func AllDelivered(n Counts) bool { return n.Queued == 0 && n.Delivered+n.Failed == n.Made }

// Count reads the counters of the campaigns ids from their messages, in one grouped
// query. Campaigns without messages are absent from the map (their counters are 0).
func Count(ctx context.Context, q *ent.MessageClient, ids ...string) (map[string]Counts, error) {
	out := make(map[string]Counts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		CampaignID string `json:"campaign_id"`
		Status     string `json:"status"`
		Count      int    `json:"count"`
	}
	err := q.Query().Where(message.CampaignIDIn(ids...)).
		GroupBy(message.FieldCampaignID, message.FieldStatus).
		Aggregate(ent.Count()).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("campaigns: count messages: %w", err)
	}
	for _, r := range rows {
		c := out[r.CampaignID]
		Tally(&c, messaging.Status(r.Status), r.Count)
		out[r.CampaignID] = c
	}
	return out, nil
}

// Move is one transition of the state machine for c inside tx: a compare-and-set
// on c's status (and, when token is not empty, on its step token). It stamps the
// times the new status has, takes or clears the step token (a campaign that may
// run gets a new one, returned in the campaign), and records the event the move
// causes with the campaign (and its counters) as data. moved is false when c
// changed meanwhile or the action is not allowed from its status.
func Move(ctx context.Context, tx *ent.Tx, c *ent.Campaign, action, token, reason string, now time.Time) (next *ent.Campaign, moved bool, err error) {
	to, ok := Next(StatusOf(c), action)
	if !ok {
		return c, false, nil
	}
	u := tx.Campaign.Update().Where(campaign.ID(c.ID), campaign.Status(c.Status)).SetStatus(string(to))
	if token != "" {
		u.Where(campaign.StepToken(token))
	}
	n := *c
	n.Status = string(to)
	switch to {
	case StatusRunning:
		if c.StartedAt == nil {
			u.SetStartedAt(now)
			n.StartedAt = &now
		}
		if action == ActionResume {
			n.StepToken = switchboard.RandomToken(10)
			u.SetStepToken(n.StepToken).SetNextStepAt(now).SetPauseReason("").SetPauseEngineID("").ClearPausedAt()
			n.NextStepAt, n.PauseReason, n.PauseEngineID, n.PausedAt = &now, "", "", nil
		}
	case StatusPaused:
		u.SetPausedAt(now).SetPauseReason(reason).SetStepToken("").ClearNextStepAt()
		n.PausedAt, n.PauseReason, n.StepToken, n.NextStepAt = &now, reason, "", nil
	case StatusAborted:
		u.SetAbortedAt(now).SetStepToken("").ClearNextStepAt()
		n.AbortedAt, n.StepToken, n.NextStepAt = &now, "", nil
	case StatusCompleteSent, StatusCompleteDelivered:
		if c.CompletedAt == nil {
			u.SetCompletedAt(now)
			n.CompletedAt = &now
		}
		if to == StatusCompleteDelivered {
			u.SetStepToken("").ClearNextStepAt()
			n.StepToken, n.NextStepAt = "", nil
		}
	}
	count, err := u.Save(ctx)
	if err != nil {
		return c, false, fmt.Errorf("campaigns: %s %s: %w", action, c.ID, err)
	} else if count == 0 {
		return c, false, nil
	}
	typ := Event(StatusOf(c), to)
	if typ == webhook.EventCampaignResumed && c.StartedAt == nil {
		typ = webhook.EventCampaignStarted // a campaign held before it started starts now
	}
	if typ != "" {
		if err := Record(ctx, tx, &n, typ); err != nil {
			return c, false, err
		}
	}
	return &n, true, nil
}

// Record writes event typ about c, with the campaign and its counters as data,
// when a webhook of its workspace wants it.
func Record(ctx context.Context, tx *ent.Tx, c *ent.Campaign, typ string) error {
	if ok, err := outbox.Wants(ctx, tx.Webhook, c.WorkspaceID, typ); err != nil || !ok {
		return err
	}
	counts, err := Count(ctx, tx.Message, c.ID)
	if err != nil {
		return err
	}
	return outbox.RecordFor(ctx, tx, c.WorkspaceID, typ, View(c, counts[c.ID]))
}

// View renders c with its counters n, as the API and the campaign.* events show
// it: with its pause reason while it is paused.
func View(c *ent.Campaign, n Counts) view.Campaign {
	v := view.NewCampaign(c, n)
	if StatusOf(c) == StatusPaused {
		v.PauseReason = c.PauseReason
	}
	return v
}
