package graph

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/storage"
	"github.com/switchboardhq/switchboard/view"
)

// The message store: searching it, acks, pins, reactions, media, older history and quoted messages.

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
	mf := storedFilter(&p, f)
	contentFilter(&p, f, &mf)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return nil, err
	}
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	items, total, err := r.store().Messages(ctx, mf, l, s)
	if err != nil {
		return nil, err
	}
	return &model.MessagePage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// storedFilter checks the chat, search, order, time and type filters of a
// stored-message search into p, and maps them to the store's filter.
func storedFilter(p *switchboard.Problems, f *model.StoredMessageFilter) inbox.MessageFilter {
	var mf inbox.MessageFilter
	if f.ChatID != nil {
		if !IsJID(*f.ChatID) {
			p.Add("chatId", "invalid_string", "chatId must match ^[0-9]+(?:-[0-9]+)?@(?:c[.]us|g[.]us|newsletter)$")
		}
		mf.Chat = *f.ChatID
	}
	if t := f.SearchToken; t != nil {
		checkSearchToken(p, "searchToken", *t)
		mf.Search = *t
	}
	if o := f.Order; o != nil {
		switch *o {
		case "asc":
			mf.Ascending = true
		case "desc":
		default:
			p.Add("order", "invalid_enum_value", "order must be asc or desc")
		}
	}
	if f.Since != nil {
		if t, ok := parseTime(p, "since", *f.Since); ok {
			mf.Since = &t
		}
	}
	if f.Until != nil {
		if t, ok := parseTime(p, "until", *f.Until); ok {
			mf.Until = &t
		}
	}
	if mf.Since != nil && mf.Until != nil && mf.Since.After(*mf.Until) {
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
		mf.WireTypes = f.MessageTypes
	}
	mf.Engine = engineFilter(p, f.EngineID)
	return mf
}

