// Package messaging is the message lifecycle: the statuses a message moves through,
// the compare-and-set transitions between them, and the events each one records.
package messaging

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/view"
	"github.com/switchboardhq/switchboard/webhook"
)

// Status is a message's state, as stored in its status column.
type Status string

// Message statuses (spec "States and transitions").
const (
	StatusPending        Status = "pending"
	StatusBeforeWaSend   Status = "before-wa-send"
	StatusBtSent         Status = "bt-sent"
	StatusSending        Status = "sending"
	StatusSent           Status = "sent"
	StatusSentPendingAck Status = "sent_pending_ack"
	StatusConfirmed      Status = "confirmed"
	StatusDelivered      Status = "delivered"
	StatusReceived       Status = "received"
	StatusRead           Status = "read"
	StatusPlayed         Status = "played"
	StatusCancelled      Status = "cancelled"
	StatusError          Status = "error"
	StatusFailed         Status = "failed"
	StatusExpired        Status = "expired"
)

// Statuses lists every status value, in the spec's order.
var Statuses = []Status{
	StatusPending, StatusBeforeWaSend, StatusBtSent, StatusSending, StatusSent,
	StatusSentPendingAck, StatusConfirmed, StatusDelivered, StatusReceived, StatusRead,
	StatusPlayed, StatusCancelled, StatusError, StatusFailed, StatusExpired,
}

// StatusOf is m's status, typed: the one conversion from the status column.
func StatusOf(m *ent.Message) Status { return Status(m.Status) }

// StatusIs selects the messages in status s.
func StatusIs(s Status) predicate.Message { return message.Status(string(s)) }

// StatusIn selects the messages in any of statuses.
func StatusIn(statuses ...Status) predicate.Message {
	in := make([]string, len(statuses))
	for i, s := range statuses {
		in[i] = string(s)
	}
	return message.StatusIn(in...)
}

// rank orders the forward statuses Switchboard moves a message through. Statuses
// without a rank are terminal.
var rank = map[Status]int{
	StatusPending: 1, StatusSending: 2, StatusConfirmed: 3, StatusReceived: 4,
	StatusRead: 5, StatusPlayed: 6,
}

// IsTerminal reports whether no transition leaves status.
func IsTerminal(status Status) bool { _, ok := rank[status]; return !ok }

// CanMove reports whether a message in status from may move to status to: forward
// along the lifecycle, back from sending to pending (a retried dispatch), or to a
// terminal status from any non-terminal one.
func CanMove(from, to Status) bool {
	rf, okf := rank[from]
	if !okf {
		return false
	}
	if from == StatusSending && to == StatusPending {
		return true
	}
	rt, okt := rank[to]
	if !okt {
		return true
	}
	return rt > rf
}

// StatusForAck maps a network ack to the status it proves.
func StatusForAck(a engine.Ack) Status {
	switch a {
	case engine.AckError:
		return StatusFailed
	case engine.AckServer:
		return StatusConfirmed
	case engine.AckDevice:
		return StatusReceived
	case engine.AckRead:
		return StatusRead
	case engine.AckPlayed:
		return StatusPlayed
	}
	return StatusPending
}

// AckForStatus maps a status to the network ack number clients see.
func AckForStatus(status Status) int {
	switch status {
	case StatusFailed, StatusError, StatusExpired, StatusCancelled:
		return int(engine.AckError)
	case StatusConfirmed, StatusSent, StatusSentPendingAck:
		return int(engine.AckServer)
	case StatusReceived, StatusDelivered:
		return int(engine.AckDevice)
	case StatusRead:
		return int(engine.AckRead)
	case StatusPlayed:
		return int(engine.AckPlayed)
	}
	return int(engine.AckPending)
}

// AckOf is the network ack number clients see for m.
func AckOf(m *ent.Message) int { return AckForStatus(StatusOf(m)) }

// Change is an optional part of a transition: it sets fields both in the update
// and in the copy of the message that Move returns.
type Change func(u *ent.MessageUpdate, next *ent.Message)

// WithReason sets the failure reason.
func WithReason(reason string) Change {
	return func(u *ent.MessageUpdate, next *ent.Message) {
		u.SetFailureReason(reason)
		next.FailureReason = reason
	}
}

// WithKey records the network key of the message.
func WithKey(k engine.Key) Change {
	return func(u *ent.MessageUpdate, next *ent.Message) {
		u.SetWaID(k.ID).SetWaParticipant(k.Participant).SetWaSerialized(k.Serialized())
		next.WaID, next.WaParticipant, next.WaSerialized = k.ID, k.Participant, k.Serialized()
	}
}

