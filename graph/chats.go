package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
)

// Bounds of the conversation operations (the reference contract's, where it has
// them; ours, documented in docs/conversations.md, where it has none).
const (
	defaultLatestChats    = 50
	maxLatestChats        = 200
	defaultLatestMessages = 20
	maxLatestMessages     = 100
	maxAckKeys            = 200
	maxQueryAny           = 24
	maxMime               = 255
	maxSender             = 128
	maxEmoji              = 32
	defaultParticipants   = 100
	maxParticipants       = 500
	maxNewsletterName     = 100
	maxNewsletterDesc     = 2048
	// defaultContacts is the contacts' page size (the reference's, not the
	// lists' 50); AllContacts reads them allContactsChunk at a time.
	defaultContacts  = 10
	allContactsChunk = 1000
	// DefaultPin is how long a message stays pinned when no duration is given.
	DefaultPin = 7 * 24 * time.Hour
	maxPin     = 30 * 24 * time.Hour
	// maxLoadOlderPages bounds the pages one load-older call pulls.
	maxLoadOlderPages = 10
	// DefaultLoadOlderPace is the wait between two pages of one load-older call.
	DefaultLoadOlderPace = 2500 * time.Millisecond
	// syncWait bounds how long a read waits for a first history sync to be stored.
	syncWait = 60 * time.Second
	// maxPinnedMessages bounds pinnedMessages (WhatsApp pins at most 3 per chat;
	// the bound keeps an engine that reports more from making the page unbounded).
	maxPinnedMessages = 50
)

var chatKinds = []string{engine.ChatContact, engine.ChatGroup, engine.ChatNewsletter}

// syncHistory makes sure the store holds the account's recent history before a
// read: the connected engine reports it the first time (the sandbox does), and
// the read waits until it is applied. Without an engine, or with one that does
// not serve history_sync (a remote engine's handle, or a gateway held by another
// replica, has the method but not the capability), the store answers as it is.
func (r *Resolver) syncHistory(ctx context.Context) error {
	eng, err := r.Engines.Pick(ctx, viewerWorkspace(ctx))
	if err != nil {
		return nil
	}
	s, ok := eng.(engine.HistorySyncer)
	if !ok || !engine.Serves(eng, "history_sync") {
		return nil
	}
	reported, err := s.SyncHistory(ctx)
	if err != nil || !reported {
		return err
	}
	return r.settle(ctx, syncWait)
}

// store reads the conversation store, through the resolver's own client.
func (r *Resolver) store() inbox.Store {
	return inbox.Store{Client: r.Client}
}

// settle waits until what engines reported up to now is stored (bounded by wait).
func (r *Resolver) settle(ctx context.Context, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err := r.Inbox.WaitApplied(ctx, time.Now())
	if errors.Is(err, context.DeadlineExceeded) {
		return switchboard.Errorf(switchboard.EUNAVAILABLE, "The engine's report is still being stored; retry shortly.")
	}
	return err
}

// phone returns the connected engine as the conversation interface T, or
// engine_unavailable.
func phone[T any](ctx context.Context, r *Resolver, what string) (T, error) {
	eng, err := r.Engines.Pick(ctx, viewerWorkspace(ctx))
	return phoneAs[T](eng, err, what)
}

// phoneFor returns the engine that acts in chat as the conversation interface T,
// or engine_unavailable: engineID when it is not "" (the number that holds a
// message), else the one a send to the chat goes through (dispatch.Route: the
// number the conversation last used, else the default).
func phoneFor[T any](ctx context.Context, r *Resolver, chat, engineID, what string) (T, error) {
	eng, err := r.Dispatcher.Route(ctx, viewerWorkspace(ctx), chat, engineID)
	if errors.Is(err, engine.ErrNoEngine) && engineID != "" {
		var zero T
		return zero, switchboard.Errorf(switchboard.ENOENGINE, "The engine %s, which holds it, is not connected; %s needs it.", engineID, what)
	}
	return phoneAs[T](eng, err, what)
}

