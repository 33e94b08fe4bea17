package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skip2/go-qrcode"

	"github.com/switchboardhq/switchboard"
)

// Pairing and its end: the QR codes, pairing by phone code, logging out and
// being logged out by the phone.

// qrFirst and qrNext are how long the first pairing code and each later one
// stay valid (whatsmeow's own QR channel uses the same figures).
const (
	qrFirst = 60 * time.Second
	qrNext  = 20 * time.Second
)

// currentQR returns the pairing code valid now, if any.
func (e *Engine) currentQR(now time.Time) (string, bool) {
	if len(e.qr) == 0 {
		return "", false
	}
	elapsed := now.Sub(e.qrAt)
	if elapsed < qrFirst {
		return e.qr[0], true
	}
	i := 1 + int((elapsed-qrFirst)/qrNext)
	if i >= len(e.qr) {
		return "", false
	}
	return e.qr[i], true
}

// qrExpired ends a pairing connection whose codes all expired unscanned, so an
// unpaired engine does not hold a websocket open (or have whatsmeow reconnect
// it) forever; the next QR or PairPhone call connects again.
func (e *Engine) qrExpired(cl client, batch int) {
	e.mu.Lock()
	if e.closed || e.qrBatch != batch || e.cl != cl || !cl.OwnID().IsEmpty() {
		e.mu.Unlock()
		return
	}
	e.qr = nil
	e.mu.Unlock()
	cl.Disconnect()
	e.setState(func(s *State) {
		if s.Status == StatusPairing {
			s.Status = StatusUnpaired
		}
	})
}

// QR returns the pairing QR code valid now, as its raw string and as a PNG
// (256x256). It connects the engine if needed and waits (bounded by ctx) for the
// network to hand out codes; once the codes of a connection run out, it asks
// for fresh ones. Scan it in WhatsApp > Linked devices > Link a device.
func (e *Engine) QR(ctx context.Context) (code string, png []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.QRTimeout)
	defer cancel()
	e.mu.Lock()
	failures := e.failures
	e.mu.Unlock()
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return "", nil, ErrClosed
		}
		if !e.cl.OwnID().IsEmpty() {
			e.mu.Unlock()
			return "", nil, ErrAlreadyPaired
		}
		code, ok := e.currentQR(time.Now())
		expired := !ok && len(e.qr) > 0
		if expired {
			e.qr = nil
		}
		wake, cl := e.qrWake, e.cl
		e.mu.Unlock()
		if ok {
			png, err := qrcode.Encode(code, qrcode.Medium, 256)
			return code, png, err
		}
		if expired {
			cl.Disconnect() // the codes ran out: a new connection brings new ones
		}
		e.setState(func(s *State) {
			if s.Status == StatusUnpaired || s.Status == StatusLoggedOut {
				s.Status = StatusPairing
			}
		})
		e.startConnecting()
		if err := e.awaitCodes(ctx, wake, failures); err != nil {
			return "", nil, err
		}
	}
}

// awaitCodes waits until wake says the network sent pairing codes; it fails
// when a connection attempt failed since failures were counted, or ctx ends.
func (e *Engine) awaitCodes(ctx context.Context, wake <-chan struct{}, failures int) error {
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ErrPairingTimeout
			}
			return ctx.Err()
		case <-wake:
			return nil
		case <-check.C:
			e.mu.Lock()
			failed := e.failures > failures
			e.mu.Unlock()
			if failed {
				return unreachable(e.State().LastError)
			}
		}
	}
}

// PairPhone asks the network for a pairing code for the phone number (digits,
// international format): enter it on the phone in WhatsApp > Linked devices >
// Link with phone number. It connects first if needed (and waits for the
// network's first QR event, as whatsmeow requires).
func (e *Engine) PairPhone(ctx context.Context, phone string) (string, error) {
	if _, _, err := e.QR(ctx); err != nil {
		return "", err
	}
	code, err := e.client().PairPhone(ctx, phone, true, currentIdentity().pairClient(), e.cfg.DisplayName)
	if err != nil {
		return "", fmt.Errorf("gateway: pair phone: %w", err)
	}
	return code, nil
}

// Logout unlinks the device from the phone and deletes its keys from the store.
// The engine stays open and unpaired: QR or PairPhone pair it again.
func (e *Engine) Logout(ctx context.Context) error {
	cl := e.client()
	if cl.OwnID().IsEmpty() {
		return ErrNotPaired
	}
	if err := cl.Logout(ctx); err != nil {
		return fmt.Errorf("gateway: logout: %w", err)
	}
	e.loggedOut(cl, "logout requested")
	return nil
}

// loggedOut resets the engine to a fresh, unpaired device after the phone (or
// Logout) removed this one (cl); a client replaced before is left alone.
func (e *Engine) loggedOut(cl client, reason string) {
	if e.client() != cl {
		return
	}
	e.setState(func(s *State) {
		s.Status, s.Connected, s.DeviceJID, s.Me, s.HasSynced, s.LastError = StatusLoggedOut, false, "", "", false, reason
	})
	if e.newCl == nil {
		return
	}
	fresh, err := e.newCl()
	if err != nil {
		e.log.Error("gateway: no fresh device after logout", "err", err)
		return
	}
	e.mu.Lock()
	closed := e.closed
	e.qr = nil
	e.mu.Unlock()
	if !closed {
		e.attach(fresh)
	}
}

// unreachableError is ErrUnreachable with its cause, the engine's last
// connection error, in its message and details: the API's 503 says why.
type unreachableError struct{ e *switchboard.Error }

func (u unreachableError) Error() string        { return u.e.Error() }
func (u unreachableError) Unwrap() error        { return u.e }
func (u unreachableError) Is(target error) bool { return target == ErrUnreachable }

// unreachable returns ErrUnreachable saying why (cause, redacted), or
// ErrUnreachable itself when there is no cause.
func unreachable(cause string) error {
	if cause == "" {
		return ErrUnreachable
	}
	cause = switchboard.RedactText(cause)
	return unreachableError{&switchboard.Error{Code: switchboard.ENOENGINE,
		Message: "The server cannot reach WhatsApp to pair the engine right now (" + cause + "); it keeps trying.",
		Details: []switchboard.Detail{{Path: "engine", Code: "unreachable", Message: cause}}}}
}
