package gateway

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"go.mau.fi/whatsmeow"

	"github.com/switchboardhq/switchboard/engine"
)

// ServerError is what Switchboard makes of an error code the network answers a
// send with: whatsmeow's "server returned error <code>" (the error attribute of
// the message's ack, whatsmeow.ErrServerReturnedError), or the status of an info
// query the send made first (*whatsmeow.IQError, e.g. fetching the recipient's
// devices or prekeys).
type ServerError struct {
	// Code is the network's code.
	Code int
	// Permanent is true when sending the same message again cannot succeed:
	// the message fails at once (engine.ErrRejected) with Reason. Otherwise it
	// stays pending and is retried (dispatch's schedule).
	Permanent bool
	// Reason says what the code means, as the failed message's reason shows it.
	Reason string
}

// ServerErrors is the one table of the network's send error codes (docs/gateway.md,
// "Send errors"). A code not in it is transient.
var ServerErrors = []ServerError{
	{400, true, "the network refused the message as malformed (400 bad request)"},
	{401, true, "the network does not allow the account to send this (401 not authorized)"},
	{403, true, "the recipient cannot be messaged by this account: it blocked the account, or the chat does not allow it (403 forbidden)"},
	{404, true, "the recipient is not on WhatsApp (404 not found)"},
	{405, true, "the network does not allow this message to the recipient (405 not allowed)"},
	{406, true, "the network does not accept this message (406 not acceptable)"},
	{408, false, "the network timed out (408)"},
	{410, true, "the recipient's account is gone (410 gone)"},
	{419, false, "the network's resource limit was reached for now (419)"},
	{420, false, "the network refused the message for now (420)"},
	{421, false, "the network asked to send again: the recipient's device list changed (421)"},
	{429, false, "the network rate-limits the account for now (429)"},
	{463, true, "WhatsApp forbids this account to start a chat with this contact for now (463: reach-out time lock, or a missing privacy token for a contact the account has not talked to); the message is not retried"},
	{479, false, "the network refused the message for now (479: usually stale encryption state; retried)"},
	{500, false, "the network failed (500 internal server error)"},
	{503, false, "the network is unavailable (503 service unavailable)"},
	{530, false, "the network failed in part (530 partial server error)"},
}

// serverErrorRE finds the code in whatsmeow's "server returned error <code>".
var serverErrorRE = regexp.MustCompile(`server returned error (\d+)`)

// serverCode is the network's code in a send error, 0 when it has none.
func serverCode(err error) int {
	var iq *whatsmeow.IQError
	if errors.As(err, &iq) && iq.Code != 0 {
		return iq.Code
	}
	if !errors.Is(err, whatsmeow.ErrServerReturnedError) {
		return 0
	}
	if m := serverErrorRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// ServerErrorOf is the row of ServerErrors for code, ok false when the table
// does not list it (a transient error).
func ServerErrorOf(code int) (ServerError, bool) {
	for _, s := range ServerErrors {
		if s.Code == code {
			return s, true
		}
	}
	return ServerError{}, false
}

// classifySend is ClassifySend, as the engine's sends call it.
var classifySend = ClassifySend

// ClassifySend says what an error of a whatsmeow send means for Switchboard:
// engine.ErrRejected (the message fails at once, with the reason) for what
// ServerErrors or whatsmeow says cannot succeed, else a transient error the
// dispatcher retries.
func ClassifySend(err error) error {
	switch {
	case errors.Is(err, whatsmeow.ErrUnknownServer), errors.Is(err, whatsmeow.ErrRecipientADJID),
		errors.Is(err, whatsmeow.ErrBroadcastListUnsupported), errors.Is(err, whatsmeow.ErrNotInGroup),
		errors.Is(err, whatsmeow.ErrGroupNotFound):
		return fmt.Errorf("%w: %v", engine.ErrRejected, err)
	}
	if code := serverCode(err); code != 0 {
		if s, ok := ServerErrorOf(code); ok && s.Permanent {
			return fmt.Errorf("%w: %s", engine.ErrRejected, s.Reason)
		} else if ok {
			return fmt.Errorf("gateway: send: %s: %w", s.Reason, err)
		}
	}
	return fmt.Errorf("gateway: send: %w", err)
}
