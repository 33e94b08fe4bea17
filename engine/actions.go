package engine

import (
	"context"
	"time"
)

// The narrow, optional interfaces of the message actions an account takes on
// its own messages (docs/conversations.md, "Actions"). Like the conversation
// interfaces, an engine implements the ones it can and Switchboard answers
// engine_unavailable when the engine that holds the message cannot.

// EditWindow is how long after sending the account may edit a message: WhatsApp's
// documented 15 minutes. (whatsmeow's EditWindow, 20 minutes, is what its
// servers still take; Switchboard keeps to what the apps offer.)
const EditWindow = 15 * time.Minute

// Editor is an engine that edits the account's sent messages. Edit replaces the
// text of the message key, or the caption of a media message of mediaKind
// (image, video, gif, document; "" for a text message), and returns once the
// network took the edit; the new text arrives through the sink as an
// EventEdited, as an edit made on the phone does.
type Editor interface {
	Edit(ctx context.Context, key Key, text, mediaKind string) error
}

// Revoker is an engine that deletes messages for everyone: the account's own,
// and in a group where the account is an admin, the participants'. Revoke
// returns once the network took it; the deletion arrives through the sink as an
// EventRevoked. A message the network does not let the account delete is
// ErrRejected.
type Revoker interface {
	Revoke(ctx context.Context, key Key) error
}

// ChatPresence is what a chat shows of the account: typing, recording (a voice
// note) or paused (neither).
type ChatPresence string

// Chat presences.
const (
	PresenceTyping    ChatPresence = "typing"
	PresenceRecording ChatPresence = "recording"
	PresencePaused    ChatPresence = "paused"
)

// ChatPresences lists every ChatPresence.
var ChatPresences = []ChatPresence{PresenceTyping, PresenceRecording, PresencePaused}

// ChatPresencer is an engine that shows the account typing or recording in a
// chat until it says paused (or the network clears it, after about 25 seconds,
// or a message follows). It generalises Typist, which shows typing for a while.
type ChatPresencer interface {
	SetChatPresence(ctx context.Context, chat string, state ChatPresence) error
}
