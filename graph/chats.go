package graph

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/99designs/gqlgen/graphql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/chatmember"
	"github.com/switchboardhq/switchboard/ent/contact"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/view"
	"github.com/switchboardhq/switchboard/viewer"
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
	if _, err := viewer.Require(ctx, scopeReadStore); err != nil {
		return nil, err
	}
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

// storedMessages is the use case behind storedMessages (GET /v1/messages).
func (r *Resolver) storedMessages(ctx context.Context, f *model.StoredMessageFilter, limit, skip *int) (*model.MessagePage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if f == nil {
		f = &model.StoredMessageFilter{}
	}
	var p switchboard.Problems
	q := r.Client.Message.Query().Where(messaging.InStore())
	order := ent.Desc
	if f.ChatID != nil {
		if !IsJID(*f.ChatID) {
			p.Add("chatId", "invalid_string", "chatId must match ^[0-9]+(?:-[0-9]+)?@(?:c[.]us|g[.]us|newsletter)$")
		}
		q.Where(message.To(*f.ChatID))
	}
	if t := f.SearchToken; t != nil {
		checkSearchToken(&p, "searchToken", *t)
		q.Where(message.Or(message.TextContainsFold(*t), message.PollQuestionContainsFold(*t), message.MediaFilenameContainsFold(*t)))
	}
	if o := f.Order; o != nil {
		switch *o {
		case "asc":
			order = ent.Asc
		case "desc":
		default:
			p.Add("order", "invalid_enum_value", "order must be asc or desc")
		}
	}
	var since, until time.Time
	var hasSince, hasUntil bool
	if f.Since != nil {
		if since, hasSince = parseTime(&p, "since", *f.Since); hasSince {
			q.Where(message.CreatedAtGTE(since))
		}
	}
	if f.Until != nil {
		if until, hasUntil = parseTime(&p, "until", *f.Until); hasUntil {
			q.Where(message.CreatedAtLTE(until))
		}
	}
	if hasSince && hasUntil && since.After(until) {
		p.Add("since", "invalid_range", "since must not be after until")
	}
	if f.MessageTypes != nil {
		if len(f.MessageTypes) == 0 {
			p.Add("messageTypes", "too_small", "messageTypes must name at least one type")
		}
		for i, t := range f.MessageTypes {
			if !slices.Contains(engine.WireTypes, t) {
				p.Add("messageTypes."+itoa(i), "invalid_enum_value", "messageTypes must be among %s (got %s)", strings.Join(engine.WireTypes, ", "), quote(t))
			}
		}
		q.Where(message.WireTypeIn(f.MessageTypes...))
	}
	if f.QueryAny != nil {
		if len(f.QueryAny) > maxQueryAny {
			p.Add("queryAny", "too_big", "queryAny must hold at most %d terms", maxQueryAny)
		}
		var any []predicate.Message
		for i, t := range f.QueryAny {
			checkSearchToken(&p, "queryAny."+itoa(i), t)
			any = append(any, message.TextContainsFold(t), message.PollQuestionContainsFold(t))
		}
		if len(any) > 0 {
			q.Where(message.Or(any...))
		}
	}
	if f.Mime != nil {
		if len(*f.Mime) > maxMime {
			p.Add("mime", "too_big", "mime must be at most %d characters", maxMime)
		}
		if strings.HasSuffix(*f.Mime, "/*") {
			q.Where(message.MediaMimeHasPrefix(strings.TrimSuffix(*f.Mime, "*")))
		} else {
			q.Where(message.MediaMime(*f.Mime))
		}
	}
	if f.FilenameContains != nil {
		if len(*f.FilenameContains) > maxFilename {
			p.Add("filenameContains", "too_big", "filenameContains must be at most %d characters", maxFilename)
		}
		q.Where(message.MediaFilenameContainsFold(*f.FilenameContains))
	}
	if f.HasMedia != nil {
		if *f.HasMedia {
			q.Where(message.TypeEQ("media"))
		} else {
			q.Where(message.TypeNEQ("media"))
		}
	}
	if f.Sender != nil {
		if len(*f.Sender) > maxSender {
			p.Add("sender", "too_big", "sender must be at most %d characters", maxSender)
		}
		if *f.Sender == "me" {
			q.Where(message.FromMe(true))
		} else {
			q.Where(message.Or(message.From(*f.Sender), message.SenderNameContainsFold(*f.Sender)))
		}
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	return messagePage(ctx, q, order, l, s)
}

// messageAcks is the use case behind messageAcks.
func (r *Resolver) messageAcks(ctx context.Context, keys []string, chatID *string) ([]*model.MessageAck, error) {
	var p switchboard.Problems
	if len(keys) < 1 || len(keys) > maxAckKeys {
		p.Add("messageKeys", "too_big", "messageKeys must hold 1-%d keys", maxAckKeys)
	}
	for i, k := range keys {
		if k == "" {
			p.Add("messageKeys."+itoa(i), "too_small", "a message key must not be empty")
		}
	}
	if chatID != nil && !IsJID(*chatID) {
		p.Add("chatId", "invalid_string", "chatId must match ^[0-9]+(?:-[0-9]+)?@(?:c[.]us|g[.]us|newsletter)$")
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	q := r.Client.Message.Query()
	if chatID != nil {
		q.Where(message.To(*chatID), message.Or(message.WaSerializedIn(keys...), message.WaIDIn(keys...)))
	} else {
		q.Where(message.Or(message.WaSerializedIn(keys...), message.WaIDIn(keys...)))
	}
	found, err := q.All(ctx)
	if err != nil {
		return nil, err
	}
	acks := map[string]int{}
	for _, m := range found {
		acks[m.WaSerialized] = messaging.AckForStatus(m.Status)
		acks[m.WaID] = acks[m.WaSerialized]
	}
	out := make([]*model.MessageAck, len(keys))
	for i, k := range keys {
		out[i] = &model.MessageAck{Key: k}
		if a, ok := acks[k]; ok {
			out[i].Ack, out[i].Found = &a, true
		}
	}
	return out, nil
}

// contactList is the use case behind contactList.
func (r *Resolver) contactList(ctx context.Context, searchToken *string, limit, skip *int) (*model.ContactPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if limit == nil {
		l = defaultContacts
	}
	q, total, err := r.contactQuery(ctx, searchToken)
	if err != nil {
		return nil, err
	}
	items, err := q.Limit(l).Offset(s).All(ctx)
	if err != nil {
		return nil, err
	}
	return &model.ContactPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// contactQuery is the contacts a searchToken selects, in the contacts' order
// (saved first, then by name and id), and how many there are.
func (r *Resolver) contactQuery(ctx context.Context, searchToken *string) (*ent.ContactQuery, int, error) {
	var p switchboard.Problems
	q := r.Client.Contact.Query()
	if t := searchToken; t != nil {
		checkSearchToken(&p, "searchToken", *t)
		q.Where(contact.Or(contact.NameContainsFold(*t), contact.PushNameContainsFold(*t), contact.JidContains(*t)))
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, 0, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, 0, err
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	return q.Order(ent.Desc(contact.FieldSaved), ent.Asc(contact.FieldName), ent.Asc(contact.FieldJid)), total, nil
}

// AllContacts is the use case behind GET /v1/contacts?limit=-1 (the reference's
// "every contact in a single page"): the contacts from skip on, in the order of
// contactList, handed to each a chunk at a time (allContactsChunk), so that the
// caller can stream them without holding them all. It calls total with how many
// match in all (the list's total) before the first chunk; each's error ends the
// walk. Errors before total is called (scope, searchToken, skip) are the caller's
// to answer.
func (r *Resolver) AllContacts(ctx context.Context, searchToken *string, skip *int, total func(int), each func([]*ent.Contact) error) error {
	if _, err := viewer.Require(ctx, scopeContactsRead); err != nil {
		return err
	}
	one := 1
	_, s, err := checkPage(&one, skip)
	if err != nil {
		return err
	}
	q, n, err := r.contactQuery(ctx, searchToken)
	if err != nil {
		return err
	}
	total(n)
	for off := s; ; off += allContactsChunk {
		chunk, err := q.Clone().Limit(allContactsChunk).Offset(off).All(ctx)
		if err != nil {
			return err
		}
		if len(chunk) > 0 {
			if err := each(chunk); err != nil {
				return err
			}
		}
		if len(chunk) < allContactsChunk {
			return nil
		}
	}
}

// commonGroups is the use case behind commonGroups.
func (r *Resolver) commonGroups(ctx context.Context, contactID string, limit, skip *int) (*model.ChatPage, error) {
	jid, err := normalizeField("id", contactID)
	if err != nil {
		return nil, err
	}
	if engine.ChatKind(jid) != engine.ChatContact {
		return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "id must be a contact id (<digits>@c.us).",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "id must be a contact id"}}}
	}
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	groups, err := r.Client.ChatMember.Query().Where(chatmember.MemberJid(jid)).Select(chatmember.FieldChatJid).Strings(ctx)
	if err != nil {
		return nil, err
	}
	return chatPage(ctx, r.Client.Chat.Query().Where(chat.JidIn(groups...), chat.KindEQ(chat.KindGroup)), l, s)
}

// chatParticipants is the use case behind chatParticipants.
func (r *Resolver) chatParticipants(ctx context.Context, chatID string, searchToken *string, limit, skip *int) (*model.ParticipantPage, error) {
	var p switchboard.Problems
	l, s := defaultParticipants, 0
	if limit != nil {
		if l = *limit; l < 1 || l > maxParticipants {
			p.Add("limit", "too_big", "limit must be between 1 and %d", maxParticipants)
		}
	}
	if skip != nil {
		if s = *skip; s < 0 {
			p.Add("skip", "too_small", "skip must be 0 or more")
		}
	}
	if searchToken != nil {
		checkSearchToken(&p, "searchToken", *searchToken)
	}
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.chatByID(ctx, "chatId", chatID)
	if err != nil {
		return nil, err
	}
	var members []*ent.ChatMember
	if c.Kind == chat.KindGroup {
		if members, err = r.Client.ChatMember.Query().Where(chatmember.ChatJid(c.Jid)).
			Order(ent.Desc(chatmember.FieldIsSuperAdmin), ent.Desc(chatmember.FieldIsAdmin), ent.Asc(chatmember.FieldMemberJid)).All(ctx); err != nil {
			return nil, err
		}
	} else if c.Kind == chat.KindContact {
		members = []*ent.ChatMember{{ChatJid: c.Jid, MemberJid: c.Jid}}
	}
	jids := make([]string, len(members))
	for i, m := range members {
		jids[i] = m.MemberJid
	}
	contacts, err := r.Client.Contact.Query().Where(contact.JidIn(jids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, ct := range contacts {
		names[ct.Jid] = contactName(ct)
	}
	var all []*model.Participant
	for _, m := range members {
		name := names[m.MemberJid]
		if searchToken != nil && !strings.Contains(strings.ToLower(name+" "+m.MemberJid), strings.ToLower(*searchToken)) {
			continue
		}
		pt := &model.Participant{ChatID: m.MemberJid, IsAdmin: m.IsAdmin, IsSuperAdmin: m.IsSuperAdmin}
		if name != "" {
			pt.Name = &name
		}
		all = append(all, pt)
	}
	page := &model.ParticipantPage{Items: []*model.Participant{}, Limit: l, Skip: s, Total: len(all)}
	if s < len(all) {
		page.Items = all[s:min(len(all), s+l)]
	}
	return page, nil
}

// contactName is the name to show for a contact: the saved one, else its own.
func contactName(c *ent.Contact) string {
	if c.Name != "" {
		return c.Name
	}
	return c.PushName
}

// pinnedMessages is the use case behind pinnedMessages.
func (r *Resolver) pinnedMessages(ctx context.Context, chatID string) (*model.MessagePage, error) {
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.chatByID(ctx, "chatId", chatID)
	if err != nil {
		return nil, err
	}
	items, err := r.Client.Message.Query().Where(message.To(c.Jid), message.PinnedUntilGT(r.now())).
		Order(ent.Desc(message.FieldCreatedAt)).Limit(maxPinnedMessages).All(ctx)
	if err != nil {
		return nil, err
	}
	return &model.MessagePage{Items: items, Limit: len(items), Skip: 0, Total: len(items)}, nil
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

// messageAction runs an action on a stored message through the phone.
func (r *Resolver) messageAction(ctx context.Context, key string, chatID *string, do func(engine.ChatActor, engine.Key) error) (bool, error) {
	m, err := r.storedMessage(ctx, key, chatID)
	if err != nil {
		return false, err
	}
	k, err := networkKey(m)
	if err != nil {
		return false, err
	}
	actor, err := phone[engine.ChatActor](ctx, r, "acting on a message")
	if err != nil {
		return false, err
	}
	return true, r.act(ctx, func() error { return do(actor, k) })
}

// checkEmoji validates a reaction.
func checkEmoji(emoji string) error {
	if utf8.RuneCountInString(emoji) > maxEmoji {
		var p switchboard.Problems
		p.Add("emoji", "too_big", "emoji must be at most %d characters", maxEmoji)
		return p.Err(switchboard.EVALIDATION)
	}
	return nil
}

// pinDuration validates a pin's duration in seconds.
func pinDuration(seconds *int) (time.Duration, error) {
	if seconds == nil {
		return DefaultPin, nil
	}
	d := time.Duration(*seconds) * time.Second
	if *seconds <= 0 || d > maxPin {
		var p switchboard.Problems
		p.Add("duration", "too_big", "duration must be 1-%d seconds", int(maxPin/time.Second))
		return 0, p.Err(switchboard.EVALIDATION)
	}
	return d, nil
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

// messageMedia is the use case behind messageMedia (GET
// /v1/messages/media/{waMessageKey}): where the bytes of a message's attachment
// are served, or why there are none. Media Switchboard stores (an upload, or a
// download made before) and media sent from a public URL are answered at once;
// the rest is downloaded through the engine, up to maxAttempts times
// (defaultMediaAttempts) MediaRetryPace apart while the engine says it is still
// fetching, stored, and answered as an unguessable /media/ URL that the message
// keeps for the next call. A message without media, or whose media the engine
// cannot have, answers mediaUnavailable; no engine at all is still ENOENGINE.
func (r *Resolver) messageMedia(ctx context.Context, key string, chatID *string, maxAttempts *int) (*model.MessageMedia, error) {
	attempts := defaultMediaAttempts
	if maxAttempts != nil {
		if attempts = *maxAttempts; attempts < 1 || attempts > maxMediaAttempts {
			return nil, pageError("maxAttempts", "maxAttempts must be between 1 and %d", maxMediaAttempts)
		}
	}
	m, err := r.storedMessage(ctx, key, chatID)
	if err != nil {
		return nil, err
	}
	out := &model.MessageMedia{}
	if m.MediaMime != "" {
		out.Mimetype = &m.MediaMime
	}
	if m.MediaFilename != "" {
		out.Filename = &m.MediaFilename
	}
	unavailable := func(reason string) (*model.MessageMedia, error) {
		out.MediaUnavailable = &reason
		return out, nil
	}
	if m.Type != "media" {
		return unavailable(noMedia)
	}
	if m.MediaURL != "" {
		ct, name, ok, err := r.Media.Info(ctx, m.MediaURL)
		if err != nil {
			return nil, err
		}
		switch {
		case ok:
			u := m.MediaURL
			out.URL, out.Mimetype = &u, &ct
			if name != "" {
				out.Filename = &name
			}
			return out, nil
		case !r.Media.Issued(m.MediaURL): // sent from a public URL: served there
			u := m.MediaURL
			out.URL = &u
			return out, nil
		} // stored here once, since pruned: the engine may have it still
	}
	k, err := networkKey(m)
	if err != nil {
		return nil, err
	}
	f, err := phone[engine.MediaFetcher](ctx, r, "downloading media")
	if err != nil {
		return nil, err
	}
	var got engine.Media
	for attempt := 1; ; attempt++ {
		got, err = f.FetchMedia(ctx, k)
		var why *engine.MediaUnavailableError
		if !errors.As(err, &why) || why.Reason != engine.MediaFetching || attempt >= attempts {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(cmp.Or(r.MediaRetryPace, DefaultMediaRetryPace)):
		}
	}
	var why *engine.MediaUnavailableError
	var app *switchboard.Error
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return unavailable(engine.MediaExpired)
	case errors.As(err, &why):
		return unavailable(why.Reason)
	case errors.As(err, &app) && app.Code == switchboard.ENOENGINE,
		errors.Is(err, engine.ErrDisconnected), errors.Is(err, engine.ErrTimeout), ctx.Err() != nil:
		return nil, err // the engine, not the media: 503/504 as for every engine call
	case err != nil:
		slog.WarnContext(ctx, "media download failed", "message", m.ID, "err", err)
		return unavailable(mediaError)
	}
	name := cmp.Or(got.Filename, m.MediaFilename)
	ct := cmp.Or(got.MimeType, m.MediaMime, http.DetectContentType(got.Data))
	var u string
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		if u, err = r.Media.Put(ctx, tx, got.Data, ct, name); err != nil {
			return err
		}
		// The message keeps where its bytes are, unless it changed meanwhile.
		same := message.MediaURL(m.MediaURL)
		if m.MediaURL == "" {
			same = message.Or(message.MediaURLIsNil(), same)
		}
		return tx.Message.Update().Where(message.ID(m.ID), same).
			SetMediaURL(u).SetMediaMime(ct).SetMediaFilename(name).Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	out.URL, out.Mimetype = &u, &ct
	if name != "" {
		out.Filename = &name
	}
	if got.Preview {
		f := false
		out.OriginalQuality = &f
	}
	return out, nil
}

// loadOlder is the use case behind loadOlderMessages: up to pages pages of the
// chat's older history from the phone, paced r.LoadOlderPace apart, stopping at
// untilDate (RFC 3339, or a Unix time in seconds or milliseconds) or when the
// phone has nothing older.
func (r *Resolver) loadOlder(ctx context.Context, chatID string, pages *int, untilDate *string) (*model.LoadOlderResult, error) {
	var p switchboard.Problems
	n := 1
	if pages != nil {
		if n = *pages; n < 1 || n > maxLoadOlderPages {
			p.Add("pages", "too_big", "pages must be between 1 and %d", maxLoadOlderPages)
		}
	}
	var until time.Time
	if untilDate != nil {
		until = parseUntil(&p, *untilDate)
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.chatByID(ctx, "chatId", chatID)
	if err != nil {
		return nil, err
	}
	loader, err := phone[engine.HistoryLoader](ctx, r, "loading older messages")
	if err != nil {
		return nil, err
	}
	before, err := r.Client.Message.Query().Where(message.To(c.Jid), messaging.InStore()).Count(ctx)
	if err != nil {
		return nil, err
	}
	res := &model.LoadOlderResult{CanLoadMore: !c.HistoryComplete, Coverage: &model.Coverage{}}
	oldest := c.OldestLoadedAt
	if oldest == nil {
		first, err := r.Client.Message.Query().Where(message.To(c.Jid), messaging.InStore()).Order(ent.Asc(message.FieldCreatedAt)).First(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return nil, err
		}
		at := r.now()
		if first != nil {
			at = first.CreatedAt
		}
		oldest = &at
	}
	for res.CanLoadMore && res.PagesExecuted < n && (until.IsZero() || oldest.After(until)) {
		if res.PagesExecuted > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(r.loadOlderPace()):
			}
		}
		page, err := loader.LoadOlder(ctx, c.Jid, *oldest)
		if err != nil {
			msg := err.Error()
			res.Error = &msg
			break
		}
		res.PagesExecuted++
		if page.Unavailable {
			res.HistoryUnavailable, res.CanLoadMore = true, false
			break
		}
		if err := r.settle(ctx, 30*time.Second); err != nil {
			return nil, err
		}
		o := page.OldestAt
		oldest, res.CanLoadMore = &o, page.More
	}
	after, err := r.Client.Message.Query().Where(message.To(c.Jid), messaging.InStore()).Count(ctx)
	if err != nil {
		return nil, err
	}
	res.TotalMessages, res.Added = after, after-before
	if oldest != nil {
		ts, iso := float64(oldest.UnixMilli()), oldest.UTC().Format(time.RFC3339)
		res.Coverage.OldestLoadedTimestamp, res.Coverage.OldestLoadedIso = &ts, &iso
	}
	return res, nil
}

func (r *Resolver) loadOlderPace() time.Duration {
	if r.LoadOlderPace != nil {
		return *r.LoadOlderPace
	}
	return DefaultLoadOlderPace
}

// parseUntil parses until_date: RFC 3339, or a Unix time in seconds (or in
// milliseconds, above 10^11).
func parseUntil(p *switchboard.Problems, raw string) time.Time {
	if n, err := strconv.ParseFloat(raw, 64); err == nil {
		if n <= 0 {
			p.Add("until_date", "invalid_string", "until_date must be a positive Unix time or an RFC 3339 date-time")
			return time.Time{}
		}
		if n > 1e11 {
			return time.UnixMilli(int64(n))
		}
		return time.Unix(int64(n), 0)
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		p.Add("until_date", "invalid_string", "until_date must be a positive Unix time or an RFC 3339 date-time")
	}
	return t
}

// createNewsletter is the use case behind createNewsletter: a name of 1-100
// characters and an optional description of at most 2048 (the reference's
// bounds), stored with the newsletter as the engine reports it.
func (r *Resolver) createNewsletter(ctx context.Context, name string, description *string) (*ent.Chat, error) {
	var p switchboard.Problems
	if n := utf8.RuneCountInString(strings.TrimSpace(name)); n < 1 || utf8.RuneCountInString(name) > maxNewsletterName {
		p.Add("name", "too_big", "name must be 1-%d characters", maxNewsletterName)
	}
	desc := ""
	if description != nil {
		if desc = *description; utf8.RuneCountInString(desc) > maxNewsletterDesc {
			p.Add("description", "too_big", "description must be at most %d characters", maxNewsletterDesc)
		}
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	creator, err := phone[engine.NewsletterCreator](ctx, r, "creating a newsletter")
	if err != nil {
		return nil, err
	}
	var s engine.ChatState
	if err := r.act(ctx, func() (err error) { s, err = creator.CreateNewsletter(ctx, name, desc); return err }); err != nil {
		return nil, err
	}
	return r.Client.Chat.Query().Where(chat.Jid(s.ID)).Only(ctx)
}

// newsletter is the use case behind newsletter.
func (r *Resolver) newsletter(ctx context.Context, id string) (*ent.Chat, error) {
	if !IsJID(id) || engine.ChatKind(id) != engine.ChatNewsletter {
		return nil, &switchboard.Error{Code: switchboard.EINVALID, Message: "id must be a newsletter id (<digits>@newsletter).",
			Details: []switchboard.Detail{{Path: "id", Code: "invalid_string", Message: "Invalid newsletter id " + quote(id)}}}
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	return r.chatByID(ctx, "id", id)
}

// Quoted returns the stored messages that msgs reply to, by serialized key, in one
// query, for rendering quotedMessage.
func (r *Resolver) Quoted(ctx context.Context, msgs []*ent.Message) (map[string]*ent.Message, error) {
	var keys []string
	for _, m := range msgs {
		if m.ReplyTo != "" {
			keys = append(keys, m.ReplyTo)
		}
	}
	out := map[string]*ent.Message{}
	if len(keys) == 0 {
		return out, nil
	}
	found, err := r.Client.Message.Query().Where(message.WaSerializedIn(keys...)).All(ctx)
	for _, m := range found {
		out[m.WaSerialized] = m
	}
	return out, err
}

// quotedMessage renders the message obj replies to, as REST's quotedMessage. The
// quoted messages of the whole list obj was resolved in (a page, a connection, a
// latest chat's messages) are read together, in one query, when the first of
// them is asked for; a message outside a list reads its own.
func (r *Resolver) quotedMessage(ctx context.Context, obj *ent.Message) (*model.QuotedMessage, error) {
	if obj.ReplyTo == "" {
		return nil, nil
	}
	k, ok := engine.ParseKey(obj.ReplyTo)
	if !ok {
		return nil, nil
	}
	found, err := r.quotedInList(ctx, obj)
	if err != nil {
		return nil, err
	}
	v := view.NewQuotedMessage(obj.ReplyTo, found[obj.ReplyTo])
	out := &model.QuotedMessage{WaMessageKey: &k}
	for dst, src := range map[**string]string{&out.Text: v.Text, &out.Type: v.Type, &out.Author: v.Author} {
		if src != "" {
			*dst = &src
		}
	}
	return out, nil
}

// quoteBatchesKey holds the quoteBatches of one GraphQL operation.
type quoteBatchesKey struct{}

// quoteBatches are the quoted messages read for each list of messages of one
// operation, by the field context of the list.
type quoteBatches struct {
	mu    sync.Mutex
	lists map[*graphql.FieldContext]*quoteBatch
}

type quoteBatch struct {
	once  sync.Once
	found map[string]*ent.Message
	err   error
}

// withQuoteBatches gives an operation its quoteBatches.
func withQuoteBatches(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, quoteBatchesKey{}, &quoteBatches{lists: map[*graphql.FieldContext]*quoteBatch{}}))
}

// quotedInList returns the quoted messages of the list obj belongs to.
func (r *Resolver) quotedInList(ctx context.Context, obj *ent.Message) (map[string]*ent.Message, error) {
	batches, _ := ctx.Value(quoteBatchesKey{}).(*quoteBatches)
	var list *graphql.FieldContext
	var msgs []*ent.Message
	for fc := graphql.GetFieldContext(ctx); fc != nil && batches != nil && list == nil; fc = fc.Parent {
		switch v := fc.Result.(type) {
		case []*ent.Message:
			list, msgs = fc, v
		case []*ent.MessageEdge:
			list, msgs = fc, make([]*ent.Message, 0, len(v))
			for _, e := range v {
				msgs = append(msgs, e.Node)
			}
		}
	}
	if list == nil {
		return r.Quoted(ctx, []*ent.Message{obj})
	}
	batches.mu.Lock()
	b := batches.lists[list]
	if b == nil {
		b = &quoteBatch{}
		batches.lists[list] = b
	}
	batches.mu.Unlock()
	b.once.Do(func() { b.found, b.err = r.Quoted(ctx, msgs) })
	return b.found, b.err
}

// messagePage is one page of q by time in order, with the exact total.
func messagePage(ctx context.Context, q *ent.MessageQuery, order func(...string) func(*sql.Selector), l, s int) (*model.MessagePage, error) {
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	items, err := q.Order(order(message.FieldCreatedAt), order(message.FieldID)).Limit(l).Offset(s).All(ctx)
	if err != nil {
		return nil, err
	}
	return &model.MessagePage{Items: items, Limit: l, Skip: s, Total: total}, nil
}
