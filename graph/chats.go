package graph

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/messaging"
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

// Scopes of the conversation operations (docs/scopes.md).
const (
	scopeChatsWrite      = switchboard.ScopeChatsWrite
	scopeContactsRead    = switchboard.ScopeContactsRead
	scopeNewslettersRead = switchboard.ScopeNewslettersRead
	scopeNewslettersMake = switchboard.ScopeNewslettersWrite
)

var chatKinds = []string{engine.ChatContact, engine.ChatGroup, engine.ChatNewsletter}

// syncHistory makes sure the store holds the account's recent history before a
// read: the connected engine reports it the first time (the sandbox does), and
// the read waits until it is applied. Without an engine the store answers as it is.
func (r *Resolver) syncHistory(ctx context.Context) error {
	eng, err := r.Engines.Pick(ctx, viewerWorkspace(ctx))
	if err != nil {
		return nil
	}
	s, ok := eng.(engine.HistorySyncer)
	if !ok {
		return nil
	}
	reported, err := s.SyncHistory(ctx)
	if err != nil || !reported {
		return err
	}
	return r.settle(ctx, syncWait)
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
	var zero T
	eng, err := r.Engines.Pick(ctx, viewerWorkspace(ctx))
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
	c, err := r.Client.Chat.Query().Where(chat.Jid(jid)).Only(ctx)
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
	q := r.Client.Message.Query()
	if _, ok := engine.ParseKey(key); ok {
		q.Where(message.WaSerialized(key))
	} else if chatID != nil {
		chat := *chatID
		if e164RE.MatchString(chat) { // a phone number names its contact chat
			chat = chat[1:] + "@c.us"
		}
		q.Where(message.WaID(key), message.To(chat))
	} else {
		q.Where(message.WaID(key))
	}
	m, err := q.First(ctx)
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
	q := r.Client.Chat.Query().Where(chat.Archived(false))
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	chats, err := q.Order(ent.Desc(chat.FieldPinned), byLastMessage(), ent.Asc(chat.FieldID)).Limit(nc).All(ctx)
	if err != nil {
		return nil, err
	}
	out := &model.LatestChats{Chats: make([]*model.LatestChat, len(chats)), TotalChats: total, NumberOfChats: nc, NumberOfMessages: nm}
	byChat := make(map[string]*model.LatestChat, len(chats))
	jids := make([]string, len(chats))
	for i, c := range chats {
		out.Chats[i] = &model.LatestChat{Chat: c, Messages: []*ent.Message{}}
		byChat[c.Jid], jids[i] = out.Chats[i], c.Jid
	}
	if nm == 0 || len(chats) == 0 {
		return out, nil
	}
	// The latest nm messages of every chat of the page, in one query.
	mq := r.Client.Message.Query().Where(messaging.InStore())
	if len(fields) > 0 {
		mq.Select(fields...)
	}
	mq.Modify(latestPerChat(jids, nm))
	msgs, err := mq.All(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if c := byChat[m.To]; c != nil {
			c.Messages = append(c.Messages, m)
		}
	}
	for _, c := range out.Chats { // newest first; the query leaves the order to us
		slices.SortFunc(c.Messages, func(a, b *ent.Message) int {
			if d := b.CreatedAt.Compare(a.CreatedAt); d != 0 {
				return d
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	return out, nil
}

// latestPerChat narrows a message query to the n newest messages of each of
// the chats jids, in no particular order.
//
// On PostgreSQL each chat reads its own n newest rows off the index on
// (workspace_id, to, created_at): the query becomes a LATERAL join of the
// chat ids with the original query limited to one chat, so nothing is sorted
// or numbered beyond the rows returned. Elsewhere (SQLite) the rows are
// numbered per chat, newest first, in one window (row_number() OVER (PARTITION
// BY to ORDER BY created_at DESC, id DESC)) and the first n of each chat kept.
// Both stand in for the messages table under the table's own name, so the
// columns ent selects and scans stay as they are.
func latestPerChat(jids []string, n int) func(*sql.Selector) {
	return func(s *sql.Selector) {
		if s.Dialect() == dialect.Postgres {
			one := s.Clone().ClearOrder().
				Where(sql.ExprP(s.C(message.FieldTo)+" = c.jid")).
				OrderBy(sql.Desc(s.C(message.FieldCreatedAt)), sql.Desc(s.C(message.FieldID))).
				Limit(n)
			from := sql.ExprFunc(func(b *sql.Builder) {
				b.WriteString("unnest(").Arg(jids).WriteString("::text[]) AS c(jid) CROSS JOIN LATERAL ")
				b.Wrap(func(b *sql.Builder) { b.Join(one) })
				b.WriteString(" AS ").Ident(message.Table)
			})
			*s = *sql.Dialect(s.Dialect()).Select(s.SelectedColumns()...).FromExpr(from)
			return
		}
		in := make([]driver.Value, len(jids))
		for i, j := range jids {
			in[i] = j
		}
		numbered := s.Clone().ClearOrder().Where(sql.InValues(s.C(message.FieldTo), in...))
		numbered.AppendSelectExprAs(sql.RowNumber().PartitionBy(s.C(message.FieldTo)).OrderExpr(
			sql.Expr(sql.Desc(s.C(message.FieldCreatedAt))), sql.Expr(sql.Desc(s.C(message.FieldID)))), "rn")
		numbered.As(message.Table)
		*s = *sql.Dialect(s.Dialect()).Select(s.SelectedColumns()...).From(numbered).
			Where(sql.LTE(numbered.C("rn"), n))
	}
}

// byLastMessage orders chats newest message first, chats without one last.
func byLastMessage() chat.OrderOption {
	return func(s *sql.Selector) {
		s.OrderExpr(sql.Expr(s.C(chat.FieldLastMessageAt) + " IS NULL"))
		s.OrderBy(sql.Desc(s.C(chat.FieldLastMessageAt)))
	}
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
	q := r.Client.Chat.Query()
	if t := f.SearchToken; t != nil {
		checkSearchToken(&p, "searchToken", *t)
		q.Where(chat.Or(chat.NameContainsFold(*t), chat.JidContains(*t)))
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
	if len(kinds) > 0 {
		var ks []chat.Kind
		for i, k := range kinds {
			if !slices.Contains(chatKinds, k) {
				p.Add("kinds."+itoa(i), "invalid_enum_value", "kinds must be among contact, group, newsletter (got %s)", quote(k))
			}
			ks = append(ks, chat.Kind(k))
		}
		q.Where(chat.KindIn(ks...))
	}
	if f.Since != nil {
		if t, ok := parseTime(&p, "since", *f.Since); ok {
			q.Where(chat.LastMessageAtGTE(t))
		}
	}
	if f.IncludeWithoutName == nil || !*f.IncludeWithoutName {
		q.Where(chat.NameNEQ(""))
	}
	if f.IncludeArchive == nil || !*f.IncludeArchive {
		q.Where(chat.Archived(false))
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	return chatPage(ctx, q, l, s)
}

func chatPage(ctx context.Context, q *ent.ChatQuery, l, s int) (*model.ChatPage, error) {
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	items, err := q.Order(byLastMessage(), ent.Asc(chat.FieldID)).Limit(l).Offset(s).All(ctx)
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
	actor, err := phone[engine.ChatActor](ctx, r, "acting on a chat")
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
