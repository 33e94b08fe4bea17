package inbox

import (
	"context"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/outbox"
	wh "github.com/switchboardhq/switchboard/webhook"
)

// NewsletterEvents maps the actions of an EventNewsletter to their webhook
// events.
var NewsletterEvents = map[string]string{
	engine.NewsletterJoined:      wh.EventNewsletterJoined,
	engine.NewsletterLeft:        wh.EventNewsletterLeft,
	engine.NewsletterMuteChanged: wh.EventNewsletterMuteChanged,
}

// applyNewsletter stores the account's role in a newsletter and whether it
// muted it, and records the matching newsletter.* webhook event.
func applyNewsletter(ctx context.Context, tx *ent.Tx, ev engine.Event) error {
	n := ev.Newsletter
	if n == nil {
		return nil
	}
	typ, ok := NewsletterEvents[n.Action]
	if !ok {
		return nil
	}
	c := engine.ChatState{ID: n.NewsletterID, Kind: engine.ChatNewsletter}
	if n.Chat != nil {
		c = *n.Chat
		c.Kind = engine.ChatNewsletter
	}
	switch {
	case n.Action == engine.NewsletterLeft:
		c.Role = engine.NewsletterGuest
	case n.Role != "":
		c.Role = n.Role
	case n.Action == engine.NewsletterJoined && !engine.Following(c.Role):
		c.Role = engine.NewsletterSubscriber
	}
	if n.Muted != nil {
		c.Muted = n.Muted
	}
	if err := upsertChat(ctx, tx, c, false, ev.EngineID); err != nil {
		return err
	}
	data := map[string]any{"engineId": ev.EngineID, "newsletterId": n.NewsletterID, "role": c.Role, "at": ev.At.UTC()}
	if c.Muted != nil {
		data["muted"] = *c.Muted
	}
	return outbox.Record(ctx, tx, typ, data)
}
