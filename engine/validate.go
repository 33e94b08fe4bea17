package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
)

// MaxIDLen bounds an identifier an event carries (a chat or contact id, a message
// key's parts, the event's own id), in bytes. Identifiers are indexed: an
// unbounded one would fail the index (PostgreSQL's b-tree rows end near 2.7 kB)
// and with it the batch it came in.
const MaxIDLen = 256

// ErrInvalidEvent marks an event that can never be applied as it is: refused when
// it is received, alone, never stored to fail for hours.
var ErrInvalidEvent = errors.New("engine: invalid event")

// Validate reports why the event can never be applied, or nil. It checks what
// applying the event needs, by type (one check per type), and that every text
// it carries is valid UTF-8 without NUL bytes (which PostgreSQL refuses). The
// error wraps ErrInvalidEvent and names the field.
func (ev Event) Validate() error {
	if path, ok := switchboard.BadText("", ev); ok {
		return invalid(path, "must be valid UTF-8 text without NUL bytes")
	}
	if len(ev.ID) > MaxIDLen {
		return invalid("id", "is longer than %d bytes", MaxIDLen)
	}
	check, ok := eventChecks[ev.Type]
	if !ok {
		if ev.Type == "" {
			return invalid("type", "is missing")
		}
		return invalid("type", "%q is not an event type", truncateText(string(ev.Type), 40))
	}
	return check(ev)
}

// eventChecks are the checks of each event type an engine may report. Session
// events (connected, disconnected) are the server's to tell and have none.
var eventChecks = map[EventType]func(Event) error{
	EventAck:        validateAck,
	EventMessage:    validateMessage,
	EventReaction:   validateMessageChange,
	EventPollVote:   validateMessageChange,
	EventEdited:     validateMessageChange,
	EventRevoked:    validateMessageChange,
	EventPin:        validatePin,
	EventGroup:      validateGroup,
	EventChat:       validateChat,
	EventHistory:    validateHistory,
	EventBlock:      validateBlock,
	EventNewsletter: validateNewsletter,
	EventCall:       validateCall,
	EventStatus:     validateStatus,
}

func validateStatus(ev Event) error {
	st := ev.Status
	switch {
	case st == nil:
		return invalid("status", "is missing")
	case st.Key.Remote != StatusChat:
		return invalid("status.key.remote", "must be %s", StatusChat)
	case !isUserJID(st.From):
		return invalid("status.from", "must be a contact id (<digits>@c.us or <digits>@lid)")
	case !st.Revoked && st.Type == "":
		return invalid("status.type", "is missing")
	}
	return validateKey("status.key", st.Key)
}

func validateCall(ev Event) error {
	c := ev.Call
	switch {
	case c == nil:
		return invalid("call", "is missing")
	case c.ID == "" || len(c.ID) > MaxIDLen:
		return invalid("call.id", "must be 1-%d bytes", MaxIDLen)
	case !isUserJID(c.From):
		return invalid("call.from", "must be a contact id (<digits>@c.us or <digits>@lid)")
	}
	return nil
}

