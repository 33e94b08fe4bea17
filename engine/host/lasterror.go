package host

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/viewer"
)

// recordLastError keeps a gateway's last connection or pairing error on its row,
// with when it was reported, for the API (lastError, lastErrorAt): the cause a
// QR's 503 and the dashboard show. A recovered session reports no error and
// leaves the last one in place; the same error again is not written twice.
func (h *Host) recordLastError(ctx context.Context, engineID, lastError string) {
	if lastError == "" {
		return
	}
	lastError = switchboard.RedactText(lastError)
	if len(lastError) > 1000 {
		lastError = strings.ToValidUTF8(lastError[:1000], "")
	}
	err := h.Client.Engine.Update().
		Where(entengine.ID(engineID), entengine.LastErrorNEQ(lastError)).
		SetLastError(lastError).SetLastErrorAt(time.Now()).
		Exec(viewer.SystemContext(ctx))
	if err != nil && !ent.IsNotFound(err) {
		h.log().Warn("gateway last error not stored", "engine", engineID, "err", err)
	}
}
