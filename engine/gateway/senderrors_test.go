package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"

	"github.com/switchboardhq/switchboard/engine"
)

// Each error code the network answers a send with ends as ServerErrors says:
// a permanent one rejects the message at once with the table's reason, a
// transient one (or a code the table does not list) leaves it to be retried.
// The errors are built as whatsmeow builds them: the ack's error attribute as
// "server returned error <code>", an info query's status as *IQError wrapped
// by the step that made it.
func TestServerSendErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		rejected bool
		reason   string // in the error's text
	}{
		{"400", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 400), true, "400 bad request"},
		{"401", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 401), true, "401 not authorized"},
		{"403", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 403), true, "403 forbidden"},
		{"404", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 404), true, "not on WhatsApp"},
		{"405", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 405), true, "405 not allowed"},
		{"406", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 406), true, "406 not acceptable"},
		{"421", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 421), false, "device list changed"},
		{"429", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 429), false, "rate-limits"},
		{"463", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 463), true, "reach-out time lock"},
		{"479", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 479), false, "479"},
		{"500", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 500), false, "500 internal server error"},
		{"503", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 503), false, "503 service unavailable"},
		{"unlisted code", fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, 499), false, "server returned error 499"},
		{"device list: 404", fmt.Errorf("failed to get device list: %w", &whatsmeow.IQError{Code: 404, Text: "item-not-found"}), true, "not on WhatsApp"},
		{"device list: 429", fmt.Errorf("failed to get device list: %w", whatsmeow.ErrIQRateOverLimit), false, "rate-limits"},
		{"timeout", whatsmeow.ErrMessageTimedOut, false, "timed out"},
		{"not in group", whatsmeow.ErrNotInGroup, true, "not participating"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			h.f.sendErr = tc.err
			_, err := h.e.Send(context.Background(), engine.Outgoing{WireID: "3EB0E", To: "15552223333@c.us", Type: "text", Text: "x"})
			if err == nil {
				t.Fatal("send succeeded")
			}
			if got := errors.Is(err, engine.ErrRejected); got != tc.rejected {
				t.Errorf("rejected = %v, want %v (%v)", got, tc.rejected, err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not say %q", err, tc.reason)
			}
		})
	}
}

// The table lists each code once.
func TestServerErrorsTable(t *testing.T) {
	seen := map[int]bool{}
	for _, s := range ServerErrors {
		if seen[s.Code] || s.Reason == "" {
			t.Errorf("code %d listed twice or without a reason", s.Code)
		}
		seen[s.Code] = true
	}
	if _, ok := ServerErrorOf(463); !ok {
		t.Error("463 not in the table")
	}
}
