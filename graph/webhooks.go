package graph

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/delivery"
	"github.com/switchboardhq/switchboard/ent"
	entdelivery "github.com/switchboardhq/switchboard/ent/delivery"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/netguard"
	"github.com/switchboardhq/switchboard/outbox"
	"github.com/switchboardhq/switchboard/webhook"
)

const (
	maxWebhookURL         = 2048
	maxWebhookDescription = 120
)

// checkWebhookURL validates an endpoint URL: https, and not an internal address
// unless private destinations are allowed (then http is allowed too).
func (r *Resolver) checkWebhookURL(ctx context.Context, p *switchboard.Problems, raw string) {
	if len(raw) > maxWebhookURL {
		p.Add("url", "too_big", "url must be at most %d characters", maxWebhookURL)
		return
	}
	if err := netguard.CheckURL(ctx, raw, r.AllowPrivate, r.AllowPrivate); err != nil {
		if netguard.NeedsAllowPrivate(err) {
			p.Add("url", "invalid_string", "url %v; to send webhooks to http or private addresses for local testing, start the server with --webhook-allow-private (env SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE=true)", err)
			return
		}
		p.Add("url", "invalid_string", "url %v", err)
	}
}

// checkEvents validates a subscription list and returns it without duplicates.
func checkEvents(p *switchboard.Problems, events []string) []string {
	if len(events) == 0 {
		p.Add("events", "too_small", "events must name at least one event type")
		return nil
	}
	var bad, out []string
	for _, e := range events {
		if !webhook.InCatalog(e) {
			bad = append(bad, e)
		} else if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if len(bad) > 0 {
		p.Add("events", "invalid_enum_value", "unknown event types: %s (see the event catalog)", strings.Join(bad, ", "))
	}
	return out
}

func checkDescription(p *switchboard.Problems, d string) {
	if utf8.RuneCountInString(d) > maxWebhookDescription {
		p.Add("description", "too_big", "description must be at most %d characters", maxWebhookDescription)
	}
}

// createWebhook is the use case behind createWebhook.
func (r *Resolver) createWebhook(ctx context.Context, in model.WebhookInput) (*model.CreateWebhookPayload, error) {
	var p switchboard.Problems
	url := deref(in.URL)
	if url == "" {
		p.Add("url", "invalid_type", "url is required")
	} else {
		r.checkWebhookURL(ctx, &p, url)
	}
	events := checkEvents(&p, in.Events)
	checkDescription(&p, deref(in.Description))
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	secret := webhook.NewSecret()
	hook, err := r.Client.Webhook.Create().SetURL(url).SetEvents(events).
		SetDescription(deref(in.Description)).SetSecret(secret).Save(ctx)
	if err != nil {
		return nil, err
	}
	r.webhooksChanged(ctx, hook.WorkspaceID)
	return &model.CreateWebhookPayload{Webhook: hook, Secret: secret}, nil
}

// webhooksChanged tells every replica that the workspace's webhooks changed, so
// that an event which happens after this answer is recorded and delivered by
// whichever replica sees it.
func (r *Resolver) webhooksChanged(ctx context.Context, workspaceID string) {
	outbox.Announce(context.WithoutCancel(ctx), r.Queue.Redis(), workspaceID)
}

// getWebhook returns a webhook of the viewer's workspace or ENOTFOUND.
func (r *Resolver) getWebhook(ctx context.Context, id string) (*ent.Webhook, error) {
	hook, err := r.Client.Webhook.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No webhook with id %s.", quote(id))
	}
	return hook, err
}

