package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/dispatch"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/idempotencykey"
	"github.com/switchboardhq/switchboard/ent/message"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/netguard"
	"github.com/switchboardhq/switchboard/storage"
)

// newMessage builds, on client, the message a validated draft describes, of
// origin and with the given id (media bytes already replaced by their URL),
// pinned to the engine the draft names, if any.
func (r *Resolver) newMessage(client *ent.Client, d *draft, origin message.Origin, id string) *ent.MessageCreate {
	c := messaging.NewMessage(client, &d.Draft, origin, id, r.now())
	if d.EngineID != "" {
		c.SetEngineID(d.EngineID)
	}
	if d.ForwardedFrom != "" {
		c.SetForwardedFrom(d.ForwardedFrom)
	}
	return c
}

// create stores a validated draft as a pending message of origin and records
// message.queued, all in tx. Media bytes are stored first and replaced by their URL.
func (r *Resolver) create(ctx context.Context, tx *ent.Tx, d *draft, origin message.Origin, id string) (*ent.Message, error) {
	if d.MediaBytes != nil {
		u, err := r.Media.Put(ctx, tx, d.MediaBytes, d.MediaContentType, d.MediaFilename)
		if err != nil {
			return nil, fmt.Errorf("store media: %w", err)
		}
		d.MediaURL = u
	}
	ms, err := messaging.Queue(ctx, tx, r.newMessage(tx.Client(), d, origin, id))
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// mediaURLRule is the rule of a message's mediaUrl, which an engine will fetch: a
// public https URL, checked by the guard of every outbound fetch (netguard) unless
// MediaAllowPrivate. keep accepts the URL unchecked: one Switchboard issued itself
// for an upload, kept by an edit.
func (r *Resolver) mediaURLRule(ctx context.Context, keep bool) func(string) error {
	return func(raw string) error {
		if keep {
			return nil
		}
		return netguard.CheckURL(ctx, raw, false, r.MediaAllowPrivate)
	}
}

// recipient is the chat a message to chatID goes to: its normalized form, and
// for a LID whose number the store knows (its chat merged into the phone chat)
// the phone number: the message goes in the one chat of the person, and the
// engine sends it by number (whatsmeow itself addresses it to the LID).
func (r *Resolver) recipient(ctx context.Context, chatID string) (string, error) {
	to, err := NormalizeChatID(chatID)
	if err != nil || !engine.IsLID(to) {
		return to, err
	}
	return r.store().Person(ctx, to)
}

// schedule is the use case behind scheduleMessage. typing is the request's
// withTyping and typingSeconds: a text message so asked shows "typing…" first
// when it is sent (see typingArgs.scheduled).
func (r *Resolver) schedule(ctx context.Context, chatID string, in model.MessageInput, idemKey *string, typing typingArgs) (*model.ScheduleMessagePayload, error) {
	to, err := r.recipient(ctx, chatID)
	if err != nil {
		return nil, err
	}
	if idemKey != nil {
		if err := checkIdempotencyKey(*idemKey); err != nil {
			return nil, err
		}
	}
	// A retry is answered before its input is validated again: a sendAt that was
	// far enough ahead the first time may not be any more.
	fp, err := requestFingerprint(to, in, typing)
	if err != nil {
		return nil, err
	}
	if idemKey != nil {
		if p, err := r.replay(ctx, *idemKey, fp); p != nil || err != nil {
			return p, err
		}
	}
	d, err := buildDraft(to, in, r.now(), sendAtAllowed, r.mediaURLRule(ctx, false))
	if err != nil {
		return nil, err
	}
	if d.Typing, err = typing.scheduled(d.Type); err != nil {
		return nil, err
	}
	if d.EngineID, err = r.sendingEngine(ctx, in.EngineID); err != nil {
		return nil, err
	}
	id := switchboard.NewID("msg")
	var m *ent.Message
	if idemKey == nil && d.MediaBytes == nil {
		// Nothing to write beside the message (and its event, if wanted).
		m, err = messaging.QueueOne(ctx, r.Client, viewerWorkspace(ctx), func(c *ent.Client) *ent.MessageCreate {
			return r.newMessage(c, d, message.OriginScheduled, id)
		})
	} else {
		err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
			if m, err = r.create(ctx, tx, d, message.OriginScheduled, id); err != nil {
				return err
			}
			if idemKey == nil {
				return nil
			}
			snapshot, err := json.Marshal(m)
			if err != nil {
				return err
			}
			return tx.IdempotencyKey.Create().SetKey(*idemKey).SetRequestHash(fp).
				SetMessageID(m.ID).SetResponse(snapshot).Exec(ctx)
		})
	}
	if idemKey != nil && ent.IsConstraintError(err) {
		// A concurrent request with the same key won the race: answer as a retry.
		return r.replay(ctx, *idemKey, fp)
	} else if err != nil {
		return nil, err
	}
	var at time.Time
	if m.SendAt != nil {
		at = *m.SendAt
	}
	if _, err := r.Queue.Dispatch(ctx, m.WorkspaceID, m.ID, at); err != nil {
		// Accepted all the same: the reconciler queues it from the database.
		slog.Warn("enqueue dispatch failed; the reconciler will retry", "message", m.ID, "err", err)
	}
	return &model.ScheduleMessagePayload{Message: m}, nil
}

