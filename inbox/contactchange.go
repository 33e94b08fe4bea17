package inbox

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/outbox"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// ContactUpdated is the data of a contact.updated event: the network reported
// that a contact changed a detail (docs/contact-details.md).
type ContactUpdated struct {
	ChatID string `json:"chatId"`
	// Changed is picture, about, business_name or push_name.
	Changed string `json:"changed"`
	// PushName is the new push name (with push_name).
	PushName string    `json:"pushName,omitempty"`
	EngineID string    `json:"engineId,omitempty"`
	At       time.Time `json:"timestamp"`
}

// contactUpdated records the contact.updated event of a change engineID
// reported of the contact c (its id already the stored contact's).
func contactUpdated(ctx context.Context, tx *ent.Tx, c engine.ContactInfo, engineID string) error {
	data := ContactUpdated{ChatID: c.ID, Changed: c.Changed, EngineID: engineID, At: time.Now().UTC()}
	if c.Changed == engine.ContactPushName {
		data.PushName = c.PushName
	}
	return outbox.Record(ctx, tx, wh.EventContactUpdated, data)
}
