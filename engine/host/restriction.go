package host

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/engine/gateway"
	"github.com/switchboardhq/switchboard/ent"
	entengine "github.com/switchboardhq/switchboard/ent/engine"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// A restriction of a gateway's account (a temporary ban, a reach-out time lock,
// a logout: gateway.State.Restriction) is recorded on the engine's row, where
// every replica reads it, with a session.restricted event when it begins or
// changes and a session.unrestricted event when it ends, in the transaction
// that changes the row. The replica that runs the session records what the
// session reports; the reconciler (LiftExpired) ends a restriction whose time
// ran out without a word from the session (a time lock that lapsed, a replica
// that died). Both are compare-and-sets on the row, so each change is recorded
// once, whichever replica sees it first.

// Restricted is the data of a session.restricted event (session.unrestricted
// carries the restriction that ended, without until).
type Restricted struct {
	EngineID string     `json:"engineId"`
	Reason   string     `json:"reason"`
	Until    *time.Time `json:"until,omitempty"`
	At       time.Time  `json:"at"`
}

// recordRestriction records the restriction state s shows on the engine's row
// and, when one ended, tells Lifted. Only a connected session says a
// restriction is over: one that is closing, unpaired or reopened on another
// replica does not know of the ban or logout the row shows (a ban's time
// running out is LiftExpired's).
func (h *Host) recordRestriction(ctx context.Context, engineID string, s gateway.State) {
	now := time.Now()
	why, until, restricted := s.Restriction(now)
	if !restricted && !s.Connected {
		return
	}
	lifted, err := RecordRestriction(ctx, h.Client, engineID, why, until, now)
	if err != nil && !ent.IsNotFound(err) {
		h.log().Warn("gateway restriction not stored", "engine", engineID, "err", err)
		return
	}
	if lifted && h.Lifted != nil {
		go h.Lifted(context.WithoutCancel(ctx), engineID) // not in the session's event handler
	}
}

// RecordRestriction stores on the row of engine engineID that the network
// restricts its account for why until until (none when why is empty; no end
// when until is zero), as of now, and records the event the change causes. It
// reports whether a restriction ended.
func RecordRestriction(ctx context.Context, client *ent.Client, engineID, why string, until, now time.Time) (lifted bool, err error) {
	sys := viewer.SystemContext(ctx)
	err = storage.WithTx(sys, client, func(tx *ent.Tx) error {
		row, err := tx.Engine.Get(sys, engineID)
		if err != nil {
			return err
		}
		if row.Restriction == why {
			return nil
		}
		u := tx.Engine.Update().Where(entengine.ID(engineID), entengine.Restriction(row.Restriction)).SetRestriction(why)
		if until.IsZero() {
			u.ClearRestrictedUntil()
		} else {
			u.SetRestrictedUntil(until)
		}
		if n, err := u.Save(sys); err != nil || n == 0 {
			return err // n == 0: another replica changed it first
		}
		if why == "" {
			lifted = true
			return recordLifted(sys, tx, row, now)
		}
		ev := Restricted{EngineID: engineID, Reason: why, At: now.UTC()}
		if !until.IsZero() {
			u := until.UTC()
			ev.Until = &u
		}
		return outbox.RecordFor(sys, tx, row.WorkspaceID, wh.EventSessionRestricted, ev)
	})
	return lifted, err
}

// recordLifted records session.unrestricted for the restriction row showed.
func recordLifted(ctx context.Context, tx *ent.Tx, row *ent.Engine, now time.Time) error {
	return outbox.RecordFor(ctx, tx, row.WorkspaceID, wh.EventSessionUnrestricted,
		Restricted{EngineID: row.ID, Reason: row.Restriction, At: now.UTC()})
}

// LiftExpired ends, as of now, every restriction whose time ran out on an
// engine row that still shows it, recording session.unrestricted for each, and
// returns the engines it lifted. Any replica may run it: each row is lifted
// once.
func LiftExpired(ctx context.Context, client *ent.Client, now time.Time) ([]string, error) {
	sys := viewer.SystemContext(ctx)
	var lifted []string
	for after := ""; ; {
		rows, err := client.Engine.Query().
			Where(entengine.RestrictionNEQ(""), entengine.RestrictedUntilLTE(now), entengine.IDGT(after)).
			Order(ent.Asc(entengine.FieldID)).Limit(liftPage).All(sys)
		if err != nil {
			return lifted, err
		}
		for _, row := range rows {
			after = row.ID
			if ok, err := liftOne(sys, client, row, now); err != nil {
				return lifted, err
			} else if ok {
				lifted = append(lifted, row.ID)
			}
		}
		if len(rows) < liftPage {
			return lifted, nil
		}
	}
}

// liftPage is how many lapsed restrictions LiftExpired reads at a time.
const liftPage = 500

// liftOne ends the lapsed restriction row shows, unless another replica
// changed it first, recording session.unrestricted; ok says it did.
func liftOne(sys context.Context, client *ent.Client, row *ent.Engine, now time.Time) (ok bool, err error) {
	err = storage.WithTx(sys, client, func(tx *ent.Tx) error {
		n, err := tx.Engine.Update().
			Where(entengine.ID(row.ID), entengine.Restriction(row.Restriction), entengine.RestrictedUntilLTE(now)).
			SetRestriction("").ClearRestrictedUntil().Save(sys)
		if err != nil || n == 0 {
			return err
		}
		ok = true
		return recordLifted(sys, tx, row, now)
	})
	return ok, err
}
