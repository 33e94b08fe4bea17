package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
)

var _ engine.DisappearingTimer = (*Engine)(nil)

// DisappearingTimer implements engine.DisappearingTimer: the timer kept in
// gateway_chat_timers (timers.go); a group never seen asks its info once. A
// direct chat whose timer the gateway never learned answers 0.
func (e *Engine) DisappearingTimer(ctx context.Context, chatID string) (uint32, error) {
	cl, j, err := e.readyFor(chatID)
	if err != nil {
		return 0, err
	}
	c, ok := cl.(*carefulClient)
	if !ok || e.cfg.Store == nil {
		return 0, fmt.Errorf("gateway: disappearing timer of %s: no store", chatID)
	}
	t, _, err := c.chatTimer(ctx, j)
	if errors.Is(err, whatsmeow.ErrGroupNotFound) {
		return 0, fmt.Errorf("%w: group %s", engine.ErrNotFound, chatID)
	}
	return t.seconds, err
}

// SetDisappearingTimer implements engine.DisappearingTimer with whatsmeow's
// SetDisappearingTimer; the careful client keeps the timer, so the next send
// carries it.
func (e *Engine) SetDisappearingTimer(ctx context.Context, chatID string, seconds uint32) error {
	cl, j, err := e.readyFor(chatID)
	if err != nil {
		return err
	}
	err = cl.SetDisappearingTimer(ctx, j, time.Duration(seconds)*time.Second, time.Now())
	switch {
	case errors.Is(err, whatsmeow.ErrIQNotFound):
		return fmt.Errorf("%w: group %s", engine.ErrNotFound, chatID)
	case errors.Is(err, whatsmeow.ErrInvalidDisappearingTimer):
		return fmt.Errorf("%w: timer %d for %s: %v", engine.ErrRejected, seconds, chatID, err)
	case err != nil:
		return fmt.Errorf("gateway: disappearing timer of %s: %w", chatID, err)
	}
	return nil
}

// SetDisappearingTimer implements client, keeping the timer once the network
// took it.
func (c *carefulClient) SetDisappearingTimer(ctx context.Context, chat types.JID, timer time.Duration, settingTS time.Time) error {
	if err := c.client.SetDisappearingTimer(ctx, chat, timer, settingTS); err != nil {
		return err
	}
	c.setTimer(ctx, chat, chatTimer{seconds: uint32(timer / time.Second), setAt: settingTS.Unix()}, false)
	return nil
}
