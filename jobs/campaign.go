package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/campaign"
	"github.com/switchboardhq/switchboard/viewer"
)

// A campaign advances one step task at a time, named by its step token (see
// campaigns.Stepper); these are the task, its queueing and its reconciling.

// TypeCampaignStep is the task of one step of a campaign.
const TypeCampaignStep = "campaign:step"

// QueueCampaigns holds campaign steps.
const QueueCampaigns = "campaigns"

// campaignPayload is the payload of a TypeCampaignStep task.
type campaignPayload struct {
	CampaignID  string `json:"campaignId"`
	WorkspaceID string `json:"workspaceId"`
	Token       string `json:"token"`
}

// CampaignStepTaskID is the asynq task id of a campaign's step under token.
func CampaignStepTaskID(campaignID, token string) string {
	return "campaign:" + campaignID + ":" + token
}

// CampaignStep queues the step of a campaign that its step token names, at at
// (now when zero), unless it is queued already.
func (q *Queue) CampaignStep(ctx context.Context, workspaceID, campaignID, token string, at time.Time) (bool, error) {
	payload, _ := json.Marshal(campaignPayload{CampaignID: campaignID, WorkspaceID: workspaceID, Token: token})
	return q.enqueueOnce(ctx, QueueCampaigns, CampaignStepTaskID(campaignID, token), asynq.NewTask(TypeCampaignStep, payload), at,
		asynq.MaxRetry(1<<10), asynq.Timeout(2*time.Minute))
}

// CampaignStep runs one step of a campaign (see campaigns.Stepper.Step).
func (h *Handlers) CampaignStep(ctx context.Context, t *asynq.Task) error {
	var p campaignPayload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("%w: bad payload: %v", asynq.SkipRetry, err)
	}
	return h.Campaigns.Step(viewer.WorkspaceContext(ctx, p.WorkspaceID), p.CampaignID, p.Token, time.Now())
}

// ReconcileCampaigns queues again the step of every campaign that has one due
// within the next pass but whose task Redis does not hold, and returns how many it
// queued.
func (h *Handlers) ReconcileCampaigns(ctx context.Context, now time.Time, settle time.Duration) (int, error) {
	ctx = viewer.SystemContext(ctx)
	due, err := h.Client.Campaign.Query().
		Where(campaign.StepTokenNEQ(""), campaign.StepTokenNotNil(), campaign.NextStepAtLTE(now.Add(ReconcileEvery)),
			campaign.UpdatedAtLT(now.Add(-settle)),
			campaigns.StatusIn(campaigns.StatusPending, campaigns.StatusRunning, campaigns.StatusCompleteSent)).
		All(ctx)
	if err != nil {
		return 0, err
	}
	queued := 0
	for _, c := range lost(ctx, h.Queue, QueueCampaigns, due, func(c *ent.Campaign) []string { return []string{CampaignStepTaskID(c.ID, c.StepToken)} }) {
		added, err := h.Queue.CampaignStep(ctx, c.WorkspaceID, c.ID, c.StepToken, dueAt(c.NextStepAt, now))
		if err != nil {
			slog.Error("reconciler: enqueue", "campaign", c.ID, "err", err)
		} else if added {
			queued++
		}
	}
	return queued, nil
}
