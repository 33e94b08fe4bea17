package inbox

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/outbox"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// applyBlock records a change of the account's block list as a contact.blocked
// or contact.unblocked event. The block list itself is the network's (read
// through the engine): nothing else is stored.
func applyBlock(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	if ev.Block == nil || ev.Block.ChatID == "" {
		return nil
	}
	typ := wh.EventContactUnblocked
	if ev.Block.Blocked {
		typ = wh.EventContactBlocked
	}
	return outbox.Record(ctx, tx, typ, map[string]any{"engineId": ev.EngineID, "chatId": ev.Block.ChatID, "at": ev.At.UTC()})
}
