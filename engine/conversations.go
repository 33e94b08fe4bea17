package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// Event types of the conversation store.
const (
	// EventHistory carries a slice of the account's history (History): chats,
	// contacts and messages the phone synced, at first use or on request.
	EventHistory EventType = "history"
	// EventChat is a change of a chat's state on the phone (Chat): read, archived,
	// pinned.
	EventChat EventType = "chat"
	// EventPin is a message pinned (Pinned > 0: for that long) or unpinned (0).
	EventPin EventType = "pin"
)

// Chat kinds.
const (
	ChatContact    = "contact"
	ChatGroup      = "group"
	ChatNewsletter = "newsletter"
)

// ChatState is what an engine knows of a chat. Identity fields are always set; a
// nil state field is left as the store has it (an EventChat changes only the
// fields it sets; a history sync sets the state of chats the store does not hold
// yet, and never overrides what the account changed since).
type ChatState struct {
	ID           string     `json:"id"`
	Kind         string     `json:"kind"`
	Name         string     `json:"name,omitempty"`
	Pinned       *bool      `json:"pinned,omitempty"`
	Archived     *bool      `json:"archived,omitempty"`
	MarkedUnread *bool      `json:"markedUnread,omitempty"`
	UnreadCount  *int       `json:"unreadCount,omitempty"`
	Owner        string     `json:"owner,omitempty"`
	Description  string     `json:"description,omitempty"`
	CreatedAt    *time.Time `json:"createdAt,omitempty"`
	Restrict     bool       `json:"restrict,omitempty"`
	Announce     bool       `json:"announce,omitempty"`
	// JoinApproval: joining the group by its invite link asks its admins first.
	JoinApproval bool          `json:"joinApproval,omitempty"`
	Participants []Participant `json:"participants,omitempty"`
	Subscribers  int           `json:"subscribers,omitempty"`
	Invite       string        `json:"invite,omitempty"`
	Verification string        `json:"verification,omitempty"`
	// Role is the account's role in a newsletter (NewsletterOwner, ...), when
	// known.
	Role string `json:"role,omitempty"`
	// Muted says whether a newsletter is muted, when known.
	Muted *bool `json:"muted,omitempty"`
}

// Participant is a member of a group.
type Participant struct {
	ID           string `json:"id"`
	IsAdmin      bool   `json:"isAdmin,omitempty"`
	IsSuperAdmin bool   `json:"isSuperAdmin,omitempty"`
}

// ContactInfo is an entry of the account's address book, or someone it talked to.
// ID is the contact's chat id: its phone-number form (<digits>@c.us) when known,
// else its LID (<digits>@lid). LID, set only with a phone-number ID, tells that
// the contact is also addressed by that LID: a mapping the engine learned, after
// which the store keeps one chat per person (docs/conversations.md, "LIDs").
type ContactInfo struct {
	ID         string `json:"id"`
	LID        string `json:"lid,omitempty"`
	Name       string `json:"name,omitempty"`
	PushName   string `json:"pushName,omitempty"`
	IsBusiness bool   `json:"isBusiness,omitempty"`
	Saved      bool   `json:"saved,omitempty"`
	// Changed says what of the contact's details the network reported changed
	// (ContactPicture, ContactAbout, ContactBusiness, ContactPushName): the
	// stored details are stale, and a contact.updated webhook event is due.
	Changed string `json:"changed,omitempty"`
}

// What changed of a contact (ContactInfo.Changed).
const (
	ContactPicture  = "picture"
	ContactAbout    = "about"
	ContactBusiness = "business_name"
	ContactPushName = "push_name"
)

// HistoryMessage is one message of a history sync: any message of the chat, the
// account's own included, in its state at the time of the sync.
type HistoryMessage struct {
	Incoming
	FromMe      bool       `json:"fromMe,omitempty"`
	At          time.Time  `json:"at"`
	Ack         Ack        `json:"ack,omitempty"`
	WireType    string     `json:"wireType,omitempty"`
	MediaKind   string     `json:"mediaKind,omitempty"`
	MediaMime   string     `json:"mediaMime,omitempty"`
	Filename    string     `json:"filename,omitempty"`
	Poll        []string   `json:"poll,omitempty"`
	Reaction    string     `json:"reaction,omitempty"`
	PinnedUntil *time.Time `json:"pinnedUntil,omitempty"`
}