// phoneAs is eng, picked with err, as T, or engine_unavailable.
func phoneAs[T any](eng engine.Engine, err error, what string) (T, error) {
	var zero T
	if errors.Is(err, engine.ErrNoEngine) {
		return zero, switchboard.Errorf(switchboard.ENOENGINE, "No messaging engine is connected for this account; %s needs the phone.", what)
	} else if err != nil {
		return zero, err
	}
	t, ok := eng.(T)
	if !ok {
		return zero, switchboard.Errorf(switchboard.ENOENGINE, "The connected engine cannot %s.", what)
	}
	return t, nil
}

// act runs an action on the phone and waits until what it reported is stored, so
// that the caller reads its own write.
func (r *Resolver) act(ctx context.Context, do func() error) error {
	if err := do(); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return switchboard.Errorf(switchboard.ENOTFOUND, "The network does not know it.")
		}
		return err
	}
	return r.settle(ctx, 10*time.Second)
}

// chatByID returns a stored chat by its id (JID or E.164 phone), or ENOTFOUND.
func (r *Resolver) chatByID(ctx context.Context, field, raw string) (*ent.Chat, error) {
	jid, err := normalizeField(field, raw)
	if err != nil {
		return nil, err
	}
	c, err := r.store().Chat(ctx, jid)
	if ent.IsNotFound(err) {
		return nil, notFound(field, "No chat with id %s.", quote(jid))
	}
	return c, err
}

// normalizeField normalizes a chat id given in field.
func normalizeField(field, raw string) (string, error) {
	jid, err := NormalizeChatID(raw)
	var e *switchboard.Error
	if errors.As(err, &e) && field != "chatId" {
		e.Details[0].Path = field
		e.Message = strings.Replace(e.Message, "chatId", field, 1)
	}
	return jid, err
}

func notFound(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &switchboard.Error{Code: switchboard.ENOTFOUND, Message: msg,
		Details: []switchboard.Detail{{Path: field, Code: "not_found", Message: msg}}}
}

// storedMessage returns a message of the store by its serialized key (or its bare
// wire id, with the chat), or ENOTFOUND.
func (r *Resolver) storedMessage(ctx context.Context, key string, chatID *string) (*ent.Message, error) {
	var chat *string
	if chatID != nil {
		c := *chatID
		if e164RE.MatchString(c) { // a phone number names its contact chat
			c = c[1:] + "@c.us"
		}
		chat = &c
	}
	m, err := r.store().Message(ctx, key, chat)
	if ent.IsNotFound(err) {
		return nil, notFound("waMessageKey", "No message with key %s.", quote(key))
	}
	return m, err
}

// networkKey is the key of a stored message the phone knows.
func networkKey(m *ent.Message) (engine.Key, error) {
	k, ok := engine.ParseKey(m.WaSerialized)
	if !ok {
		return engine.Key{}, switchboard.Errorf(switchboard.ECONFLICT, "The message has not reached the network yet.")
	}
	return k, nil
}

