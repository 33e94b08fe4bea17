// Package engine defines what Switchboard needs from a messaging network connection
// (an Engine), the events engines report back, and the per-workspace registry of the
// engines this process holds.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard"
)

// Kinds of engines as the API reports them (spec: Ping result).
const (
	KindGateway = "gateway" // a server-side engine
	KindRegular = "regular" // the user's own browser-extension session
)

// ErrRejected wraps a send error that retrying cannot fix (the recipient is not on
// the network, the media cannot be fetched, ...). Other errors are transient.
var ErrRejected = errors.New("engine: message rejected")

// ErrNoEngine is returned when a workspace has no connected engine.
var ErrNoEngine = errors.New("engine: no engine connected")

// Engine is one live connection to the messaging network for one workspace.
type Engine interface {
	// ID is the stable id of the engine session (its presence client id).
	ID() string
	// Kind is KindGateway or KindRegular.
	Kind() string
	// Send hands a message to the network and returns its key once the network
	// accepted it. Sending the same WireID twice must not deliver twice.
	Send(ctx context.Context, m Outgoing) (Key, error)
	// Close disconnects the engine.
	Close() error
}

// BatchSender is an Engine that can hand many messages to the network at once,
// cheaper than one Send each. SendBatch answers one Sent per message, in order;
// the same rules as Send hold for each of them.
type BatchSender interface {
	SendBatch(ctx context.Context, ms []Outgoing) []Sent
}

// Sent is the outcome of one message of a batch: its key, or why it was not sent
// (ErrRejected for good, any other error for now).
type Sent struct {
	Key Key
	Err error
}

// Outgoing is a message as handed to an engine. Media is always a URL.
type Outgoing struct {
	// WireID is the network id the message must carry (engine.WireID of its
	// Switchboard id): sending the same WireID twice must not deliver twice.
	WireID string `json:"wireId"`
	// To is the recipient chat id (JID).
	To string `json:"to"`
	// Type is text, media, poll, location or vcard.
	Type              string   `json:"type"`
	Text              string   `json:"text,omitempty"`
	MediaURL          string   `json:"mediaUrl,omitempty"`
	MediaKind         string   `json:"mediaKind,omitempty"`
	MediaFilename     string   `json:"mediaFilename,omitempty"`
	PollQuestion      string   `json:"pollQuestion,omitempty"`
	PollOptions       []string `json:"pollOptions,omitempty"`
	PollAllowMultiple bool     `json:"pollAllowMultiple,omitempty"`
	// ReplyTo is the serialized key of the quoted message.
	ReplyTo     string                   `json:"replyTo,omitempty"`
	Mentions    []string                 `json:"mentions,omitempty"`
	LinkPreview *switchboard.LinkPreview `json:"linkPreview,omitempty"`
	// Secret is the message secret (base64) the network uses for polls' votes.
	Secret string `json:"secret,omitempty"`
	// Forwarded marks a message forwarded from another chat: the network shows
	// it as forwarded.
	Forwarded bool `json:"forwarded,omitempty"`
	// Location is the place a message of type location shares.
	Location *Location `json:"location,omitempty"`
	// Contacts are the contact cards of a message of type vcard: one is a
	// contact card, more a contact list.
	Contacts []ContactCard `json:"contacts,omitempty"`
}

// Key identifies a message on the network.
type Key struct {
	FromMe      bool   `json:"fromMe"`
	Remote      string `json:"remote"`
	ID          string `json:"id"`
	Participant string `json:"participant,omitempty"`
}

// Serialized is the key's wire form: "<fromMe>_<remote>_<id>[_<participant>]".
func (k Key) Serialized() string {
	s := fmt.Sprintf("%t_%s_%s", k.FromMe, k.Remote, k.ID)
	if k.Participant != "" {
		s += "_" + k.Participant
	}
	return s
}

// ParseKey parses a serialized key.
func ParseKey(s string) (Key, bool) {
	parts := strings.Split(s, "_")
	if len(parts) < 3 || len(parts) > 4 || (parts[0] != "true" && parts[0] != "false") ||
		parts[1] == "" || parts[2] == "" {
		return Key{}, false
	}
	k := Key{FromMe: parts[0] == "true", Remote: parts[1], ID: parts[2]}
	if len(parts) == 4 {
		k.Participant = parts[3]
	}
	return k, true
}

