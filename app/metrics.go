package app

import (
	"context"

	"github.com/switchboardhq/switchboard/campaigns"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/campaign"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/viewer"
)

// watchMetrics registers the metrics read at each scrape: asynq's queues, the
// campaigns by status, and the messages of unfinished campaigns by status
// (their progress), over every workspace.
func (a *App) watchMetrics() {
	metrics.WatchQueues(a.inspector)
	metrics.WatchGauges("switchboard_campaigns", "Campaigns by status.", "status",
		func(ctx context.Context) (map[string]float64, error) {
			out := map[string]float64{}
			for _, s := range campaigns.Statuses {
				out[string(s)] = 0
			}
			return out, countBy(ctx, a.Client.Campaign.Query().GroupBy(campaign.FieldStatus).Aggregate(ent.Count()).Scan, out)
		})
	metrics.WatchGauges("switchboard_campaign_messages", "Messages of pending, running and paused campaigns, by message status.", "status",
		func(ctx context.Context) (map[string]float64, error) {
			out := map[string]float64{}
			q := a.Client.Message.Query().Where(message.HasCampaignWith(campaigns.StatusIn(
				campaigns.StatusPending, campaigns.StatusRunning, campaigns.StatusPaused)))
			return out, countBy(ctx, q.GroupBy(message.FieldStatus).Aggregate(ent.Count()).Scan, out)
		})
	metrics.WatchGauges("switchboard_engines", "Engines by state (CONNECTED: in presence now, on any replica).", "state",
		func(ctx context.Context) (map[string]float64, error) {
			out := map[string]float64{string(engine.StateConnected): 0}
			return out, countBy(ctx, a.Client.Engine.Query().GroupBy(entengine.FieldState).Aggregate(ent.Count()).Scan, out)
		})
}

// countBy adds the counts a group-by on status (or state) with a count scans to
// out, by status.
func countBy(ctx context.Context, scan func(context.Context, any) error, out map[string]float64) error {
	var rows []struct {
		Status string `json:"status"`
		State  string `json:"state"`
		Count  int    `json:"count"`
	}
	if err := scan(viewer.SystemContext(ctx), &rows); err != nil {
		return err
	}
	for _, r := range rows {
		out[r.Status+r.State] += float64(r.Count)
	}
	return nil
}
