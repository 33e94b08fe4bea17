package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	waE2E "go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// carefulClient is the client the engine works through: the whatsmeow client
// (or a fake) with what a careful WhatsApp client does around it, in one
// place for every kind of message and action:
//   - every message sent goes out with the chat's disappearing timer (see
//     timers.go) and is kept in the store afterwards, so a recipient's retry
//     receipt is answered after a restart or on another replica (retrystore.go);
//   - the chats' timers are learned from the events and group infos that pass;
//   - available presence is sent once connected (unless Config.HidePresence),
//     as soon as the account's push name is known.
type carefulClient struct {
	client
	e *Engine

	mu              sync.Mutex
	presencePending bool   // a presence refused for want of a push name
	own             string // the device's JID once known (whatsmeow forgets it at a logout)
}

// careful wraps cl (attach calls it) and makes the store answer cl's retry receipts.
func (e *Engine) careful(cl client) client {
	if c, ok := cl.(*carefulClient); ok {
		return c
	}
	c := &carefulClient{client: cl, e: e}
	cl.SetRetrySource(c.messageForRetry)
	return c
}

// SendMessage implements client: the chat's timer on the way out, the message
// kept once the network took it.
func (c *carefulClient) SendMessage(ctx context.Context, to types.JID, msg *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error) {
	c.applyTimer(ctx, to, msg)
	resp, err := c.client.SendMessage(ctx, to, msg, extra...)
	if err != nil {
		return resp, err
	}
	id := resp.ID
	if id == "" && len(extra) > 0 {
		id = extra[0].ID
	}
	c.remember(ctx, to, id, msg)
	return resp, nil
}

// GetGroupInfo implements client, learning the group's timer on the way.
func (c *carefulClient) GetGroupInfo(ctx context.Context, jid types.JID) (*types.GroupInfo, error) {
	info, err := c.client.GetGroupInfo(ctx, jid)
	if err == nil && info != nil {
		c.groupTimers(ctx, info)
	}
	return info, err
}

// GetJoinedGroups implements client, learning the groups' timers on the way.
func (c *carefulClient) GetJoinedGroups(ctx context.Context) ([]*types.GroupInfo, error) {
	infos, err := c.client.GetJoinedGroups(ctx)
	if err == nil {
		c.groupTimers(ctx, infos...)
	}
	return infos, err
}

// AddEventHandlerWithSuccessStatus implements client: h sees every event after
// the careful client learned what it says of timers, and a connection is
// followed by available presence.
func (c *carefulClient) AddEventHandlerWithSuccessStatus(h whatsmeow.EventHandlerWithSuccessStatus) uint32 {
	return c.client.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		ctx := context.Background()
		switch v := evt.(type) {
		case *events.LoggedOut:
			c.forgetDevice(ctx, c.ownJID())
		case *events.PushNameSetting:
			c.mu.Lock()
			retry := c.presencePending && v.Action.GetName() != ""
			c.mu.Unlock()
			if retry {
				defer c.sendPresence() // once the engine saw the event
			}
		default:
			c.observeTimers(ctx, evt)
		}
		ok := h(evt)
		if _, connected := evt.(*events.Connected); connected && !c.e.cfg.HidePresence {
			c.sendPresence() // one frame written, not a round trip: no need to wait apart
		}
		return ok
	})
}

// sendPresence tells the network the account is available, which it needs to
// show the account's name to recipients. Without a push name yet (a device just
// paired, before the phone's settings synced) whatsmeow refuses; the presence
// is sent again when the push name arrives.
func (c *carefulClient) sendPresence() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.client.SendPresence(ctx, types.PresenceAvailable)
	c.mu.Lock()
	c.presencePending = errors.Is(err, whatsmeow.ErrNoPushName)
	c.mu.Unlock()
	switch {
	case errors.Is(err, whatsmeow.ErrNoPushName):
		c.e.log.Info("gateway: presence waits for the account's push name")
	case err != nil:
		c.e.log.Warn("gateway: send presence", "err", err)
	}
}

// ownJID is the device's JID the store keys its rows by; empty before pairing.
// It stays known after whatsmeow deleted the device at a logout, so that its
// rows can be deleted too.
func (c *carefulClient) ownJID() string {
	own := c.client.OwnID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !own.IsEmpty() {
		c.own = own.String()
	}
	return c.own
}

// Logout implements client, deleting the device's rows with it.
func (c *carefulClient) Logout(ctx context.Context) error {
	our := c.ownJID()
	if err := c.client.Logout(ctx); err != nil {
		return err
	}
	c.forgetDevice(ctx, our)
	return nil
}
