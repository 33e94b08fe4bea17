package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
)

// Disappearing messages per chat (docs/conversations.md): the timer of a
// contact's or a group's chat, read and set through one engine (capability
// disappearing).

// disappearingChat normalizes the chat id of a timer operation: a contact
// (E.164, <digits>@c.us, <digits>@lid) or a group; 400 otherwise.
func disappearingChat(raw string) (string, error) {
	jid, err := NormalizeChatID(raw)
	if err != nil || engine.ChatKind(jid) == engine.ChatNewsletter {
		msg := "chatId must be a phone number in E.164 form (+15551234567), a contact id (<digits>@c.us), a LID (<digits>@lid) or a group id (<id>@g.us)"
		return "", &switchboard.Error{Code: switchboard.EINVALID, Message: msg + ".",
			Details: []switchboard.Detail{{Path: "chatId", Code: "invalid_string", Message: "Invalid chat " + quote(raw)}}}
	}
	return jid, nil
}

// disappearingTimer is the use case behind disappearingTimer (GET
// /v1/chats/{chatId}/disappearing).
func (r *Resolver) disappearingTimer(ctx context.Context, chatID string, engineID *string) (*model.DisappearingTimer, error) {
	jid, err := disappearingChat(chatID)
	if err != nil {
		return nil, err
	}
	dt, eng, err := actingAs[engine.DisappearingTimer](ctx, r, engineID, engine.CapDisappearing, "reading a chat's disappearing timer")
	if err != nil {
		return nil, err
	}
	secs, err := dt.DisappearingTimer(ctx, jid)
	if err != nil {
		return nil, timerError(jid, err)
	}
	return &model.DisappearingTimer{EngineID: eng.ID(), ChatID: jid, Seconds: int(secs)}, nil
}

// setDisappearingTimer is the use case behind setDisappearingTimer (PUT
// /v1/chats/{chatId}/disappearing): seconds is one of WhatsApp's timers (422
// naming them otherwise).
func (r *Resolver) setDisappearingTimer(ctx context.Context, chatID string, seconds int, engineID *string) (*model.DisappearingTimer, error) {
	jid, err := disappearingChat(chatID)
	if err != nil {
		return nil, err
	}
	if seconds < 0 || !slices.Contains(engine.DisappearingTimers, uint32(seconds)) {
		return nil, fieldError(switchboard.EVALIDATION, "seconds", "invalid_enum_value",
			fmt.Sprintf("seconds must be one of %s (off, 24 hours, 7 days, 90 days), not %d", allowedTimers(), seconds))
	}
	dt, eng, err := actingAs[engine.DisappearingTimer](ctx, r, engineID, engine.CapDisappearing, "setting a chat's disappearing timer")
	if err != nil {
		return nil, err
	}
	if err := dt.SetDisappearingTimer(ctx, jid, uint32(seconds)); err != nil {
		return nil, timerError(jid, err)
	}
	return &model.DisappearingTimer{EngineID: eng.ID(), ChatID: jid, Seconds: seconds}, nil
}

// timerError maps an engine's answer about a chat's timer: a chat the network
// does not know is 404, a timer or chat it refuses 422.
func timerError(jid string, err error) error {
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return notFound("chatId", "The network knows no chat %s.", quote(jid))
	case errors.Is(err, engine.ErrRejected):
		return fieldError(switchboard.EVALIDATION, "chatId", "rejected", "The network refused the timer: "+err.Error())
	}
	return err
}

// allowedTimers lists engine.DisappearingTimers ("0, 86400, ...").
func allowedTimers() string {
	s := make([]string, len(engine.DisappearingTimers))
	for i, t := range engine.DisappearingTimers {
		s[i] = fmt.Sprint(t)
	}
	return strings.Join(s, ", ")
}
