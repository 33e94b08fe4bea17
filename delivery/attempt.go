package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/metrics"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/poll"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/viewer"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// RetryAfter is the error of an attempt that is to be made again after Delay:
// the next step of the retry schedule, or the time left before a delivery is due.
type RetryAfter struct {
	Delay time.Duration
	Cause string
}

func (e *RetryAfter) Error() string {
	return fmt.Sprintf("retry in %s: %s", e.Delay, e.Cause)
}

// Attempt makes one attempt of delivery deliveryID of workspaceID and records it.
// The attempt number comes from the database, so a lost Redis task or a killed
// worker only repeats an attempt. A *RetryAfter error says when to try again; a
// delivery that is gone, finished or whose webhook is gone or disabled ends with
// no error.
func (svc *Service) Attempt(ctx context.Context, workspaceID, deliveryID string) error {
	// An attempt whose record a crash loses is made again: webhooks are
	// delivered at least once, and a repeat carries the same webhook-id.
	ctx = viewer.WorkspaceContext(storage.RelaxedCommit(ctx), workspaceID)
	d, err := svc.loadDelivery(ctx, workspaceID, deliveryID)
	if err != nil {
		return err
	}
	if d == nil || d.Status != string(Pending) {
		return nil
	}
	if wait, err := poll.WaitOutRemainder(ctx, d.NextAttemptAt); err != nil {
		return err
	} else if wait > 0 {
		return &RetryAfter{Delay: wait, Cause: "not due yet"}
	}
	now := time.Now()
	hook, ok, err := outbox.Enabled(ctx, svc.Client.Webhook, workspaceID, d.WebhookID)
	if err != nil {
		return err
	} else if !ok {
		// What this process remembers may predate the webhook (made on another
		// replica a moment ago): the database decides.
		hook, err = svc.Client.Webhook.Get(ctx, d.WebhookID)
		switch {
		case ent.IsNotFound(err):
			return svc.finish(ctx, d, Failed, "webhook deleted")
		case err != nil:
			return err
		case hook.Status != string(wh.StatusEnabled):
			return svc.finish(ctx, d, Failed, "webhook disabled")
		}
		outbox.Forget(workspaceID)
	}
	secrets := []string{hook.Secret}
	if hook.PreviousSecret != "" && hook.PreviousSecretExpiresAt != nil && now.Before(*hook.PreviousSecretExpiresAt) {
		secrets = append(secrets, hook.PreviousSecret)
	}
	res := svc.Sender.Send(ctx, wh.Request{URL: hook.URL, WebhookID: hook.ID, DeliveryID: d.ID, Payload: d.Payload, Secrets: secrets})
	if res.OK() {
		return svc.recordSuccess(ctx, d, res, now)
	}
	return svc.record(ctx, d, hook, res, now)
}

// record stores a failed attempt and its consequences: the next try, the end of
// the schedule, or the endpoint's auto-disable.
func (svc *Service) record(ctx context.Context, d *ent.Delivery, hook *ent.Webhook, res wh.Result, at time.Time) error {
	number := d.Attempts + 1
	done := time.Now() // the wait before the next attempt counts from the end of this one
	var delay time.Duration
	disabled := false
	err := storage.WithTx(ctx, svc.Client, func(tx *ent.Tx) error {
		// The webhook first, then the delivery: the order in which deleting a
		// webhook locks them, so that the two never wait on each other in a cycle.
		hook, err := tx.Webhook.UpdateOneID(hook.ID).AddConsecutiveFailures(1).Save(ctx)
		if err != nil {
			return err
		}
		errText := errOr(res)
		if err := newAttempt(tx, d, res, at, errText).Exec(ctx); err != nil {
			return err
		}
		// A bulk update by id: UpdateOne would read the row back, which nothing here uses.
		upd := tx.Delivery.Update().Where(entdelivery.ID(d.ID), entdelivery.Status(string(Pending))).
			SetAttempts(number).SetLastAttemptAt(at).SetLastError(errText)
		if hook.ConsecutiveFailures >= DisableAfter && hook.Status == string(wh.StatusEnabled) {
			if err := tx.Webhook.UpdateOneID(hook.ID).SetStatus(string(wh.StatusDisabled)).SetDisabledAt(at).Exec(ctx); err != nil {
				return err
			}
			disabled = true
			return pendingUpdated(upd.SetStatus(string(Failed)).ClearNextAttemptAt().
				SetLastError(errText + "; webhook disabled after 8 consecutive failures").Save(ctx))
		}
		if number > len(svc.RetrySchedule) {
			return pendingUpdated(upd.SetStatus(string(Failed)).ClearNextAttemptAt().Save(ctx))
		}
		delay = svc.RetrySchedule[number-1]
		return pendingUpdated(upd.SetNextAttemptAt(done.Add(delay)).Save(ctx))
	})
	if errors.Is(err, errNotPending) || ent.IsNotFound(err) {
		return nil // finished elsewhere (a concurrent run), or its webhook deleted meanwhile
	} else if err != nil {
		return err
	}
	if disabled {
		outbox.Announce(ctx, svc.Queue.Redis(), hook.WorkspaceID)
	}
	switch {
	case delay > 0:
		metrics.Deliveries.WithLabelValues("retrying").Inc()
		return &RetryAfter{Delay: time.Until(done.Add(delay)), Cause: errOr(res)}
	default:
		metrics.Deliveries.WithLabelValues(string(Failed)).Inc()
		slog.Warn("webhook delivery failed for good", "delivery", d.ID, "webhook", hook.ID,
			"workspace", hook.WorkspaceID, "attempts", number, "err", errOr(res))
	}
	return nil
}

func errOr(res wh.Result) string {
	if res.Err != "" {
		return res.Err
	}
	return fmt.Sprintf("HTTP %d", res.StatusCode)
}

// errNotPending says a delivery was finished elsewhere (a concurrent run) before
// this one could record its outcome.
var errNotPending = errors.New("delivery no longer pending")

// pendingUpdated turns the count of an update of one pending delivery into an
// error: errNotPending when it updated nothing.
func pendingUpdated(n int, err error) error {
	if err == nil && n == 0 {
		return errNotPending
	}
	return err
}

// finish ends a delivery without an attempt.
func (svc *Service) finish(ctx context.Context, d *ent.Delivery, status Status, reason string) error {
	err := pendingUpdated(svc.Client.Delivery.Update().Where(entdelivery.ID(d.ID), entdelivery.Status(string(Pending))).
		SetStatus(string(status)).SetLastError(reason).ClearNextAttemptAt().Save(ctx))
	if errors.Is(err, errNotPending) {
		return nil
	} else if err != nil {
		return err
	}
	metrics.Deliveries.WithLabelValues(string(status)).Inc()
	slog.Warn("webhook delivery ended without an attempt", "delivery", d.ID, "webhook", d.WebhookID,
		"workspace", d.WorkspaceID, "status", status, "reason", reason)
	return nil
}