// History is a slice of the account's history. Coverage says how far back the
// store holds a chat's history once it is applied.
type History struct {
	Chats    []ChatState      `json:"chats,omitempty"`
	Contacts []ContactInfo    `json:"contacts,omitempty"`
	Messages []HistoryMessage `json:"messages,omitempty"`
	Coverage []Coverage       `json:"coverage,omitempty"`
}

// Coverage is how far back a chat's history reaches: its oldest message, and
// whether the phone holds anything older.
type Coverage struct {
	ChatID   string    `json:"chatId"`
	OldestAt time.Time `json:"oldestAt"`
	Complete bool      `json:"complete,omitempty"`
}

// The narrow, optional interfaces of the conversation operations. An engine
// implements the ones it can; Switchboard asks with a type assertion and answers
// engine_unavailable when the connected engine cannot.

// HistorySyncer is an engine that reports the account's recent history (chats,
// contacts, messages) through the sink when it first connects. SyncHistory
// reports it unless it was reported before, and says whether it reported now.
// Reporting twice is harmless: history applies idempotently.
type HistorySyncer interface {
	SyncHistory(ctx context.Context) (bool, error)
}

// HistoryLoader is an engine that pulls older history of a chat from the phone.
// LoadOlder reports through the sink one page of the chat's messages older than
// before (an EventHistory), and returns what the page held.
type HistoryLoader interface {
	LoadOlder(ctx context.Context, chatID string, before time.Time) (HistoryPage, error)
}

// HistoryPage is what one LoadOlder call pulled.
type HistoryPage struct {
	// Messages is how many messages the page held.
	Messages int `json:"messages"`
	// OldestAt is the time of the oldest message the store holds after the page.
	OldestAt time.Time `json:"oldestAt"`
	// More is false once the phone has nothing older.
	More bool `json:"more"`
	// Unavailable is true when the phone does not serve this chat's history.
	Unavailable bool `json:"unavailable,omitempty"`
}

// ChatActor is an engine that acts on chats and messages on the phone. Each
// method returns once the network took the action; the new state arrives through
// the sink (EventChat, EventReaction, EventPin).
type ChatActor interface {
	MarkRead(ctx context.Context, chatID string) error
	SetArchived(ctx context.Context, chatID string, archived bool) error
	React(ctx context.Context, key Key, emoji string) error
	// Pin pins a message for d; d == 0 unpins it.
	Pin(ctx context.Context, key Key, d time.Duration) error
}

// Media is the content of a message's attachment: Body when set (streamed,
// never whole in memory; the receiver closes it), else Data.
type Media struct {
	// Data is the bytes (base64 on the wire).
	Data []byte `json:"data,omitempty"`
	// URL, on the engine protocol, is where the bytes are to be fetched
	// instead of Data: the server's own absolute /media URL of a picture it
	// hands an engine that announced the media_refs feature.
	URL string `json:"url,omitempty"`
	// Body streams the bytes (Size long, -1 when unknown); it is used in
	// preference to Data, and whoever receives the Media closes it.
	Body     io.ReadCloser `json:"-"`
	Size     int64         `json:"size,omitempty"`
	MimeType string        `json:"mimeType"`
	Filename string        `json:"filename,omitempty"`
	// Preview marks bytes that are the network's preview (a small JPEG) rather
	// than the original the sender uploaded.
	Preview bool `json:"preview,omitempty"`
	// Ref, when set, replaces the message's MediaInfo.Ref: the network moved
	// the file (a media retry gave it a new direct path).
	Ref []byte `json:"ref,omitempty"`
}

// Reader is the media's bytes as a stream, and a function that releases it.
func (m Media) Reader() (io.Reader, func()) {
	if m.Body != nil {
		return m.Body, func() { _ = m.Body.Close() }
	}
	return bytes.NewReader(m.Data), func() {}
}

