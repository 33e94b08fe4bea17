package messaging

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/webhook"
)

// Every pair of statuses: which moves the lifecycle allows.
func TestCanMove(t *testing.T) {
	allowed := map[Status][]Status{
		StatusPending:   {StatusSending, StatusConfirmed, StatusReceived, StatusRead, StatusPlayed},
		StatusSending:   {StatusPending, StatusConfirmed, StatusReceived, StatusRead, StatusPlayed},
		StatusConfirmed: {StatusReceived, StatusRead, StatusPlayed},
		StatusReceived:  {StatusRead, StatusPlayed},
		StatusRead:      {StatusPlayed},
		StatusPlayed:    {},
	}
	terminal := []Status{StatusBeforeWaSend, StatusBtSent, StatusSent, StatusSentPendingAck, StatusDelivered,
		StatusCancelled, StatusError, StatusFailed, StatusExpired}
	for from, forward := range allowed {
		// Any non-terminal status may also end in a terminal one.
		allowed[from] = append(forward, terminal...)
	}
	for _, from := range Statuses {
		var got []Status
		for _, to := range Statuses {
			if CanMove(from, to) {
				got = append(got, to)
			}
		}
		want := allowed[from]
		if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b Status) bool { return a < b })); diff != "" {
			t.Errorf("moves from %s (-want +got):\n%s", from, diff)
		}
	}
}

func TestAckMapping(t *testing.T) {
	tests := []struct {
		ack    engine.Ack
		status Status
		back   int
	}{
		{engine.AckError, StatusFailed, -1},
		{engine.AckPending, StatusPending, 0},
		{engine.AckServer, StatusConfirmed, 1},
		{engine.AckDevice, StatusReceived, 2},
		{engine.AckRead, StatusRead, 3},
		{engine.AckPlayed, StatusPlayed, 4},
	}
	for _, tt := range tests {
		if got := StatusForAck(tt.ack); got != tt.status {
			t.Errorf("StatusForAck(%d) = %s, want %s", tt.ack, got, tt.status)
		}
		if got := AckForStatus(tt.status); got != tt.back {
			t.Errorf("AckForStatus(%s) = %d, want %d", tt.status, got, tt.back)
		}
	}
}

// The webhook events each move records.
func TestEventsFor(t *testing.T) {
	tests := []struct {
		from, to Status
		want     []string
	}{
		{StatusPending, StatusSending, []string{webhook.EventMessageSending}},
		{StatusSending, StatusPending, nil},
		{StatusSending, StatusConfirmed, nil},
		{StatusConfirmed, StatusReceived, []string{webhook.EventMessageDelivered, webhook.EventAckChanged}},
		{StatusSending, StatusReceived, []string{webhook.EventMessageDelivered, webhook.EventAckChanged}},
		{StatusReceived, StatusRead, []string{webhook.EventMessageRead, webhook.EventAckChanged}},
		{StatusRead, StatusPlayed, []string{webhook.EventAckChanged}},
		{StatusSending, StatusFailed, []string{webhook.EventMessageFailed}},
		{StatusConfirmed, StatusFailed, []string{webhook.EventMessageFailed, webhook.EventAckChanged}},
		{StatusPending, StatusExpired, []string{webhook.EventMessageFailed}},
		{StatusPending, StatusCancelled, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, eventsFor(tt.from, tt.to)); diff != "" {
			t.Errorf("eventsFor(%s, %s) (-want +got):\n%s", tt.from, tt.to, diff)
		}
	}
}

// The statuses no move leaves are exactly the ones outside the forward lifecycle.
func TestIsTerminal(t *testing.T) {
	forward := map[Status]bool{StatusPending: true, StatusSending: true, StatusConfirmed: true,
		StatusReceived: true, StatusRead: true, StatusPlayed: true}
	for _, s := range Statuses {
		if got := IsTerminal(s); got == forward[s] {
			t.Errorf("IsTerminal(%s) = %v", s, got)
		}
	}
	if !IsTerminal("sent ") {
		t.Error("an unknown status must be terminal: nothing may move it")
	}
}