// LatestChats is the use case behind latestChats: the newest chats with their
// newest messages. fields, when given, are the only message columns read (with
// the id); the REST facade, which renders one fixed shape, names them, while
// GraphQL, whose clients may ask for any field, reads whole rows.
func (r *Resolver) LatestChats(ctx context.Context, numberOfChats, numberOfMessages *int, fields ...string) (*model.LatestChats, error) {
	var p switchboard.Problems
	nc, nm := defaultLatestChats, defaultLatestMessages
	if numberOfChats != nil {
		if nc = *numberOfChats; nc < 1 || nc > maxLatestChats {
			p.Add("numberOfChats", "too_big", "numberOfChats must be between 1 and %d", maxLatestChats)
		}
	}
	if numberOfMessages != nil {
		if nm = *numberOfMessages; nm < 0 || nm > maxLatestMessages {
			p.Add("numberOfMessages", "too_big", "numberOfMessages must be between 0 and %d", maxLatestMessages)
		}
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	chats, total, err := r.store().LatestChats(ctx, nc, nm, fields...)
	if err != nil {
		return nil, err
	}
	out := &model.LatestChats{Chats: make([]*model.LatestChat, len(chats)), TotalChats: total, NumberOfChats: nc, NumberOfMessages: nm}
	for i, c := range chats {
		out.Chats[i] = &model.LatestChat{Chat: c.Chat, Messages: c.Messages}
	}
	return out, nil
}

// chatList is the use case behind chatList and newsletterList.
func (r *Resolver) chatList(ctx context.Context, f *model.ChatFilter, limit, skip *int) (*model.ChatPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if f == nil {
		f = &model.ChatFilter{}
	}
	var p switchboard.Problems
	var cf inbox.ChatFilter
	if t := f.SearchToken; t != nil {
		checkSearchToken(&p, "searchToken", *t)
		cf.Search = *t
	}
	kinds := f.Kinds
	if f.Filter != nil {
		kind, ok := map[string]string{"groups": engine.ChatGroup, "contacts": engine.ChatContact, "newsletters": engine.ChatNewsletter}[*f.Filter]
		if !ok {
			p.Add("filter", "invalid_enum_value", "filter must be one of groups, contacts, newsletters")
		} else {
			kinds = append(kinds, kind)
		}
	}
	if f.Kinds != nil && len(f.Kinds) == 0 {
		p.Add("kinds", "too_small", "kinds must name at least one kind")
	}
	for i, k := range kinds {
		if !slices.Contains(chatKinds, k) {
			p.Add("kinds."+itoa(i), "invalid_enum_value", "kinds must be among contact, group, newsletter (got %s)", quote(k))
		}
	}
	cf.Kinds = kinds
	if f.Since != nil {
		if t, ok := parseTime(&p, "since", *f.Since); ok {
			cf.Since = &t
		}
	}
	cf.Named = f.IncludeWithoutName == nil || !*f.IncludeWithoutName
	cf.Unarchived = f.IncludeArchive == nil || !*f.IncludeArchive
	cf.Engine = engineFilter(&p, f.EngineID)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	items, total, err := r.store().Chats(ctx, cf, l, s)
	if err != nil {
		return nil, err
	}
	return &model.ChatPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

func checkSearchToken(p *switchboard.Problems, field, t string) {
	if n := utf8.RuneCountInString(t); n < 1 || n > maxSearchToken {
		p.Add(field, "too_big", "%s must be 1-%d characters", field, maxSearchToken)
	}
}

// parseTime parses an RFC 3339 time given in field.
func parseTime(p *switchboard.Problems, field, raw string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		p.Add(field, "invalid_string", "%s must be an RFC 3339 date-time", field)
		return time.Time{}, false
	}
	return t, true
}

// markRead, setArchived: the chat use cases that need the phone.
func (r *Resolver) chatAction(ctx context.Context, chatID string, do func(engine.ChatActor, string) error) (bool, error) {
	if err := r.syncHistory(ctx); err != nil {
		return false, err
	}
	c, err := r.chatByID(ctx, "chatId", chatID)
	if err != nil {
		return false, err
	}
	actor, err := phoneFor[engine.ChatActor](ctx, r, c.Jid, "", "acting on a chat")
	if err != nil {
		return false, err
	}
	return err == nil, r.act(ctx, func() error { return do(actor, c.Jid) })
}

// Media downloads: the reference's attempts while the engine is still fetching.
const (
	defaultMediaAttempts = 6
	maxMediaAttempts     = 10
	// DefaultMediaRetryPace is the wait between two download attempts.
	DefaultMediaRetryPace = 1500 * time.Millisecond
	// noMedia is mediaUnavailable for a message that never carried media.
	noMedia = "no_media"
	// mediaError is mediaUnavailable for an unexpected failure of the engine.
	mediaError = "error"
)