// Typist is an engine that shows the account typing: ShowTyping shows "typing…"
// in chat for d, then clears it, and returns once that is done (or ctx ends). A
// direct text send shows it before the message goes (withTyping).
type Typist interface {
	ShowTyping(ctx context.Context, chat string, d time.Duration) error
}

// MediaFetcher is an engine that downloads the media of a message from the
// network. ErrNotFound (the file is gone) or a MediaUnavailableError says why it
// has no bytes.
type MediaFetcher interface {
	FetchMedia(ctx context.Context, key Key) (Media, error)
}

// MediaRefFetcher is a MediaFetcher that downloads from the reference it gave
// with the message (MediaInfo.Ref), so that it needs no memory of the message:
// after a restart, or in another process that took the session over.
type MediaRefFetcher interface {
	FetchMediaRef(ctx context.Context, key Key, ref []byte) (Media, error)
}

// FetchMedia downloads the media of the message key through f, from ref when
// there is one and f can use it.
func FetchMedia(ctx context.Context, f MediaFetcher, key Key, ref []byte) (Media, error) {
	if rf, ok := f.(MediaRefFetcher); ok && len(ref) > 0 {
		return rf.FetchMediaRef(ctx, key, ref)
	}
	return f.FetchMedia(ctx, key)
}

// Why a message's media has no bytes now (the reference's mediaUnavailable).
const (
	// MediaExpired: the network aged the file out; retrying cannot help.
	MediaExpired = "expired"
	// MediaFetching: the engine is still downloading it; ask again shortly.
	MediaFetching = "fetching"
	// MediaAwaitingSender: the network asked the sender's phone to upload it
	// again; it comes when that phone is online.
	MediaAwaitingSender = "awaiting_sender"
)

// MediaUnavailableError is FetchMedia's error when the bytes cannot be had now,
// for Reason (one of the Media* reasons).
type MediaUnavailableError struct {
	Reason  string
	Message string
}

func (e *MediaUnavailableError) Error() string {
	return "engine: media " + e.Reason + ": " + e.Message
}

// NewsletterCreator is an engine that creates newsletters (channels) with a name
// and a description ("" for none). The new newsletter is returned and also
// reported through the sink (EventChat).
type NewsletterCreator interface {
	CreateNewsletter(ctx context.Context, name, description string) (ChatState, error)
}

// IsLID reports whether jid is a user by LID: <digits>@lid.
func IsLID(jid string) bool {
	user, ok := strings.CutSuffix(jid, "@lid")
	return ok && isDigits(user)
}

// IsPhoneChat reports whether jid is a user by phone number: <digits>@c.us.
func IsPhoneChat(jid string) bool {
	user, ok := strings.CutSuffix(jid, "@c.us")
	return ok && isDigits(user)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// ErrNotFound is returned by an engine asked about a chat or message the network
// does not know.
var ErrNotFound = errors.New("engine: not found on the network")

// ChatKind is the kind of the chat a JID names.
func ChatKind(jid string) string {
	switch {
	case strings.HasSuffix(jid, "@g.us"):
		return ChatGroup
	case strings.HasSuffix(jid, "@newsletter"):
		return ChatNewsletter
	}
	return ChatContact
}

// WireType is the network's type of a message of Switchboard's type (text, media,
// poll, location, vcard, unknown) and media kind: chat, image, video, document,
// audio, ptt, sticker, gif, ptv, poll_creation, location, vcard or unknown (a
// message of several cards is multi_vcard: Incoming.WireType).
func WireType(typ, mediaKind string) string {
	switch typ {
	case "text":
		return "chat"
	case "poll":
		return "poll_creation"
	case "media":
		switch mediaKind {
		case "voice":
			return "ptt"
		case "image", "video", "audio", "document", "sticker", "gif", "ptv":
			return mediaKind
		}
		return "document"
	}
	return typ
}

// WireTypes lists every wire type a message can have.
var WireTypes = []string{"chat", "image", "video", "document", "audio", "ptt", "sticker", "gif", "ptv",
	"poll_creation", "location", "vcard", "multi_vcard", "unknown", "revoked"}
