package remote

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
)

// State is what a remote engine reports of its session in a state frame
// (docs/engines.md, "State reporting"): the server applies it exactly as it
// applies a gateway's own state. Each state frame replaces the last one whole.
type State struct {
	// Status is unpaired, pairing, connecting, connected, disconnected,
	// logged_out, banned or replaced (another client took the session).
	Status string `json:"status"`
	// HasSynced is true once the phone sent the account's history.
	HasSynced bool `json:"hasSynced,omitempty"`
	// QR is the pairing QR code's payload while status is pairing (GET
	// /v1/engines/{id}/qr answers it); PairingCode the code to type on the
	// phone, when pairing by code.
	QR          string `json:"qr,omitempty"`
	PairingCode string `json:"pairingCode,omitempty"`
	// BannedUntil is set while a temporary ban lasts, BanReason why.
	BannedUntil *time.Time `json:"bannedUntil,omitempty"`
	BanReason   string     `json:"banReason,omitempty"`
	// ReachoutTimelockedUntil is set while the network forbids messaging new
	// contacts (a reach-out time lock).
	ReachoutTimelockedUntil *time.Time `json:"reachoutTimelockedUntil,omitempty"`
	// LastError is the last connection or pairing error, if any.
	LastError string `json:"lastError,omitempty"`
}

// State statuses.
var stateStatuses = map[string]bool{"unpaired": true, "pairing": true, "connecting": true, "connected": true,
	"disconnected": true, "logged_out": true, "banned": true, "replaced": true}

// Bounds of a state frame's texts.
const (
	maxQR          = 4096
	maxPairingCode = 64
	maxStateText   = 1000
)

// Validate reports why a state frame's state cannot be applied, or nil.
func (s *State) Validate() error {
	bad := func(format string, args ...any) error {
		return switchboard.Errorf(switchboard.EVALIDATION, format, args...)
	}
	switch {
	case !stateStatuses[s.Status]:
		return bad("state.status %q is not one of unpaired, pairing, connecting, connected, disconnected, logged_out, banned, replaced", truncate(s.Status))
	case len(s.QR) > maxQR || !utf8.ValidString(s.QR):
		return bad("state.qr is at most %d bytes of UTF-8", maxQR)
	case len(s.PairingCode) > maxPairingCode || !utf8.ValidString(s.PairingCode):
		return bad("state.pairingCode is at most %d bytes of UTF-8", maxPairingCode)
	case len(s.BanReason) > maxStateText || !utf8.ValidString(s.BanReason):
		return bad("state.banReason is at most %d bytes of UTF-8", maxStateText)
	case !utf8.ValidString(s.LastError):
		return bad("state.lastError must be UTF-8")
	}
	return nil
}

// StateRecorder applies a remote engine's reported state to its row, webhooks
// and campaigns, as a gateway's (the host's RecordState), and returns the
// restriction it shows (why, until when; why empty for none).
type StateRecorder func(ctx context.Context, workspaceID, engineID string, s State) (why string, until time.Time, err error)

// reported is the last state a connection reported, as its route carries it.
type reported struct {
	qr, pairingCode string
	restriction     string
	until           time.Time
}

// restrictionAt is the reported restriction still in force at now, or "".
func (r reported) restrictionAt(now time.Time) string {
	if r.restriction == "" || (!r.until.IsZero() && !now.Before(r.until)) {
		return ""
	}
	return r.restriction
}

// applyState applies a state frame off the read loop and answers its ack.
func (c *conn) applyState(ctx context.Context, f *inbound) Frame {
	ack := Frame{Type: FrameStateAck, ID: f.ID}
	if f.State == nil {
		ack.Error = &WireError{Code: switchboard.EVALIDATION, Message: "A state frame carries a state."}
		return ack
	}
	if err := f.State.Validate(); err != nil {
		ack.Error = &WireError{Code: switchboard.EVALIDATION, Message: switchboard.ErrorMessage(err)}
		return ack
	}
	r := reported{}
	if f.State.Status == "pairing" {
		r.qr, r.pairingCode = f.State.QR, f.State.PairingCode
	}
	if rec := c.hub.States; rec != nil {
		why, until, err := rec(ctx, c.workspaceID, c.engineID, *f.State)
		if err != nil {
			c.hub.log().Warn("remote engine state not recorded", "engine", c.engineID, "err", err)
			ack.Error = &WireError{Code: switchboard.ErrorCode(err), Message: fmt.Sprintf("The state was not recorded: %s", switchboard.ErrorMessage(err))}
			return ack
		}
		r.restriction, r.until = why, until
	}
	c.mu.Lock()
	c.reported = r
	c.mu.Unlock()
	if err := c.hub.refresh(ctx, c); err != nil {
		c.hub.log().Warn("remote engine route not renewed", "engine", c.engineID, "err", err)
	}
	return ack
}

// route is the connection's route on this replica, with what it last reported.
func (c *conn) route(replica string) route {
	c.mu.Lock()
	r := c.reported
	c.mu.Unlock()
	return route{Replica: replica, WorkspaceID: c.workspaceID, Kind: c.kind, Capabilities: c.caps, Features: c.features,
		Restriction: r.restrictionAt(time.Now()), QR: r.qr}
}
