package view

import (
	"time"

	"github.com/switchboardhq/switchboard/ent"
)

// Counts are a campaign's progress counters, read from its messages.
type Counts struct {
	// Made is how many messages the campaign made so far; Queued how many of them
	// wait in the queue or are being sent.
	Made, Queued int
	// Sent includes Delivered, which includes Read.
	Sent, Delivered, Read, Failed int
}

// Campaign is the spec's Campaign object, the data of campaign.* events.
type Campaign struct {
	CmpID          string     `json:"cmpId"`
	Name           string     `json:"name"`
	AudienceID     string     `json:"audienceId"`
	Status         string     `json:"status"`
	TotalCount     int        `json:"totalCount"`
	SentCount      int        `json:"sentCount"`
	DeliveredCount int        `json:"deliveredCount"`
	ReadCount      int        `json:"readCount"`
	FailedCount    int        `json:"failedCount"`
	CreatedAt      time.Time  `json:"createdAt"`
	StartedAt      *time.Time `json:"startedAt,omitempty"`
	CompletedAt    *time.Time `json:"completedAt,omitempty"`
	AbortedAt      *time.Time `json:"abortedAt,omitempty"`
	// PauseReason says why a paused campaign paused (a Switchboard addition).
	PauseReason string `json:"pauseReason,omitempty"`
	// EngineID is the engine the campaign is pinned to (a Switchboard addition).
	EngineID string `json:"engineId,omitempty"`
}

// NewCampaign renders c with its counters, all but PauseReason: whether the
// campaign is paused is for package campaigns to say (campaigns.View).
func NewCampaign(c *ent.Campaign, n Counts) Campaign {
	return Campaign{CmpID: c.ID, Name: c.Name, AudienceID: c.AudienceID, Status: c.Status,
		TotalCount: c.TotalCount, SentCount: n.Sent, DeliveredCount: n.Delivered, ReadCount: n.Read,
		FailedCount: n.Failed, CreatedAt: c.CreatedAt.UTC(), StartedAt: utc(c.StartedAt),
		CompletedAt: utc(c.CompletedAt), AbortedAt: utc(c.AbortedAt), EngineID: c.EngineID}
}
