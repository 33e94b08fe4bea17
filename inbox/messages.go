package inbox

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/ent/predicate"
	"github.com/switchboardhq/switchboard/messaging"
)

// Reading stored messages: searching them, by wire key, pinned ones, a chat's
// count and oldest, and a chat's Relay connection; and keeping where a
// downloaded attachment is served.

// MessageFilter selects messages of the store; its zero value selects them all.
type MessageFilter struct {
	// Chat selects the messages of one chat; "" all.
	Chat string
	// Search selects the messages whose text, poll question or file name
	// contains it (case-folded); "" all.
	Search string
	// Since and Until bound the messages' time (inclusive); nil: unbounded.
	Since, Until *time.Time
	// WireTypes selects the messages of these wire types; nil all.
	WireTypes []string
	// QueryAny selects the messages whose text or poll question contains any
	// of its terms (case-folded); none selects all.
	QueryAny []string
	// Mime selects the media of this type, or of a family when it ends in
	// "/*" (image/*); nil all.
	Mime *string
	// FilenameContains selects the media whose file name contains it
	// (case-folded); nil all.
	FilenameContains *string
	// HasMedia selects the messages with media, or (false) without; nil all.
	HasMedia *bool
	// Sender selects the messages the account sent ("me"), or those whose
	// sender is it or whose sender's name contains it; nil all.
	Sender *string
	// Engine selects the messages of one engine (number); "" all.
	Engine string
	// Ascending orders the page oldest first; newest first otherwise.
	Ascending bool
}

// predicates are the conditions f puts on the store's messages.
func (f MessageFilter) predicates() []predicate.Message {
	ps := []predicate.Message{messaging.InStore()}
	add := func(p ...predicate.Message) { ps = append(ps, p...) }
	if f.Chat != "" {
		add(message.To(f.Chat))
	}
	if f.Engine != "" {
		add(message.EngineID(f.Engine))
	}
	if t := f.Search; t != "" {
		add(message.Or(message.TextContainsFold(t), message.PollQuestionContainsFold(t), message.MediaFilenameContainsFold(t)))
	}
	if f.Since != nil {
		add(message.CreatedAtGTE(*f.Since))
	}
	if f.Until != nil {
		add(message.CreatedAtLTE(*f.Until))
	}
	if f.WireTypes != nil {
		add(message.WireTypeIn(f.WireTypes...))
	}
	var any []predicate.Message
	for _, t := range f.QueryAny {
		any = append(any, message.TextContainsFold(t), message.PollQuestionContainsFold(t))
	}
	if len(any) > 0 {
		add(message.Or(any...))
	}
	if m := f.Mime; m != nil && strings.HasSuffix(*m, "/*") {
		add(message.MediaMimeHasPrefix(strings.TrimSuffix(*m, "*")))
	} else if m != nil {
		add(message.MediaMime(*m))
	}
	if f.FilenameContains != nil {
		add(message.MediaFilenameContainsFold(*f.FilenameContains))
	}
	if f.HasMedia != nil && *f.HasMedia {
		add(message.TypeEQ("media"))
	} else if f.HasMedia != nil {
		add(message.TypeNEQ("media"))
	}
	if s := f.Sender; s != nil && *s == "me" {
		add(message.FromMe(true))
	} else if s != nil {
		add(message.Or(message.From(*s), message.SenderNameContainsFold(*s)))
	}
	return ps
}

// Messages returns a page of the stored messages f selects, by time (and id)
// in f's order, and how many it selects in all.
func (s Store) Messages(ctx context.Context, f MessageFilter, limit, skip int) ([]*ent.Message, int, error) {
	q := s.Client.Message.Query().Where(f.predicates()...)
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	order := ent.Desc
	if f.Ascending {
		order = ent.Asc
	}
	items, err := q.Order(order(message.FieldCreatedAt), order(message.FieldID)).Limit(limit).Offset(skip).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	return items, total, nil
}

// Message returns a stored message by its serialized wire key, or by its bare
// wire id (in chat, when chat is given); an ent not-found error when there is
// none.
func (s Store) Message(ctx context.Context, key string, chat *string) (*ent.Message, error) {
	q := s.Client.Message.Query()
	if _, ok := engine.ParseKey(key); ok {
		q.Where(message.WaSerialized(key))
	} else if chat != nil {
		q.Where(message.WaID(key), message.To(*chat))
	} else {
		q.Where(message.WaID(key))
	}
	return q.First(ctx)
}

// MessagesByWire returns the stored messages whose serialized wire key or bare
// wire id is one of keys, in chat unless chat is "".
func (s Store) MessagesByWire(ctx context.Context, chat string, keys []string) ([]*ent.Message, error) {
	q := s.Client.Message.Query().Where(message.Or(message.WaSerializedIn(keys...), message.WaIDIn(keys...)))
	if chat != "" {
		q.Where(message.To(chat))
	}
	return q.All(ctx)
}

// MessagesByKey returns the stored messages whose serialized wire key is one of
// keys (the messages others quote).
func (s Store) MessagesByKey(ctx context.Context, keys ...string) ([]*ent.Message, error) {
	return s.Client.Message.Query().Where(message.WaSerializedIn(keys...)).All(ctx)
}

// Pinned returns the messages of chat pinned at now, newest first, at most limit.
func (s Store) Pinned(ctx context.Context, chat string, now time.Time, limit int) ([]*ent.Message, error) {
	return s.Client.Message.Query().Where(message.To(chat), message.PinnedUntilGT(now)).
		Order(ent.Desc(message.FieldCreatedAt)).Limit(limit).All(ctx)
}

// CountMessages is how many messages of chat the store holds.
func (s Store) CountMessages(ctx context.Context, chat string) (int, error) {
	return s.Client.Message.Query().Where(message.To(chat), messaging.InStore()).Count(ctx)
}

// OldestMessageAt is the time of the oldest message of chat the store holds;
// ok is false when it holds none.
func (s Store) OldestMessageAt(ctx context.Context, chat string) (at time.Time, ok bool, err error) {
	first, err := s.Client.Message.Query().Where(message.To(chat), messaging.InStore()).
		Order(ent.Asc(message.FieldCreatedAt)).First(ctx)
	if ent.IsNotFound(err) {
		return time.Time{}, false, nil
	} else if err != nil {
		return time.Time{}, false, err
	}
	return first.CreatedAt, true, nil
}

// MessageConnection is a Relay connection of the stored messages of chat,
// shaped by opts.
func (s Store) MessageConnection(ctx context.Context, chat string, c Cursors, opts ...ent.MessagePaginateOption) (*ent.MessageConnection, error) {
	return s.Client.Message.Query().Where(message.To(chat), messaging.InStore()).
		Paginate(ctx, c.After, c.First, c.Before, c.Last, opts...)
}

// KeepMedia records, in tx, where the attachment of m is served now (url) with
// its type and file name, and the engine's new reference to it (ref, when it
// gave one), unless the message's media URL changed since m was read. A
// download on arrival that failed is then done.
func KeepMedia(ctx context.Context, tx *ent.Tx, m *ent.Message, url, mime, filename string, ref []byte) error {
	same := message.MediaURL(m.MediaURL)
	if m.MediaURL == "" {
		same = message.Or(message.MediaURLIsNil(), same)
	}
	u := tx.Message.Update().Where(message.ID(m.ID), same).
		SetMediaURL(url).SetMediaMime(mime).SetMediaFilename(filename).ClearMediaFetch()
	if len(ref) > 0 {
		u.SetMediaRef(ref)
	}
	return u.Exec(ctx)
}