// requestFingerprint identifies a scheduling request as it was made (the chat,
// the input and the typing as given, uploaded bytes included), for idempotency.
func requestFingerprint(to string, in model.MessageInput, typing typingArgs) (string, error) {
	h := sha256.New()
	file := in.MediaFile
	in.MediaFile = nil
	if err := json.NewEncoder(h).Encode(struct {
		To            string             `json:"to"`
		Input         model.MessageInput `json:"input"`
		WithTyping    *bool              `json:"withTyping,omitempty"`
		TypingSeconds *float64           `json:"typingSeconds,omitempty"`
	}{to, in, typing.With, typing.Seconds}); err != nil {
		return "", err
	}
	if file != nil {
		fmt.Fprintf(h, "%q %q %d\n", file.Filename, file.ContentType, file.Size)
		if _, err := io.Copy(h, file.File); err != nil {
			return "", fmt.Errorf("read upload: %w", err)
		}
		if _, err := file.File.Seek(0, io.SeekStart); err != nil {
			return "", fmt.Errorf("rewind upload: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// replay answers a request whose idempotency key was seen before: the first result
// for the same input, a conflict for another input, nil when the key is new.
func (r *Resolver) replay(ctx context.Context, key, fingerprint string) (*model.ScheduleMessagePayload, error) {
	rec, err := r.Client.IdempotencyKey.Query().Where(idempotencykey.Key(key)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if rec.RequestHash != fingerprint {
		return nil, &switchboard.Error{Code: switchboard.ECONFLICT,
			Message: "Idempotency-Key was already used with a different request body.",
			Details: []switchboard.Detail{{Path: "Idempotency-Key", Code: "conflict", Message: "key reused with a different body"}}}
	}
	var m ent.Message
	if err := json.Unmarshal(rec.Response, &m); err != nil {
		return nil, fmt.Errorf("decode idempotent snapshot: %w", err)
	}
	return &model.ScheduleMessagePayload{Message: &m, Replayed: true}, nil
}

// Typing before a direct text send (the reference's withTyping): a random
// 0.4-0.8 s, plus typingSeconds of at most 25 (WhatsApp clears the indicator after
// about 25 s).
const (
	typingJitterMin = 400 * time.Millisecond
	typingJitterMax = 800 * time.Millisecond
	maxTypingSecs   = 25
)

// typingFor is how long a direct send of type typ shows "typing…" first: none
// for media and polls or with withTyping false, else the jitter plus
// typingSeconds (checked here: a number 0-25).
func typingFor(typ string, withTyping *bool, typingSeconds *float64) (time.Duration, error) {
	extra := 0.0
	if typingSeconds != nil {
		if extra = *typingSeconds; math.IsNaN(extra) || extra < 0 || extra > maxTypingSecs {
			var p switchboard.Problems
			p.Add("typingSeconds", "too_big", "typingSeconds must be between 0 and %d", maxTypingSecs)
			return 0, p.Err(switchboard.EVALIDATION)
		}
	}
	if typ != "text" || (withTyping != nil && !*withTyping) {
		return 0, nil
	}
	jitter := typingJitterMin + rand.N(typingJitterMax-typingJitterMin+1)
	return jitter + time.Duration(extra*float64(time.Second)).Round(time.Millisecond), nil
}

// typingArgs are a send's withTyping and typingSeconds, as given.
type typingArgs struct {
	With    *bool
	Seconds *float64
}

// scheduled is how long a scheduled message of type typ shows "typing…" when it
// is sent (kept on the message until then): as for a direct send (typingFor),
// but only when asked, by withTyping true or by typingSeconds without withTyping.
func (t typingArgs) scheduled(typ string) (time.Duration, error) {
	with := t.With
	if with == nil {
		on := t.Seconds != nil
		with = &on
	}
	return typingFor(typ, with, t.Seconds)
}

// sendNow is the use case behind sendMessage: the message is stored with its network
// key already known (derived from its id), handed to an engine at once (within the
// engine's direct-send limit, SendLimit), and returned
// in the state the engine left it. A transient engine failure hands the message to
// the queue instead of losing it. A text message is preceded by "typing…" on an
// engine that can show it (engine.Typist); one that cannot, or fails to, sends
// all the same.
func (r *Resolver) sendNow(ctx context.Context, chatID string, in model.MessageInput, withTyping *bool, typingSeconds *float64) (*ent.Message, error) {
	to, err := r.recipient(ctx, chatID)
	if err != nil {
		return nil, err
	}
	d, err := buildDraft(to, in, r.now(), sendAtForbidden, r.mediaURLRule(ctx, false))
	if err != nil {
		return nil, err
	}
	typing, err := typingFor(d.Type, withTyping, typingSeconds)
	if err != nil {
		return nil, err
	}
	if d.EngineID, err = r.sendingEngine(ctx, in.EngineID); err != nil {
		return nil, err
	}
	return r.sendDraft(ctx, to, d, typing)
}

// sendDraft stores a validated draft to chat to as a direct message, claimed,
// and hands it to the engine that routes it (after typing for that long, when
// typing > 0); a failed send stays queued for a retry.
func (r *Resolver) sendDraft(ctx context.Context, to string, d *draft, typing time.Duration) (*ent.Message, error) {
	ws := viewerWorkspace(ctx)
	eng, err := r.Dispatcher.Route(ctx, ws, to, d.EngineID)
	if errors.Is(err, engine.ErrNoEngine) && d.EngineID != "" {
		return nil, switchboard.Errorf(switchboard.ENOENGINE, "The engine %s is not connected; send through another, or queue the message with POST /v1/scheduled-messages (it waits for the engine).", d.EngineID)
	} else if errors.Is(err, engine.ErrNoEngine) {
		return nil, switchboard.Errorf(switchboard.ENOENGINE, "No messaging engine is connected for this account; connect one, or queue the message with POST /v1/scheduled-messages.")
	} else if err != nil {
		return nil, err
	}
	if err := r.checkEngineMedia(ctx, eng, d); err != nil {
		return nil, err
	}
	if err := r.SendLimit.allow(ctx, eng.ID()); err != nil {
		return nil, err
	}
	id := switchboard.NewID("msg")
	var m *ent.Message
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		if m, err = r.create(ctx, tx, d, message.OriginDirect, id); err != nil {
			return err
		}
		if m, err = dispatch.Claim(ctx, tx, m); err != nil {
			return err
		}
		m.EngineID = eng.ID() // the chat's engine from now on; recorded on the message once sent
		return inbox.WroteTo(ctx, tx, m)
	})
	if err != nil {
		return nil, err
	}
	if t, ok := eng.(engine.Typist); ok && typing > 0 {
		if err := t.ShowTyping(ctx, to, typing); err != nil {
			slog.Debug("typing not shown; sending all the same", "message", m.ID, "err", err)
		}
	}
	if err := r.Dispatcher.Send(ctx, eng, m); err != nil {
		slog.Warn("direct send failed; queued for retry", "message", m.ID, "err", err)
	}
	return r.Client.Message.Get(ctx, m.ID)
}

// checkEngineMedia answers 422 when the engine a direct send routes to can
// tell it cannot send the draft's media (engine.MediaChecker: a voice note the
// gateway engine cannot convert without ffmpeg), before anything is stored. The
// type is the upload's (sniffed when it has none) or the stored media's; for
// another URL it is not known, and the send fails on its own if it must.
func (r *Resolver) checkEngineMedia(ctx context.Context, eng engine.Engine, d *draft) error {
	c, ok := eng.(engine.MediaChecker)
	if !ok || d.Type != "media" {
		return nil
	}
	ct := d.MediaContentType
	switch {
	case ct == "" && d.MediaBytes != nil:
		ct = http.DetectContentType(d.MediaBytes)
	case ct == "" && r.Media != nil && d.MediaURL != "":
		var err error
		if ct, _, _, err = r.Media.Info(ctx, d.MediaURL); err != nil {
			return err
		}
	}
	if err := c.CheckMedia(d.MediaKind, ct); err != nil {
		var p switchboard.Problems
		p.Add("mediaKind", "invalid_value", "This engine cannot send it: %v", err)
		return p.Err(switchboard.EVALIDATION)
	}
	return nil
}

// queued returns a message of the queue by its id, or ENOTFOUND.
func (r *Resolver) queued(ctx context.Context, id string) (*ent.Message, error) {
	m, err := r.Client.Message.Query().Where(message.ID(id), message.OriginEQ(message.OriginScheduled)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, switchboard.Errorf(switchboard.ENOTFOUND, "No scheduled message with id %s.", quote(id))
	}
	return m, err
}

// update is the use case behind updateScheduledMessage.
func (r *Resolver) update(ctx context.Context, id string, patch model.MessagePatch) (*ent.Message, error) {
	m, err := r.queued(ctx, id)
	if err != nil {
		return nil, err
	}
	if messaging.StatusOf(m) != messaging.StatusPending {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "The message is %s; only pending messages can be edited.", m.Status)
	}
	in, keepMedia := merge(m, patch)
	d, err := buildDraft(m.To, in, r.now(), sendAtAllowed, r.mediaURLRule(ctx, keepMedia))
	if err != nil {
		return nil, err
	}
	d.EngineID = m.EngineID
	if patch.EngineID != nil {
		if d.EngineID, err = r.sendingEngine(ctx, patch.EngineID); err != nil {
			return nil, err
		}
	}
	if patch.SendAt == nil {
		d.SendAt = m.SendAt // an unchanged sendAt may have come close or passed
	}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		if d.MediaBytes != nil {
			if d.MediaURL, err = r.Media.Put(ctx, tx, d.MediaBytes, d.MediaContentType, d.MediaFilename); err != nil {
				return err
			}
		}
		u := tx.Message.UpdateOneID(m.ID).Where(messaging.StatusIs(messaging.StatusPending)).
			SetType(d.Type).SetText(d.Text).SetMediaURL(d.MediaURL).SetMediaKind(d.MediaKind).
			SetMediaFilename(d.MediaFilename).SetPollQuestion(d.PollQuestion).
			SetNillablePollAllowMultiple(d.PollAllowMultiple).SetReplyTo(d.ReplyTo).SetSecret(d.Secret).
			SetMentions(d.Mentions).SetPollOptions(d.PollOptions).ClearLinkPreview().
			SetWireType(engine.ContentWireType(d.Type, d.MediaKind, len(d.Contacts)))
		if len(d.Contacts) > 0 {
			u.SetVcards(messaging.CardsOf(d.Contacts)).SetVcardNames(messaging.CardNamesOf(d.Contacts))
		} else {
			u.ClearVcards().ClearVcardNames()
		}
		if d.PollAllowMultiple == nil {
			u.ClearPollAllowMultiple()
		}
		if l := d.Location; l != nil {
			u.SetLatitude(l.Latitude).SetLongitude(l.Longitude).SetLocationName(l.Name).SetLocationAddress(l.Address)
		} else {
			u.ClearLatitude().ClearLongitude().SetLocationName("").SetLocationAddress("")
		}
		if d.EngineID == "" {
			u.ClearEngineID()
		} else {
			u.SetEngineID(d.EngineID)
		}
		if d.SendAt != nil {
			u.SetSendAt(*d.SendAt)
		} else {
			u.ClearSendAt()
		}
		m, err = u.Save(ctx)
		if ent.IsNotFound(err) {
			return switchboard.Errorf(switchboard.ECONFLICT, "The message was dispatched while being edited.")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if patch.SendAt != nil {
		if err := r.Queue.Reschedule(ctx, m.WorkspaceID, m.ID, *m.SendAt); err != nil {
			slog.Warn("reschedule failed; the reconciler will retry", "message", m.ID, "err", err)
		}
	}
	return m, nil
}

// cancel is the use case behind cancelScheduledMessage.
func (r *Resolver) cancel(ctx context.Context, id string) (*model.DeletePayload, error) {
	m, err := r.queued(ctx, id)
	if err != nil {
		return nil, err
	}
	if messaging.StatusOf(m) != messaging.StatusPending {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "The message is %s; only pending messages can be cancelled.", m.Status)
	}
	err = storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
		_, ok, err := messaging.Move(ctx, tx, m, messaging.StatusCancelled, r.now())
		if err == nil && !ok {
			err = switchboard.Errorf(switchboard.ECONFLICT, "The message was dispatched before it could be cancelled.")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := r.Queue.Unschedule(ctx, m.ID); err != nil {
		// Harmless: the dispatch finds the message cancelled and does nothing.
		slog.Warn("unschedule of a cancelled message failed", "message", m.ID, "err", err)
	}
	return &model.DeletePayload{ID: m.ID, Deleted: true}, nil
}

// merge applies a patch to a stored message and returns the complete input to
// validate, and whether the stored media is kept as it is.
func merge(m *ent.Message, p model.MessagePatch) (model.MessageInput, bool) {
	in := model.MessageInput{Type: m.Type, ReplyTo: nonEmpty(m.ReplyTo), Secret: nonEmpty(m.Secret)}
	if p.Type != nil {
		in.Type = *p.Type
	}
	typeChanged := in.Type != m.Type
	keepMedia := p.MediaURL == nil && p.MediaBase64 == nil && p.MediaFile == nil
	switch in.Type {
	case "text", "media":
		in.Text = nonEmpty(m.Text)
	}
	if in.Type == "media" && !typeChanged && keepMedia {
		in.MediaURL, in.MediaKind, in.MediaFilename = nonEmpty(m.MediaURL), nonEmpty(m.MediaKind), nonEmpty(m.MediaFilename)
	}
	if in.Type == "poll" && !typeChanged {
		in.PollQuestion, in.PollOptions, in.PollAllowMultiple = nonEmpty(m.PollQuestion), m.PollOptions, m.PollAllowMultiple
	}
	if l := messaging.LocationOf(m); in.Type == engine.TypeLocation && !typeChanged && l != nil {
		in.Location = &model.LocationInput{Latitude: l.Latitude, Longitude: l.Longitude, Name: nonEmpty(l.Name), Address: nonEmpty(l.Address)}
	}
	if in.Type == engine.TypeVCard && !typeChanged {
		for _, c := range messaging.ContactsOf(m) {
			in.Contacts = append(in.Contacts, &model.ContactCardInput{DisplayName: nonEmpty(c.DisplayName), Vcard: c.VCard})
		}
	}
	if p.Location != nil {
		in.Location = p.Location
	}
	if p.Contacts != nil {
		in.Contacts = p.Contacts
	}
	set := func(dst **string, v *string) {
		if v != nil {
			*dst = v
		}
	}
	set(&in.Text, p.Text)
	set(&in.MediaURL, p.MediaURL)
	set(&in.MediaBase64, p.MediaBase64)
	set(&in.MediaKind, p.MediaKind)
	set(&in.MediaFilename, p.MediaFilename)
	set(&in.PollQuestion, p.PollQuestion)
	set(&in.SendAt, p.SendAt)
	set(&in.ReplyTo, p.ReplyTo)
	set(&in.Secret, p.Secret)
	if p.MediaFile != nil {
		in.MediaFile = p.MediaFile
	}
	if p.PollOptions != nil {
		in.PollOptions = p.PollOptions
	}
	if p.PollAllowMultiple != nil {
		in.PollAllowMultiple = p.PollAllowMultiple
	}
	return in, keepMedia && !typeChanged
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// messagePage is one page of q (the queue's messages) by time in order, with
// the exact total.
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