// WireID derives the network id of an outgoing message from its Switchboard id, so
// that a retried send of the same message carries the same id and is deduplicated.
func WireID(messageID string) string {
	sum := sha256.Sum256([]byte(messageID))
	return "3EB0" + strings.ToUpper(hex.EncodeToString(sum[:9]))
}

// Ack is the delivery state the network reports for an outgoing message.
type Ack int

// Ack values, as the network numbers them.
const (
	AckError   Ack = -1
	AckPending Ack = 0
	AckServer  Ack = 1 // accepted by the network (confirmed)
	AckDevice  Ack = 2 // received by the recipient's device
	AckRead    Ack = 3
	AckPlayed  Ack = 4
)

// EventType names what an engine observed.
type EventType string

// Event types engines report.
const (
	EventAck       EventType = "ack"      // Key, Ack (and Reason for AckError)
	EventMessage   EventType = "message"  // Message: someone messaged the account
	EventReaction  EventType = "reaction" // Key (reacted message), Message.From, Reaction
	EventPollVote  EventType = "poll_vote"
	EventEdited    EventType = "edited"
	EventRevoked   EventType = "revoked"
	EventGroup     EventType = "group"
	EventConnected EventType = "connected"
	EventGone      EventType = "disconnected"
)

// Event is something an engine observed on the network.
type Event struct {
	// ID is the engine's id of the event, the same if the engine reports it again:
	// Switchboard stores an event once per ID. Empty means the engine has none.
	ID          string       `json:"id,omitempty"`
	Type        EventType    `json:"type"`
	WorkspaceID string       `json:"workspaceId"`
	EngineID    string       `json:"engineId"`
	At          time.Time    `json:"at"`
	Key         Key          `json:"key"`
	Ack         Ack          `json:"ack,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	Message     *Incoming    `json:"message,omitempty"`
	Reaction    string       `json:"reaction,omitempty"`
	Votes       []string     `json:"votes,omitempty"`
	Group       *GroupChange `json:"group,omitempty"`
	// History is the slice of history of an EventHistory.
	History *History `json:"history,omitempty"`
	// Chat is the chat an EventChat changes.
	Chat *ChatState `json:"chat,omitempty"`
	// Pinned is how long an EventPin pins Key for; 0 unpins. On the wire it is
	// pinnedMs, whole milliseconds (see Event.MarshalJSON).
	Pinned time.Duration `json:"-"`
	// Call is the incoming call of an EventCall.
	Call *Call `json:"call,omitempty"`
	// Block is the block-list change of an EventBlock.
	Block *BlockChange `json:"block,omitempty"`
	// Newsletter is the change of an EventNewsletter.
	Newsletter *NewsletterChange `json:"newsletter,omitempty"`
	// Status is the contact's status of an EventStatus.
	Status *StatusUpdate `json:"status,omitempty"`
}

// Incoming is a message received from the network.
type Incoming struct {
	Key Key `json:"key"`
	// Chat is the chat the message belongs to when it is not Key.Remote: a
	// message that came by LID (Key.Remote <digits>@lid, the address the network
	// used) from a contact whose phone number the engine knows goes to the
	// phone-number chat. Empty: Key.Remote.
	Chat       string `json:"chat,omitempty"`
	From       string `json:"from"`
	SenderName string `json:"senderName,omitempty"`
	// Type is text, media, poll, location, vcard or unknown (see the Type*
	// constants).
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	QuotedKey string `json:"quotedKey,omitempty"`
	// Media is what the network tells of a media message's attachment.
	Media *MediaInfo `json:"media,omitempty"`
	// Location is the place a location message shares.
	Location *Location `json:"location,omitempty"`
	// Contacts are the contact cards of a vcard message.
	Contacts []ContactCard `json:"vCards,omitempty"`
	// RawType names the network's kind of an unknown message.
	RawType string `json:"rawType,omitempty"`
}

// GroupChange is a change in a group the account is part of. Action is one of
// joined_via_link, added, left, kicked, admin_changed (Value promoted or
// demoted), name_changed, description_changed (Value the new text),
// message_pinned (Value the pinned message's key), GroupCreated (Chat the new
// group), GroupSettingsChanged (Announce, Restrict), GroupJoinRequest
// (Participants asked to join) or GroupJoinApprovalChanged (JoinApproval).
type GroupChange struct {
	GroupID      string     `json:"groupId"`
	Action       string     `json:"action"`
	Participants []string   `json:"participants,omitempty"`
	By           string     `json:"by,omitempty"`
	Value        string     `json:"value,omitempty"`
	Chat         *ChatState `json:"chat,omitempty"`
	Announce     *bool      `json:"announce,omitempty"`
	Restrict     *bool      `json:"restrict,omitempty"`
	// JoinApproval is the setting of a join_approval_changed change.
	JoinApproval *bool `json:"joinApproval,omitempty"`
	// Me is the account's own chat id, so that a change about the account itself
	// (it left, or was removed) is told apart.
	Me string `json:"me,omitempty"`
}

// Subject is what the event is about: the message key, the group or the engine.
// Events about one subject are applied in the order the network observed them.
func (ev Event) Subject() string {
	switch {
	case ev.Type == EventGroup && ev.Group != nil:
		return "group:" + ev.Group.GroupID
	case ev.Type == EventChat && ev.Chat != nil:
		return "chat:" + ev.Chat.ID
	case ev.Type == EventHistory && ev.History != nil && len(ev.History.Coverage) == 1:
		return "chat:" + ev.History.Coverage[0].ChatID
	case ev.Type == EventHistory:
		return "history:" + ev.WorkspaceID
	case ev.Type == EventNewsletter && ev.Newsletter != nil:
		return "chat:" + ev.Newsletter.NewsletterID
	case ev.Type == EventBlock && ev.Block != nil:
		return "contact:" + ev.Block.ChatID
	case ev.Type == EventConnected || ev.Type == EventGone:
		return "engine:" + ev.EngineID
	case ev.Type == EventMessage && ev.Message != nil:
		return "message:" + ev.Message.Key.Serialized()
	case ev.Type == EventCall && ev.Call != nil:
		return "call:" + ev.Call.ID
	case ev.Type == EventStatus && ev.Status != nil:
		return "status:" + ev.Status.Key.Serialized()
	}
	return "message:" + ev.Key.Serialized()
}

// OrderKey is the key that orders the event among others, "ws:<workspace>|<engine>|<subject>":
// its Subject within its workspace and its engine. Events of one key are applied
// in the order the network observed them, and one of them that cannot be applied
// yet holds up the later ones; events of different keys never wait for each
// other, so no workspace (nor engine) can hold up another's events, whatever
// contacts, groups or message keys they share.
func (ev Event) OrderKey() string { return OrderKey(ev.WorkspaceID, ev.EngineID, ev.Subject()) }

// OrderKey is the order key of the events of subject that engineID reported for
// workspaceID (see Event.OrderKey).
func OrderKey(workspaceID, engineID, subject string) string {
	return OrderKeyPrefix + workspaceID + "|" + engineID + "|" + subject
}

// OrderKeyPrefix starts every order key, and no bare subject (stored before
// order keys were scoped).
const OrderKeyPrefix = "ws:"

// ParseOrderKey splits an order key into its workspace, engine and subject; ok
// is false for a bare subject (stored before order keys were scoped).
func ParseOrderKey(key string) (workspaceID, engineID, subject string, ok bool) {
	rest, ok := strings.CutPrefix(key, OrderKeyPrefix)
	if !ok {
		return "", "", key, false
	}
	// Workspace and engine ids hold no "|"; a subject may (a message key's id).
	parts := strings.SplitN(rest, "|", 3)
	if len(parts) != 3 {
		return "", "", key, false
	}
	return parts[0], parts[1], parts[2], true
}

// SubjectOf is the subject an order key (or a bare subject) orders.
func SubjectOf(key string) string {
	_, _, subject, _ := ParseOrderKey(key)
	return subject
}

// Sink receives the events engines report. Implementations must be safe for
// concurrent use and should not block for long. A nil error means the event is
// stored durably and will be applied; an engine that gets an error should report
// the event again later.
type Sink interface {
	HandleEvent(ctx context.Context, ev Event) error
}

// BatchSink is a Sink that can take many events at once. HandleEvents stores all
// of them or returns an error, after which the caller reports them again (a Sink
// keeps an event once per id, so none is taken twice).
type BatchSink interface {
	Sink
	HandleEvents(ctx context.Context, evs []Event) error
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(ctx context.Context, ev Event) error

// HandleEvent calls f.
func (f SinkFunc) HandleEvent(ctx context.Context, ev Event) error { return f(ctx, ev) }
