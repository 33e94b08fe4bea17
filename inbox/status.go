package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/outbox"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// Statuses contacts post (docs/status.md) are kept in the story table, one row
// per network status (its id derived from the engine and the status's key, so
// that the same status reported twice finds its row), and delivered as
// status.received events. A revoke marks the row revoked (and is delivered
// too); the account's own statuses are the API's (graph/status.go).

// StatusID is the id of the row of a status an engine received.
func StatusID(engineID string, key engine.Key) string {
	sum := sha256.Sum256([]byte(engineID + "|" + key.Serialized()))
	return "status_" + hex.EncodeToString(sum[:12])
}

// StatusColor is #RRGGBB of an ARGB colour ("" for 0).
func StatusColor(argb uint32) string {
	if argb == 0 {
		return ""
	}
	return fmt.Sprintf("#%06X", argb&0xFFFFFF)
}

// applyStatus stores a contact's status, or marks one revoked, and records
// status.received.
func applyStatus(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	st := ev.Status
	if st == nil {
		return nil
	}
	id := StatusID(ev.EngineID, st.Key)
	row, err := tx.Story.Get(ctx, id)
	switch {
	case ent.IsNotFound(err) && st.Revoked:
		return nil // a status never seen
	case ent.IsNotFound(err):
		c := tx.Story.Create().SetID(id).SetWorkspaceID(ev.WorkspaceID).SetEngineID(ev.EngineID).
			SetFromMe(false).SetAuthor(st.From).SetSenderName(st.SenderName).SetType(statusType(st)).
			SetText(st.Text).SetBackgroundColor(StatusColor(st.BackgroundArgb)).SetFont(st.Font).
			SetStatus("received").SetWaID(st.Key.ID).SetCreatedAt(ev.At).SetExpiresAt(ev.At.Add(engine.StatusLifetime))
		if st.Media != nil {
			c.SetMediaKind(st.Media.Kind).SetMediaMime(st.Media.MimeType)
		}
		if row, err = c.Save(ctx); err != nil {
			return err
		}
	case err != nil:
		return err
	case st.Revoked && row.Status != "revoked":
		if row, err = row.Update().SetStatus("revoked").SetText("").Save(ctx); err != nil {
			return err
		}
	default:
		return nil // reported before
	}
	return outbox.Record(ctx, tx, wh.EventStatusReceived, StatusRecord(row, time.Now()))
}

// statusType is the type a received status is stored with: text, the media's
// kind (image, video, audio...) or unknown.
func statusType(st *engine.StatusUpdate) string {
	switch {
	case st.Type == "text":
		return "text"
	case st.Type == "media" && st.Media != nil && st.Media.Kind != "":
		return st.Media.Kind
	}
	return "unknown"
}

// StatusRecord is a stored status as the API and the status.received event
// tell it (docs/status.md).
func StatusRecord(s *ent.Story, now time.Time) map[string]any {
	out := map[string]any{"id": s.ID, "engineId": s.EngineID, "fromMe": s.FromMe, "from": s.Author,
		"senderName": s.SenderName, "type": s.Type, "text": s.Text, "font": s.Font, "status": s.Status,
		"waMessageId": s.WaID, "createdAt": s.CreatedAt.UTC(), "expiresAt": s.ExpiresAt.UTC(),
		"expired": !now.Before(s.ExpiresAt)}
	if s.BackgroundColor != "" {
		out["backgroundColor"] = s.BackgroundColor
	}
	if s.MediaURL != "" {
		out["mediaUrl"] = s.MediaURL
	}
	if s.MediaMime != "" {
		out["mediaMimeType"] = s.MediaMime
	}
	if len(s.Audience) > 0 {
		out["audience"] = s.Audience
	}
	return out
}
