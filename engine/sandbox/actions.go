package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
)

// The message actions, as a phone takes them: the network takes them at once
// and reports the change as it reports one made on the phone.
var (
	_ engine.Editor        = (*Engine)(nil)
	_ engine.Revoker       = (*Engine)(nil)
	_ engine.ChatPresencer = (*Engine)(nil)
	_ engine.Typist        = (*Engine)(nil)
)

// Edit implements engine.Editor: an edit of the account's own message,
// reported as an EventEdited by the account; someone else's is rejected.
func (e *Engine) Edit(ctx context.Context, key engine.Key, text, mediaKind string) error {
	if !key.FromMe {
		return fmt.Errorf("%w: only the account's own messages can be edited", engine.ErrRejected)
	}
	me, err := e.me(ctx)
	if err != nil {
		return err
	}
	typ := "text"
	if mediaKind != "" {
		typ = "media"
	}
	return e.report(ctx, engine.Event{Type: engine.EventEdited, Key: key,
		Message: &engine.Incoming{Key: key, From: me, Type: typ, Text: text}})
}

// Revoke implements engine.Revoker: the account's own message, or a
// participant's in a group the account is an admin of (as the network knows
// the group), deleted for everyone and reported as an EventRevoked.
func (e *Engine) Revoke(ctx context.Context, key engine.Key) error {
	me, err := e.me(ctx)
	if err != nil {
		return err
	}
	if !key.FromMe {
		if !strings.HasSuffix(key.Remote, "@g.us") {
			return fmt.Errorf("%w: only the sender, or a group admin, can delete a message for everyone", engine.ErrRejected)
		}
		g, _, err := e.groupOf(ctx, key.Remote)
		if err != nil {
			return err
		}
		if g == nil || !g.isAdmin(me) {
			return fmt.Errorf("%w: only an admin of %s can delete a participant's message", engine.ErrRejected, key.Remote)
		}
	}
	return e.report(ctx, engine.Event{Type: engine.EventRevoked, Key: key, Message: &engine.Incoming{Key: key, From: me}})
}

// SetChatPresence implements engine.ChatPresencer: the network notes the
// presence (Network.Typing).
func (e *Engine) SetChatPresence(ctx context.Context, chat string, state engine.ChatPresence) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !slices.Contains(engine.ChatPresences, state) {
		return fmt.Errorf("%w: unknown chat presence %q", engine.ErrRejected, state)
	}
	e.net.note(e.workspaceID, Typing{Chat: chat, State: state, At: time.Now()})
	return nil
}

// me is the account's own chat id.
func (e *Engine) me(ctx context.Context) (string, error) {
	w, _, err := e.world(ctx)
	if err != nil {
		return "", err
	}
	return w.me, nil
}
