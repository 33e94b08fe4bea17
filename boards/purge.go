package boards

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/board"
	"github.com/switchboardhq/switchboard/ent/boarditem"
	"github.com/switchboardhq/switchboard/viewer"
)

// Retention bounds and default, in days (0 keeps items forever).
const (
	DefaultRetentionDays = 30
	MaxRetentionDays     = 3650
)

// Cutoff is the start of a board's retention window as of now: items last seen
// before it are past the window. It is the zero time for a board that keeps its
// items forever (days 0).
func Cutoff(now time.Time, days int) time.Time {
	if days <= 0 {
		return time.Time{}
	}
	return now.Add(-time.Duration(days) * 24 * time.Hour)
}

// Purge deletes, in every workspace, the board items past their board's retention
// window as of now (last seen before Cutoff; soft-deleted items too) and returns
// how many it deleted. The periodic prune task calls it; items past the window have
// already left the active view (active_only) before they are purged.
func Purge(ctx context.Context, client *ent.Client, now time.Time) (int, error) {
	ctx = viewer.SystemContext(ctx)
	windows, err := client.Board.Query().Where(board.MemoryRetentionDaysGT(0)).Unique(true).
		Select(board.FieldMemoryRetentionDays).Ints(ctx)
	if err != nil {
		return 0, fmt.Errorf("boards: retention windows: %w", err)
	}
	total := 0
	for _, days := range windows {
		n, err := client.BoardItem.Delete().Where(boarditem.LastSeenAtLT(Cutoff(now, days)),
			boarditem.HasBoardWith(board.MemoryRetentionDays(days))).Exec(ctx)
		total += n
		if err != nil {
			return total, fmt.Errorf("boards: purge items kept %d days: %w", days, err)
		}
	}
	return total, nil
}
