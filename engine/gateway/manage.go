package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

var (
	_ engine.Pairer     = (*Engine)(nil)
	_ engine.LoggerOut  = (*Engine)(nil)
	_ engine.Restrictor = (*Engine)(nil)
)

// PairingQR implements engine.Pairer: the payload of the QR code to scan now.
func (e *Engine) PairingQR(ctx context.Context) (string, error) {
	code, _, err := e.QR(ctx)
	return code, err
}

// PairingCode implements engine.Pairer: the code to type on the phone of phone
// (E.164 digits) under Linked devices, Link with phone number.
func (e *Engine) PairingCode(ctx context.Context, phone string) (string, error) {
	return e.PairPhone(ctx, phone)
}

// LoggedOutRestriction is the restriction of an account the phone (or the
// network) logged out: it lasts until the engine is paired again.
const LoggedOutRestriction = "WhatsApp logged the account out: pair the engine again"

// Restriction implements engine.Restrictor: a ban or a reach-out time lock in
// force now, which campaigns wait out.
func (e *Engine) Restriction() (string, bool) {
	why, _, ok := e.State().Restriction(time.Now())
	return why, ok
}

// Restriction says why the network restricts the account at now and until
// when (zero: until someone acts, as for a logout); ok is false when it does
// not.
func (s State) Restriction(now time.Time) (why string, until time.Time, ok bool) {
	if s.Status == StatusLoggedOut {
		return LoggedOutRestriction, time.Time{}, true
	}
	until, err := s.Blocked(now)
	switch {
	case err == nil:
		return "", time.Time{}, false
	case errors.Is(err, ErrBanned) && s.BanReason != "":
		why = "WhatsApp banned the account for now: " + s.BanReason
	case errors.Is(err, ErrBanned):
		why = "WhatsApp banned the account for now"
	default:
		why = "WhatsApp forbids the account to message new contacts for now (reach-out time lock)"
	}
	return fmt.Sprintf("%s, until %s", why, until.UTC().Format(time.RFC3339)), until, true
}