// Move moves m to status to at time at, inside tx, if m is still as it was read
// (compare-and-set on its status, and on its claim token while it is sending: a
// claim is taken back only by the one that holds it). Moving to sending takes a new
// claim token. It fills the timestamps of every stage the move proves (a read
// message was also confirmed and received) and records the events the move causes.
// It returns the updated message and whether the move happened. The update is one
// statement: the message returned is m with the same changes applied, not read
// back.
func Move(ctx context.Context, tx *ent.Tx, m *ent.Message, to Status, at time.Time, changes ...Change) (*ent.Message, bool, error) {
	from := StatusOf(m)
	if !CanMove(from, to) {
		return m, false, nil
	}
	now := time.Now()
	next := *m
	u := tx.Message.Update().Where(message.ID(m.ID), message.Status(m.Status)).SetStatus(string(to)).SetUpdatedAt(now)
	// The schema's hook sets queued with the status: leaving the queue writes its
	// index, the later moves are HOT.
	next.Status, next.UpdatedAt, next.Queued = string(to), now, to == StatusPending || to == StatusSending
	if from == StatusSending {
		u.Where(message.ClaimToken(m.ClaimToken)).SetClaimToken("")
		next.ClaimToken = ""
	}
	for _, st := range stampsOf(to) {
		if field := st.field(&next); *field == nil || st.always {
			if err := u.Mutation().SetField(st.column, at); err != nil {
				return m, false, err
			}
			*field = &at
		}
	}
	if to == StatusSending {
		token := switchboard.RandomToken(10)
		u.AddDispatchAttempts(1).SetClaimToken(token)
		next.DispatchAttempts, next.ClaimToken = m.DispatchAttempts+1, token
	}
	for _, c := range changes {
		c(u, &next)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return m, false, fmt.Errorf("messaging: move %s to %s: %w", m.ID, to, err)
	} else if n == 0 {
		return m, false, nil // someone else moved it first
	}
	if err := outbox.RecordAll(ctx, tx, eventsOf(from, &next)); err != nil {
		return m, false, err
	}
	return &next, true, nil
}

// stamp is a timestamp a move sets: column, and the field of the message that
// holds it. It is set when still empty (a message read before keeps the time
// it was first read), or always.
type stamp struct {
	column string
	field  func(*ent.Message) **time.Time
	always bool
}

// stampsOf lists the timestamps a move to status to sets: those of every stage
// the move proves (a read message was also confirmed and received), and the
// time of a failure.
func stampsOf(to Status) []stamp {
	var out []stamp
	r := rank[to]
	if r >= rank[StatusConfirmed] {
		out = append(out, stamp{column: message.FieldConfirmedAt, field: func(m *ent.Message) **time.Time { return &m.ConfirmedAt }})
	}
	if r >= rank[StatusReceived] {
		out = append(out, stamp{column: message.FieldReceivedAt, field: func(m *ent.Message) **time.Time { return &m.ReceivedAt }})
	}
	if r >= rank[StatusRead] {
		out = append(out, stamp{column: message.FieldReadAt, field: func(m *ent.Message) **time.Time { return &m.ReadAt }})
	}
	if to == StatusPlayed {
		out = append(out, stamp{column: message.FieldPlayedAt, field: func(m *ent.Message) **time.Time { return &m.PlayedAt }})
	}
	if to == StatusFailed || to == StatusExpired {
		out = append(out, stamp{column: message.FieldFailedAt, field: func(m *ent.Message) **time.Time { return &m.FailedAt }, always: true})
	}
	return out
}

// eventsOf is what a move from status from records: the events it causes
// (eventsFor), each with the moved message next.
func eventsOf(from Status, next *ent.Message) []outbox.Pending {
	types := eventsFor(from, StatusOf(next))
	if len(types) == 0 {
		return nil
	}
	out, data := make([]outbox.Pending, len(types)), view.NewMessage(next)
	for i, typ := range types {
		out[i] = outbox.Pending{WorkspaceID: next.WorkspaceID, Type: typ, Data: data}
	}
	return out
}