// updateWebhook is the use case behind updateWebhook.
func (r *Resolver) updateWebhook(ctx context.Context, id string, in model.WebhookPatch) (*ent.Webhook, error) {
	hook, err := r.getWebhook(ctx, id)
	if err != nil {
		return nil, err
	}
	var p switchboard.Problems
	u := hook.Update()
	if in.URL != nil {
		r.checkWebhookURL(ctx, &p, *in.URL)
		u.SetURL(*in.URL)
	}
	if in.Events != nil {
		u.SetEvents(checkEvents(&p, in.Events))
	}
	if in.Description != nil {
		checkDescription(&p, *in.Description)
		u.SetDescription(*in.Description)
	}
	if s := in.Status; s != nil {
		switch webhook.Status(*s) {
		case webhook.StatusEnabled:
			u.SetStatus(*s).SetConsecutiveFailures(0).ClearDisabledAt()
		case webhook.StatusDisabled:
			if hook.Status != string(webhook.StatusDisabled) {
				u.SetStatus(*s).SetDisabledAt(r.now())
			}
		default:
			p.Add("status", "invalid_enum_value", "status must be enabled or disabled")
		}
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	hook, err = u.Save(ctx)
	if err != nil {
		return nil, err
	}
	r.webhooksChanged(ctx, hook.WorkspaceID)
	return hook, nil
}

// deleteWebhook is the use case behind deleteWebhook. Its deliveries and their
// attempts go with it; a task still queued for one finds nothing and ends.
func (r *Resolver) deleteWebhook(ctx context.Context, id string) (*model.DeletePayload, error) {
	if _, err := r.getWebhook(ctx, id); err != nil {
		return nil, err
	}
	if err := r.Client.Webhook.DeleteOneID(id).Exec(ctx); err != nil {
		return nil, err
	}
	r.webhooksChanged(ctx, viewerWorkspace(ctx))
	return &model.DeletePayload{ID: id, Deleted: true}, nil
}

// rotateSecret is the use case behind rotateWebhookSecret.
func (r *Resolver) rotateSecret(ctx context.Context, id string) (*model.RotateSecretPayload, error) {
	hook, err := r.getWebhook(ctx, id)
	if err != nil {
		return nil, err
	}
	secret := webhook.NewSecret()
	err = hook.Update().SetSecret(secret).SetPreviousSecret(hook.Secret).
		SetPreviousSecretExpiresAt(r.now().Add(delivery.RotationOverlap)).Exec(ctx)
	if err != nil {
		return nil, err
	}
	r.webhooksChanged(ctx, hook.WorkspaceID) // deliveries sign with the new secret from now on
	return &model.RotateSecretPayload{ID: id, Secret: secret}, nil
}

// listWebhooks is the use case behind webhookList.
func (r *Resolver) listWebhooks(ctx context.Context, order *string, limit, skip *int) (*model.WebhookPage, error) {
	l, err := checkListing(limit, skip, order) // newest first unless order=asc
	if err != nil {
		return nil, err
	}
	q := r.Client.Webhook.Query()
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	items, err := q.Order(l.order).Limit(l.limit).Offset(l.skip).All(ctx)
	if err != nil {
		return nil, err
	}
	return &model.WebhookPage{Items: items, Limit: l.limit, Skip: l.skip, Total: total}, nil
}

// listDeliveries is the use case behind webhookDeliveries.
func (r *Resolver) listDeliveries(ctx context.Context, webhookID string, status *string, limit, skip *int) (*model.DeliveryPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if _, err := r.getWebhook(ctx, webhookID); err != nil {
		return nil, err
	}
	q := r.Client.Delivery.Query().Where(entdelivery.WebhookID(webhookID))
	if status != nil {
		if !slices.Contains(delivery.Statuses, delivery.Status(*status)) {
			return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "status must be pending, succeeded or failed.",
				Details: []switchboard.Detail{{Path: "status", Code: "invalid_enum_value", Message: "status must be pending, succeeded or failed"}}}
		}
		q.Where(entdelivery.Status(*status))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	items, err := q.WithAttemptLog().Order(ent.Desc(entdelivery.FieldCreatedAt), ent.Desc(entdelivery.FieldID)).
		Limit(l).Offset(s).All(ctx)
	if err != nil {
		return nil, err
	}
	return &model.DeliveryPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// redeliver is the use case behind redeliverWebhookDelivery.
func (r *Resolver) redeliver(ctx context.Context, webhookID, deliveryID string) (*ent.Delivery, error) {
	hook, err := r.getWebhook(ctx, webhookID)
	if err != nil {
		return nil, err
	}
	d, err := r.Client.Delivery.Query().Where(entdelivery.ID(deliveryID), entdelivery.WebhookID(hook.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No delivery %s for webhook %s.", quote(deliveryID), quote(webhookID))
	} else if err != nil {
		return nil, err
	}
	if hook.Status != string(webhook.StatusEnabled) {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "The webhook is disabled; enable it first.")
	}
	return r.Deliveries.Redeliver(ctx, d)
}
