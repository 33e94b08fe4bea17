package gateway

import (
	"context"
	"fmt"
	"strings"

	"go.mau.fi/whatsmeow/types"

	"github.com/switchboardhq/switchboard/engine"
)

// parseChat turns a Switchboard chat id into a JID: <digits>@c.us (or a bare
// number) is a user on the phone-number server, @g.us a group, @newsletter a
// channel, @lid a user by LID; @s.whatsapp.net is accepted as is.
func parseChat(id string) (types.JID, error) {
	id = strings.TrimSpace(id)
	user, server, found := strings.Cut(id, "@")
	user = strings.TrimPrefix(user, "+")
	if !found {
		server = types.DefaultUserServer
	}
	switch server {
	case types.LegacyUserServer, types.DefaultUserServer:
		if user == "" || strings.Trim(user, "0123456789") != "" {
			return types.JID{}, fmt.Errorf("%w: bad chat id %q", engine.ErrRejected, id)
		}
		return types.NewJID(user, types.DefaultUserServer), nil
	case types.GroupServer, types.NewsletterServer, types.HiddenUserServer, types.BroadcastServer:
		if user == "" {
			return types.JID{}, fmt.Errorf("%w: bad chat id %q", engine.ErrRejected, id)
		}
		return types.NewJID(user, server), nil
	}
	return types.JID{}, fmt.Errorf("%w: unknown chat server in %q", engine.ErrRejected, id)
}

// chatID is the Switchboard chat id of a JID: users on the phone-number server
// become <digits>@c.us; the device part is dropped.
func chatID(j types.JID) string {
	if j.IsEmpty() {
		return ""
	}
	j = j.ToNonAD()
	if j.Server == types.DefaultUserServer {
		return j.User + "@" + types.LegacyUserServer
	}
	return j.String()
}

// pnChatID is chatID of a user in its phone-number form when the device store
// knows it (a LID user has one, alt is the event's alternative address if any).
// A mapping it sees (a LID and its number) is learned, to be reported.
func (e *Engine) pnChatID(ctx context.Context, cl client, j, alt types.JID) string {
	switch j.Server {
	case types.HiddenUserServer:
		if alt.Server == types.DefaultUserServer {
			e.lids.learn(j.ToNonAD(), alt.ToNonAD())
			return chatID(alt)
		}
		if pn, err := cl.AltJID(ctx, j.ToNonAD()); err == nil && pn.Server == types.DefaultUserServer {
			e.lids.learn(j.ToNonAD(), pn.ToNonAD())
			return chatID(pn)
		}
	case types.DefaultUserServer:
		if alt.Server == types.HiddenUserServer {
			e.lids.learn(alt.ToNonAD(), j.ToNonAD())
		}
	}
	return chatID(j)
}

// isMe says whether j is the account itself (any of its devices, PN or LID).
func isMe(cl client, j types.JID) bool {
	if j.IsEmpty() {
		return false
	}
	own, lid := cl.OwnID(), cl.OwnLID()
	return (!own.IsEmpty() && j.User == own.User && j.Server == own.Server) ||
		(!lid.IsEmpty() && j.User == lid.User && j.Server == lid.Server)
}