// eventsFor lists the webhook events a move causes.
func eventsFor(from, to Status) []string {
	var out []string
	switch to {
	case StatusSending:
		out = append(out, webhook.EventMessageSending)
	case StatusReceived:
		out = append(out, webhook.EventMessageDelivered)
	case StatusRead:
		out = append(out, webhook.EventMessageRead)
	case StatusFailed, StatusExpired:
		out = append(out, webhook.EventMessageFailed)
	}
	if rank[to] >= rank[StatusReceived] || (to == StatusFailed && rank[from] >= rank[StatusConfirmed]) {
		out = append(out, webhook.EventAckChanged)
	}
	return out
}

// MoveLatest is Move inside tx for a message that other writers may change at the
// same time: when the compare-and-set misses, it reads the message again and tries
// once more while the move is still forward. Acks that race each other and the
// dispatch are all applied this way.
func MoveLatest(ctx context.Context, tx *ent.Tx, m *ent.Message, to Status, at time.Time, changes ...Change) (*ent.Message, bool, error) {
	for attempt := 0; attempt < 5; attempt++ {
		next, moved, err := Move(ctx, tx, m, to, at, changes...)
		if err != nil || moved || !CanMove(StatusOf(m), to) {
			return next, moved, err
		}
		if m, err = tx.Message.Get(ctx, m.ID); err != nil {
			return m, false, err
		}
		if !CanMove(StatusOf(m), to) {
			return m, false, nil
		}
	}
	return m, false, fmt.Errorf("messaging: move %s to %s: too much contention", m.ID, to)
}

// InStore selects the messages of the store: everything but the queue's messages
// that never reached the network.
func InStore() predicate.Message {
	return message.Or(message.OriginNEQ(message.OriginScheduled), message.WaSerializedNEQ(""))
}

// Advance is Move in its own transaction that does not give up when another writer
// moved the message first: it reloads the message and tries again for as long as
// the move is still forward. Acks that race each other are all applied this way.
func Advance(ctx context.Context, client *ent.Client, m *ent.Message, to Status, at time.Time, changes ...Change) (*ent.Message, error) {
	for attempt := 0; attempt < 10; attempt++ {
		if !CanMove(StatusOf(m), to) {
			return m, nil
		}
		var moved bool
		err := storage.WithTx(ctx, client, func(tx *ent.Tx) error {
			var err error
			m, moved, err = Move(ctx, tx, m, to, at, changes...)
			return err
		})
		if err != nil || moved {
			return m, err
		}
		if m, err = client.Message.Get(ctx, m.ID); err != nil {
			return m, err
		}
	}
	return m, fmt.Errorf("messaging: move %s to %s: too much contention", m.ID, to)
}

// Queue stores new messages, pending, built by creates (all of them of one
// workspace), and records message.queued for each, inside tx: the one way a
// message enters the queue, whether it comes from the API (one) or a campaign step
// (a batch, in one statement). It returns the stored messages in order.
func Queue(ctx context.Context, tx *ent.Tx, creates ...*ent.MessageCreate) ([]*ent.Message, error) {
	if len(creates) == 0 {
		return nil, nil
	}
	for _, c := range creates {
		c.SetStatus(string(StatusPending))
	}
	ms, err := tx.Message.CreateBulk(creates...).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create message: %w", err)
	}
	if ok, err := outbox.Wants(ctx, tx.Webhook, ms[0].WorkspaceID, webhook.EventMessageQueued); err != nil || !ok {
		return ms, err
	}
	for _, m := range ms {
		if err := outbox.RecordFor(ctx, tx, m.WorkspaceID, webhook.EventMessageQueued, view.NewMessage(m)); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// QueueOne is Queue for one message and a caller with no transaction of its own.
// When no webhook of the workspace wants message.queued there is nothing to
// record beside the row, and it is stored in one statement, without a transaction
// (one round trip instead of three); otherwise Queue runs in a transaction. build
// makes the message on the client it is given.
func QueueOne(ctx context.Context, client *ent.Client, workspaceID string, build func(*ent.Client) *ent.MessageCreate) (*ent.Message, error) {
	wanted, err := outbox.Wants(ctx, client.Webhook, workspaceID, webhook.EventMessageQueued)
	if err != nil {
		return nil, err
	}
	if !wanted {
		m, err := build(client).SetStatus(string(StatusPending)).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("create message: %w", err)
		}
		return m, nil
	}
	var m *ent.Message
	err = storage.WithTx(ctx, client, func(tx *ent.Tx) error {
		ms, err := Queue(ctx, tx, build(tx.Client()))
		if err == nil {
			m = ms[0]
		}
		return err
	})
	return m, err
}
