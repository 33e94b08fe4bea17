package inbox

import (
	"cmp"
	"context"
	"database/sql/driver"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/chat"
	"github.com/switchboardhq/switchboard/ent/chatmember"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/messaging"
)

// Reading chats: by id, pages of a filter, the newest with their newest
// messages, and the groups a contact shares with the account.

// ChatFilter selects chats; its zero value selects every chat.
type ChatFilter struct {
	// Search selects the chats whose name contains it (case-folded) or, unless
	// NameOnly, whose id contains it; "" selects all.
	Search   string
	NameOnly bool
	// Kinds are the chat kinds (engine.ChatContact, ChatGroup, ChatNewsletter)
	// selected; none selects every kind.
	Kinds []string
	// Since selects the chats whose last message is at or after it; nil: all.
	Since *time.Time
	// Named leaves out the chats without a name, Unarchived the archived ones.
	Named, Unarchived bool
	// Engine selects the chats whose latest message is of this engine
	// (number); "" all.
	Engine string
}

// Chat returns the stored chat jid; an ent not-found error when there is none.
// A LID chat merged into its phone-number chat answers as that chat.
func (s Store) Chat(ctx context.Context, jid string) (*ent.Chat, error) {
	c, err := s.Client.Chat.Query().Where(chat.Jid(jid)).Only(ctx)
	if !ent.IsNotFound(err) || !engine.IsLID(jid) {
		return c, err
	}
	pn, perr := s.Person(ctx, jid)
	if perr != nil || pn == jid {
		return c, cmp.Or(perr, err)
	}
	return s.Client.Chat.Query().Where(chat.Jid(pn)).Only(ctx)
}

// Group returns the stored group jid; an ent not-found error when there is none
// (or the chat is no group).
func (s Store) Group(ctx context.Context, jid string) (*ent.Chat, error) {
	return s.Client.Chat.Query().Where(chat.Jid(jid), chat.KindEQ(chat.KindGroup)).Only(ctx)
}

// Chats returns a page of the chats f selects, newest last message first
// (chats without one last), and how many it selects in all.
func (s Store) Chats(ctx context.Context, f ChatFilter, limit, skip int) ([]*ent.Chat, int, error) {
	q := s.Client.Chat.Query()
	if f.Search != "" {
		if f.NameOnly {
			q.Where(chat.NameContainsFold(f.Search))
		} else {
			q.Where(chat.Or(chat.NameContainsFold(f.Search), chat.JidContains(f.Search)))
		}
	}
	if len(f.Kinds) > 0 {
		ks := make([]chat.Kind, len(f.Kinds))
		for i, k := range f.Kinds {
			ks[i] = chat.Kind(k)
		}
		q.Where(chat.KindIn(ks...))
	}
	if f.Since != nil {
		q.Where(chat.LastMessageAtGTE(*f.Since))
	}
	if f.Named {
		q.Where(chat.NameNEQ(""))
	}
	if f.Unarchived {
		q.Where(chat.Archived(false))
	}
	if f.Engine != "" {
		q.Where(chat.EngineID(f.Engine))
	}
	return chatPage(ctx, q, limit, skip)
}

// GroupsOf returns a page of the groups member belongs to, in the order of
// Chats, and how many there are.
func (s Store) GroupsOf(ctx context.Context, member string, limit, skip int) ([]*ent.Chat, int, error) {
	groups, err := s.Client.ChatMember.Query().Where(chatmember.MemberJid(member)).Select(chatmember.FieldChatJid).Strings(ctx)
	if err != nil {
		return nil, 0, err
	}
	return chatPage(ctx, s.Client.Chat.Query().Where(chat.JidIn(groups...), chat.KindEQ(chat.KindGroup)), limit, skip)
}

// chatPage is one page of q, newest last message first, with the exact total.
func chatPage(ctx context.Context, q *ent.ChatQuery, limit, skip int) ([]*ent.Chat, int, error) {
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	items, err := q.Order(byLastMessage(), ent.Asc(chat.FieldID)).Limit(limit).Offset(skip).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// byLastMessage orders chats newest message first, chats without one last.
func byLastMessage() chat.OrderOption {
	return func(s *sql.Selector) {
		s.OrderExpr(sql.Expr(s.C(chat.FieldLastMessageAt) + " IS NULL"))
		s.OrderBy(sql.Desc(s.C(chat.FieldLastMessageAt)))
	}
}

// ChatConnection is a Relay connection of the chats, shaped by opts.
func (s Store) ChatConnection(ctx context.Context, c Cursors, opts ...ent.ChatPaginateOption) (*ent.ChatConnection, error) {
	return s.Client.Chat.Query().Paginate(ctx, c.After, c.First, c.Before, c.Last, opts...)
}

// LatestChat is a chat with its newest messages, newest first.
type LatestChat struct {
	Chat     *ent.Chat
	Messages []*ent.Message
}

// LatestChats returns the first chats chats that are not archived (pinned
// first, then newest last message first), each with its messages newest
// messages of the store, and how many chats are not archived in all. fields,
// when given, are the only message columns read (with the id).
func (s Store) LatestChats(ctx context.Context, chats, messages int, fields ...string) ([]*LatestChat, int, error) {
	q := s.Client.Chat.Query().Where(chat.Archived(false))
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	page, err := q.Order(ent.Desc(chat.FieldPinned), byLastMessage(), ent.Asc(chat.FieldID)).Limit(chats).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*LatestChat, len(page))
	byChat := make(map[string]*LatestChat, len(page))
	jids := make([]string, len(page))
	for i, c := range page {
		out[i] = &LatestChat{Chat: c, Messages: []*ent.Message{}}
		byChat[c.Jid], jids[i] = out[i], c.Jid
	}
	if messages == 0 || len(page) == 0 {
		return out, total, nil
	}
	// The latest messages of every chat of the page, in one query.
	mq := s.Client.Message.Query().Where(messaging.InStore())
	if len(fields) > 0 {
		mq.Select(fields...)
	}
	mq.Modify(latestPerChat(jids, messages))
	msgs, err := mq.All(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, m := range msgs {
		if c := byChat[m.To]; c != nil {
			c.Messages = append(c.Messages, m)
		}
	}
	for _, c := range out { // newest first; the query leaves the order to us
		slices.SortFunc(c.Messages, func(a, b *ent.Message) int {
			if d := b.CreatedAt.Compare(a.CreatedAt); d != 0 {
				return d
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	return out, total, nil
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