// contentFilter checks the content filters of a stored-message search (terms,
// media, sender) into p, and adds them to mf.
func contentFilter(p *switchboard.Problems, f *model.StoredMessageFilter, mf *inbox.MessageFilter) {
	if f.QueryAny != nil {
		if len(f.QueryAny) > maxQueryAny {
			p.Add("queryAny", "too_big", "queryAny must hold at most %d terms", maxQueryAny)
		}
		for i, t := range f.QueryAny {
			checkSearchToken(p, "queryAny."+itoa(i), t)
		}
		mf.QueryAny = f.QueryAny
	}
	if f.Mime != nil && len(*f.Mime) > maxMime {
		p.Add("mime", "too_big", "mime must be at most %d characters", maxMime)
	}
	if f.FilenameContains != nil && len(*f.FilenameContains) > maxFilename {
		p.Add("filenameContains", "too_big", "filenameContains must be at most %d characters", maxFilename)
	}
	if f.Sender != nil && len(*f.Sender) > maxSender {
		p.Add("sender", "too_big", "sender must be at most %d characters", maxSender)
	}
	mf.Mime, mf.FilenameContains, mf.HasMedia, mf.Sender = f.Mime, f.FilenameContains, f.HasMedia, f.Sender
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
	found, err := r.store().MessagesByWire(ctx, deref(chatID), keys)
	if err != nil {
		return nil, err
	}
	acks := map[string]int{}
	for _, m := range found {
		acks[m.WaSerialized] = messaging.AckOf(m)
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

// pinnedMessages is the use case behind pinnedMessages.
func (r *Resolver) pinnedMessages(ctx context.Context, chatID string) (*model.MessagePage, error) {
	if err := r.syncHistory(ctx); err != nil {
		return nil, err
	}
	c, err := r.chatByID(ctx, "chatId", chatID)
	if err != nil {
		return nil, err
	}
	items, err := r.store().Pinned(ctx, c.Jid, r.now(), maxPinnedMessages)
	if err != nil {
		return nil, err
	}
	return &model.MessagePage{Items: items, Limit: len(items), Skip: 0, Total: len(items)}, nil
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
	actor, err := phoneFor[engine.ChatActor](ctx, r, m.To, m.EngineID, "acting on a message")
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
	if m.Type != "media" {
		return unavailableMedia(out, noMedia)
	}
	if served, err := r.servedMedia(ctx, m, out); err != nil {
		return nil, err
	} else if served {
		return out, nil
	}
	k, err := networkKey(m)
	if err != nil {
		return nil, err
	}
	f, err := phoneFor[engine.MediaFetcher](ctx, r, m.To, m.EngineID, "downloading media")
	if err != nil {
		return nil, err
	}
	got, err := r.fetchMedia(ctx, f, k, m.MediaRef, attempts)
	if reason, err := mediaFailure(ctx, m, err); err != nil {
		return nil, err
	} else if reason != "" {
		return unavailableMedia(out, reason)
	}
	return r.keepMedia(ctx, m, got, out)
}

// unavailableMedia is out, answering that the media is unavailable for reason.
func unavailableMedia(out *model.MessageMedia, reason string) (*model.MessageMedia, error) {
	out.MediaUnavailable = &reason
	return out, nil
}

// servedMedia fills out and reports true when m's media is served already:
// stored here (an upload, or a download made before), or sent from a public
// URL and served there. Media stored here once and since pruned is not: the
// engine may have it still.
func (r *Resolver) servedMedia(ctx context.Context, m *ent.Message, out *model.MessageMedia) (bool, error) {
	if m.MediaURL == "" {
		return false, nil
	}
	switch m.MediaFetch {
	case "":
	case inbox.FetchDue:
		// Downloading since it arrived: wait for it (up to the store's
		// FillWait; 503 with Retry-After after).
		rc, _, ok, err := r.Media.Open(ctx, m.MediaURL)
		if err != nil || !ok {
			return false, err // gone (pruned): ask the engine
		}
		_ = rc.Close()
	case engine.MediaExpired, engine.MediaAwaitingSender:
		out.MediaUnavailable = &m.MediaFetch
		return true, nil
	default:
		return false, nil // the download on arrival failed: ask the engine again
	}
	ct, name, ok, err := r.Media.Info(ctx, m.MediaURL)
	if err != nil {
		return false, err
	}
	u := m.MediaURL
	switch {
	case ok:
		out.URL, out.Mimetype = &u, &ct
		if name != "" {
			out.Filename = &name
		}
		return true, nil
	case !r.Media.Issued(m.MediaURL):
		out.URL = &u
		return true, nil
	}
	return false, nil
}

// fetchMedia downloads the media of the message k through the engine (from
// the reference ref the engine gave with it, when there is one), up to
// attempts times MediaRetryPace apart while the engine says it is still
// fetching.
func (r *Resolver) fetchMedia(ctx context.Context, f engine.MediaFetcher, k engine.Key, ref []byte, attempts int) (engine.Media, error) {
	for attempt := 1; ; attempt++ {
		got, err := engine.FetchMedia(ctx, f, k, ref)
		var why *engine.MediaUnavailableError
		if !errors.As(err, &why) || why.Reason != engine.MediaFetching || attempt >= attempts {
			return got, err
		}
		select {
		case <-ctx.Done():
			return engine.Media{}, ctx.Err()
		case <-time.After(cmp.Or(r.MediaRetryPace, DefaultMediaRetryPace)):
		}
	}
}

// mediaFailure sorts what a download of m's media failed with: the reason the
// media is unavailable, or an error of the engine (not of the media: 503/504 as
// for every engine call); neither for a download that succeeded.
func mediaFailure(ctx context.Context, m *ent.Message, err error) (string, error) {
	var why *engine.MediaUnavailableError
	var app *switchboard.Error
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, engine.ErrNotFound):
		return engine.MediaExpired, nil
	case errors.As(err, &why):
		return why.Reason, nil
	case errors.As(err, &app) && app.Code == switchboard.ENOENGINE,
		errors.Is(err, engine.ErrDisconnected), errors.Is(err, engine.ErrTimeout), ctx.Err() != nil:
		return "", err
	}
	slog.WarnContext(ctx, "media download failed", "message", m.ID, "err", err)
	return mediaError, nil
}

// keepMedia stores the downloaded media of m, records on the message where it
// is served, and answers it in out.
func (r *Resolver) keepMedia(ctx context.Context, m *ent.Message, got engine.Media, out *model.MessageMedia) (*model.MessageMedia, error) {
	name := cmp.Or(got.Filename, m.MediaFilename)
	body, done := got.Reader()
	defer done()
	o, err := r.Media.Save(ctx, body, cmp.Or(got.MimeType, m.MediaMime), name)
	if err != nil {
		return nil, err
	}
	u, ct := o.URL, o.ContentType
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		// The message keeps where its bytes are, unless it changed meanwhile.
		return inbox.KeepMedia(ctx, tx, m, u, ct, name, got.Ref)
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
	loader, err := phoneFor[engine.HistoryLoader](ctx, r, c.Jid, "", "loading older messages")
	if err != nil {
		return nil, err
	}
	before, err := r.store().CountMessages(ctx, c.Jid)
	if err != nil {
		return nil, err
	}
	res := &model.LoadOlderResult{CanLoadMore: !c.HistoryComplete, Coverage: &model.Coverage{}}
	oldest := c.OldestLoadedAt
	if oldest == nil {
		at, ok, err := r.store().OldestMessageAt(ctx, c.Jid)
		if err != nil {
			return nil, err
		}
		if !ok {
			at = r.now()
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
	after, err := r.store().CountMessages(ctx, c.Jid)
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
	found, err := r.store().MessagesByKey(ctx, keys...)
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