// isUserJID reports whether id is <digits>@c.us or <digits>@lid.
func isUserJID(id string) bool {
	user, server, ok := strings.Cut(id, "@")
	if !ok || user == "" || len(user) > 32 || (server != "c.us" && server != "lid") {
		return false
	}
	for _, r := range user {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Reportable reports whether an engine may report events of type t (session
// events are the server's).
func Reportable(t EventType) bool {
	_, ok := eventChecks[t]
	return ok
}

func validateAck(ev Event) error {
	if err := validateKey("key", ev.Key); err != nil {
		return err
	}
	if ev.Ack < AckError || ev.Ack > AckPlayed {
		return invalid("ack", "must be between %d and %d", AckError, AckPlayed)
	}
	return nil
}

func validateMessage(ev Event) error {
	m := ev.Message
	if m == nil {
		return invalid("message", "is missing")
	}
	if err := validateKey("message.key", m.Key); err != nil {
		return err
	}
	if m.Type == "" {
		return invalid("message.type", "is missing")
	}
	if err := validateChatOf("message", *m); err != nil {
		return err
	}
	if err := validateContent("message", *m); err != nil {
		return err
	}
	return validateID("message.from", m.From, false)
}

// validateContact checks a contact: its id is required; a LID, when given, is
// <digits>@lid and comes with the phone-number form of the id (a mapping).
func validateContact(path string, c ContactInfo) error {
	if err := validateID(path+".id", c.ID, true); err != nil {
		return err
	}
	if c.LID == "" {
		return nil
	}
	if !IsLID(c.LID) {
		return invalid(path+".lid", "must be <digits>@lid")
	}
	if !IsPhoneChat(c.ID) {
		return invalid(path+".id", "must be <digits>@c.us when lid is given")
	}
	return nil
}

// validateChatOf checks the chat of a message: when it is not the key's remote,
// the key came by LID and the chat is its phone-number form.
func validateChatOf(path string, m Incoming) error {
	if m.Chat == "" || m.Chat == m.Key.Remote {
		return nil
	}
	if !IsPhoneChat(m.Chat) {
		return invalid(path+".chat", "must be <digits>@c.us")
	}
	if !IsLID(m.Key.Remote) {
		return invalid(path+".chat", "may differ from key.remote only for a key by LID (<digits>@lid)")
	}
	return nil
}

// validateMessageChange checks a reaction, poll vote, edit or revoke: Key is the
// message it changes.
func validateMessageChange(ev Event) error {
	if err := validateKey("key", ev.Key); err != nil {
		return err
	}
	if ev.Message != nil {
		return validateID("message.from", ev.Message.From, false)
	}
	return nil
}

func validatePin(ev Event) error {
	if err := validateKey("key", ev.Key); err != nil {
		return err
	}
	if ev.Pinned < 0 {
		return invalid("pinnedMs", "must not be negative")
	}
	return nil
}

func validateNewsletter(ev Event) error {
	n := ev.Newsletter
	switch {
	case n == nil:
		return invalid("newsletter", "is missing")
	case ChatKind(n.NewsletterID) != ChatNewsletter || len(n.NewsletterID) > MaxIDLen:
		return invalid("newsletter.newsletterId", "must be a newsletter id (<digits>@newsletter)")
	case n.Action != NewsletterJoined && n.Action != NewsletterLeft && n.Action != NewsletterMuteChanged:
		return invalid("newsletter.action", "must be %s, %s or %s", NewsletterJoined, NewsletterLeft, NewsletterMuteChanged)
	case n.Action == NewsletterMuteChanged && n.Muted == nil:
		return invalid("newsletter.muted", "is missing")
	case n.Chat != nil && n.Chat.ID != n.NewsletterID:
		return invalid("newsletter.chat.id", "must be newsletter.newsletterId")
	}
	switch n.Role {
	case "", NewsletterOwner, NewsletterAdmin, NewsletterSubscriber, NewsletterGuest:
		return nil
	}
	return invalid("newsletter.role", "must be %s, %s, %s or %s", NewsletterOwner, NewsletterAdmin, NewsletterSubscriber, NewsletterGuest)
}

func validateBlock(ev Event) error {
	if ev.Block == nil {
		return invalid("block", "is missing")
	}
	if err := validateID("block.chatId", ev.Block.ChatID, true); err != nil {
		return err
	}
	if ChatKind(ev.Block.ChatID) != ChatContact || !strings.Contains(ev.Block.ChatID, "@") {
		return invalid("block.chatId", "must be a contact's chat id (<digits>@c.us or <digits>@lid)")
	}
	return nil
}

func validateGroup(ev Event) error {
	g := ev.Group
	if g == nil {
		return invalid("group", "is missing")
	}
	if g.Action == "" {
		return invalid("group.action", "is missing")
	}
	if g.Action == GroupCreated {
		if g.Chat == nil {
			return invalid("group.chat", "is missing")
		}
		if err := validateChatState("group.chat", *g.Chat); err != nil {
			return err
		}
	}
	if err := validateID("group.groupId", g.GroupID, g.Action != GroupCreated); err != nil {
		return err
	}
	for i, p := range g.Participants {
		if err := validateID("group.participants."+strconv.Itoa(i), p, true); err != nil {
			return err
		}
	}
	return nil
}

func validateChat(ev Event) error {
	if ev.Chat == nil {
		return invalid("chat", "is missing")
	}
	return validateChatState("chat", *ev.Chat)
}

func validateHistory(ev Event) error {
	h := ev.History
	if h == nil {
		return invalid("history", "is missing")
	}
	for i, c := range h.Chats {
		if err := validateChatState("history.chats."+strconv.Itoa(i), c); err != nil {
			return err
		}
	}
	for i, c := range h.Contacts {
		if err := validateContact("history.contacts."+strconv.Itoa(i), c); err != nil {
			return err
		}
	}
	for i, m := range h.Messages {
		if err := validateKey("history.messages."+strconv.Itoa(i)+".key", m.Key); err != nil {
			return err
		}
		if err := validateChatOf("history.messages."+strconv.Itoa(i), m.Incoming); err != nil {
			return err
		}
		if err := validateContent("history.messages."+strconv.Itoa(i), m.Incoming); err != nil {
			return err
		}
	}
	for i, c := range h.Coverage {
		if err := validateID("history.coverage."+strconv.Itoa(i)+".chatId", c.ChatID, true); err != nil {
			return err
		}
	}
	return nil
}

func validateChatState(path string, c ChatState) error {
	if err := validateID(path+".id", c.ID, true); err != nil {
		return err
	}
	switch c.Kind {
	case "", ChatContact, ChatGroup, ChatNewsletter:
	default:
		return invalid(path+".kind", "must be %s, %s or %s", ChatContact, ChatGroup, ChatNewsletter)
	}
	if c.UnreadCount != nil && *c.UnreadCount < 0 {
		return invalid(path+".unreadCount", "must not be negative")
	}
	if c.Subscribers < 0 {
		return invalid(path+".subscribers", "must not be negative")
	}
	for i, p := range c.Participants {
		if err := validateID(path+".participants."+strconv.Itoa(i)+".id", p.ID, true); err != nil {
			return err
		}
	}
	return nil
}

// validateKey checks a message key: its chat and id are required, and every part
// is bounded.
func validateKey(path string, k Key) error {
	if err := validateID(path+".remote", k.Remote, true); err != nil {
		return err
	}
	if err := validateID(path+".id", k.ID, true); err != nil {
		return err
	}
	return validateID(path+".participant", k.Participant, false)
}

// validateID checks an identifier: present when required, and at most MaxIDLen
// bytes.
func validateID(path, id string, required bool) error {
	switch {
	case id == "" && required:
		return invalid(path, "is missing")
	case len(id) > MaxIDLen:
		return invalid(path, "is longer than %d bytes", MaxIDLen)
	}
	return nil
}

func invalid(path, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s", ErrInvalidEvent, path, fmt.Sprintf(format, args...))
}

// truncateText cuts s to at most n bytes on a rune boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
