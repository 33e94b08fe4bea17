package graph

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/ent/story"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/inbox"
	"github.com/switchboardhq/switchboard/storage"
)

// Statuses, WhatsApp's stories (docs/status.md). The account's posts go out at
// once through one engine (capability status) and are stored as sent; the
// statuses contacts post are stored by the inbox (inbox/status.go). Both are
// rows of the story table, listed newest first, unexpired (24 hours) unless
// asked.

// Bounds of a status.
const (
	maxStatusText     = 700
	maxStatusCaption  = 1024
	maxStatusAudience = 256
)

// statusTypes are the types a status may be posted with.
var statusTypes = []string{"text", "image", "video", "audio"}

// colorRE is a colour, #RRGGBB or #AARRGGBB.
var colorRE = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$`)

// statusPost is a validated status to post: the engine's post, the media to
// store first, and the record's fields.
type statusPost struct {
	post  engine.StatusPost
	media *draft // a media status's attachment (validated like a message's)
	color string
	typ   string
}

// buildStatus validates a status input (422 naming every bad field; a bad
// audience entry by its index).
func (r *Resolver) buildStatus(ctx context.Context, in model.StatusInput) (*statusPost, error) {
	var p switchboard.Problems
	s := &statusPost{typ: in.Type}
	if !slices.Contains(statusTypes, in.Type) {
		p.Add("type", "invalid_enum_value", "type must be one of %s", strings.Join(statusTypes, ", "))
	}
	text, caption := deref(in.Text), deref(in.Caption)
	if in.Type == "text" {
		s.post.Type = "text"
		if n := utf8.RuneCountInString(text); strings.TrimSpace(text) == "" || n > maxStatusText {
			p.Add("text", "too_big", "text must be 1-%d characters for a text status (got %d)", maxStatusText, n)
		}
		s.post.Text = text
		if in.Caption != nil {
			p.Add("caption", "unrecognized_keys", "caption applies to media statuses; a text status has text")
		}
		if c := in.BackgroundColor; c != nil {
			if argb, ok := parseColor(*c); !ok {
				p.Add("backgroundColor", "invalid_string", "backgroundColor must be #RRGGBB or #AARRGGBB")
			} else {
				s.post.BackgroundArgb, s.color = argb, fmt.Sprintf("#%06X", argb&0xFFFFFF)
			}
		}
		if f := in.Font; f != nil {
			if !slices.Contains(engine.StatusFonts, *f) {
				p.Add("font", "invalid_enum_value", "font must be one of 0, 1, 2, 6, 7, 8, 9, 10")
			} else {
				s.post.Font = *f
			}
		}
		if in.MediaURL != nil || in.MediaBase64 != nil || in.MediaFile != nil {
			p.Add("mediaUrl", "unrecognized_keys", "media applies to image, video and audio statuses")
		}
	} else if slices.Contains(statusTypes, in.Type) {
		s.post.Type = "media"
		if in.Text != nil {
			p.Add("text", "unrecognized_keys", "a media status has a caption, not text")
		}
		if in.BackgroundColor != nil || in.Font != nil {
			p.Add("backgroundColor", "unrecognized_keys", "backgroundColor and font apply to text statuses")
		}
		if n := utf8.RuneCountInString(caption); n > maxStatusCaption {
			p.Add("caption", "too_big", "caption must be at most %d characters (got %d)", maxStatusCaption, n)
		}
		s.post.Text = caption
		kind := in.Type
		msg := model.MessageInput{Type: "media", MediaURL: in.MediaURL, MediaBase64: in.MediaBase64, MediaFile: in.MediaFile, MediaKind: &kind}
		d := &draft{}
		checkMedia(&p, d, msg, r.mediaURLRule(ctx, false))
		s.media, s.post.MediaKind = d, kind
	}
	s.post.Audience = statusAudience(&p, in.Audience)
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	return s, nil
}

// statusAudience validates an audience: none (or "contacts" alone) is the
// account's contacts (nil), else 1-maxStatusAudience contacts, each named by
// its index when bad.
func statusAudience(p *switchboard.Problems, in []string) []string {
	if in == nil || (len(in) == 1 && in[0] == "contacts") {
		return nil
	}
	switch {
	case len(in) == 0:
		p.Add("audience", "too_small", "audience must be \"contacts\" or 1-%d contacts", maxStatusAudience)
		return nil
	case len(in) > maxStatusAudience:
		p.Add("audience", "too_big", "audience must be at most %d contacts (got %d)", maxStatusAudience, len(in))
		return nil
	}
	out := make([]string, 0, len(in))
	for i, raw := range in {
		jid, ok := participantID(raw)
		if !ok {
			p.Add("audience."+strconv.Itoa(i), "invalid_string", "audience[%d] must be a phone number in E.164 form (+15551234567) or a contact id (<digits>@c.us), not %s", i, quote(raw))
			continue
		}
		if !slices.Contains(out, jid) {
			out = append(out, jid)
		}
	}
	return out
}

// parseColor parses #RRGGBB (opaque) or #AARRGGBB into ARGB.
func parseColor(s string) (uint32, bool) {
	if !colorRE.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return 0, false
	}
	if len(s) == 7 {
		v |= 0xFF000000
	}
	return uint32(v), true
}

// postStatus is the use case behind postStatus (POST /v1/status): the status
// goes out at once through the acting engine and is stored as sent; a refusal
// is 422, and nothing is stored.
func (r *Resolver) postStatus(ctx context.Context, engineID *string, in model.StatusInput) (*model.Status, error) {
	s, err := r.buildStatus(ctx, in)
	if err != nil {
		return nil, err
	}
	sp, eng, err := actingAs[engine.StatusPoster](ctx, r, engineID, engine.CapStatus, "posting a status")
	if err != nil {
		return nil, err
	}
	id := switchboard.NewID("status")
	s.post.WireID = engine.WireID(id)
	if d := s.media; d != nil {
		if d.MediaBytes != nil {
			err := storage.WithTx(ctx, r.Client, func(tx *ent.Tx) error {
				u, err := r.Media.Put(ctx, tx, d.MediaBytes, d.MediaContentType, d.MediaFilename)
				d.MediaURL = u
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("store media: %w", err)
			}
		}
		s.post.MediaURL = d.MediaURL
	}
	key, err := sp.PostStatus(ctx, s.post)
	if err != nil {
		return nil, statusError(err)
	}
	now := r.now()
	author := ""
	if row, err := r.engineRow(ctx, eng.ID()); err == nil && row.Phone != "" {
		author = strings.TrimPrefix(row.Phone, "+") + "@c.us"
	}
	c := r.Client.Story.Create().SetID(id).SetWorkspaceID(viewerWorkspace(ctx)).SetEngineID(eng.ID()).
		SetFromMe(true).SetAuthor(author).SetType(s.typ).SetText(s.post.Text).SetBackgroundColor(s.color).
		SetFont(s.post.Font).SetMediaURL(s.post.MediaURL).SetMediaKind(s.post.MediaKind).
		SetStatus("sent").SetWaID(key.ID).SetCreatedAt(now).SetExpiresAt(now.Add(engine.StatusLifetime))
	if s.media != nil {
		c.SetMediaMime(s.media.MediaContentType)
	}
	if s.post.Audience != nil {
		c.SetAudience(s.post.Audience)
	}
	row, err := c.Save(ctx)
	if err != nil {
		return nil, err
	}
	return statusModel(row, now), nil
}

// statusError maps an engine's refusal of a status: a chosen audience it
// cannot serve, or a status it refuses, 422; a status it does not know 404.
func statusError(err error) error {
	switch {
	case errors.Is(err, engine.ErrAudience):
		return fieldError(switchboard.EVALIDATION, "audience", "unsupported",
			"This engine posts statuses only to the account's status audience (the phone's status privacy setting); leave audience out")
	case errors.Is(err, engine.ErrNotFound):
		return notFound("id", "The network knows no such status of the account.")
	case errors.Is(err, engine.ErrRejected):
		return fieldError(switchboard.EVALIDATION, "body", "rejected", "The network refused the status: "+err.Error())
	}
	return err
}

// storyByID returns a status by its id, or 404.
func (r *Resolver) storyByID(ctx context.Context, id string) (*ent.Story, error) {
	row, err := r.Client.Story.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, notFound("id", "No status with id %s.", quote(id))
	}
	return row, err
}

// storyStatus is the use case behind storyStatus (GET /v1/status/{id}).
func (r *Resolver) storyStatus(ctx context.Context, id string) (*model.Status, error) {
	row, err := r.storyByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return statusModel(row, r.now()), nil
}

// deleteStatus is the use case behind deleteStatus (DELETE /v1/status/{id}):
// the engine that posted the status revokes it; a contact's status cannot be
// deleted (409), one deleted before is answered as it is.
func (r *Resolver) deleteStatus(ctx context.Context, id string) (*model.Status, error) {
	row, err := r.storyByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if !row.FromMe {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "The status %s is a contact's; only the account's own statuses can be deleted.", id)
	}
	if row.Status == "revoked" {
		return statusModel(row, r.now()), nil
	}
	eng, err := r.actingEngineID(ctx, row.EngineID, engine.CapStatus, "deleting a status")
	if err != nil {
		return nil, err
	}
	sp, ok := eng.(engine.StatusPoster)
	if !ok {
		return nil, switchboard.NotSupported(eng.ID(), engine.CapStatus)
	}
	if err := sp.RevokeStatus(ctx, row.WaID); err != nil {
		return nil, statusError(err)
	}
	if row, err = row.Update().SetStatus("revoked").Save(ctx); err != nil {
		return nil, err
	}
	return statusModel(row, r.now()), nil
}

// statuses is the use case behind statuses (GET /v1/status).
func (r *Resolver) statuses(ctx context.Context, engineID, contact *string, fromMe, includeExpired *bool, limit, skip *int) (*model.StatusPage, error) {
	l, s, err := checkPage(limit, skip)
	if err != nil {
		return nil, err
	}
	q := r.Client.Story.Query()
	if engineID != nil && *engineID != "" {
		q.Where(story.EngineID(*engineID))
	}
	if contact != nil && *contact != "" {
		jid, err := checkParticipant("contact", *contact)
		if err != nil {
			return nil, err
		}
		q.Where(story.Author(jid))
	}
	if fromMe != nil {
		q.Where(story.FromMe(*fromMe))
	}
	now := r.now()
	if includeExpired == nil || !*includeExpired {
		q.Where(story.ExpiresAtGT(now))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := q.Order(story.ByCreatedAt(sql.OrderDesc()), story.ByID(sql.OrderDesc())).Limit(l).Offset(s).All(ctx)
	if err != nil {
		return nil, err
	}
	items := make([]*model.Status, len(rows))
	for i, row := range rows {
		items[i] = statusModel(row, now)
	}
	return &model.StatusPage{Items: items, Limit: l, Skip: s, Total: total}, nil
}

// simulateStatus is the use case behind simulateStatus (POST
// /v1/sandbox/statuses): a contact of the sandbox engine posts a status, which
// the engine reports like any; the answer is the record it becomes.
func (r *Resolver) simulateStatus(ctx context.Context, in model.SimulatedStatusInput) (*model.Status, error) {
	from, ok := participantID(in.From)
	var p switchboard.Problems
	if !ok {
		p.Add("from", "invalid_string", "from must be a phone number in E.164 form (+15551234567) or a contact id (<digits>@c.us)")
	}
	st := &engine.StatusUpdate{From: from, Text: deref(in.Text)}
	switch in.Type {
	case "text":
		st.Type = "text"
		if n := utf8.RuneCountInString(st.Text); strings.TrimSpace(st.Text) == "" || n > maxStatusText {
			p.Add("text", "too_big", "text must be 1-%d characters for a text status", maxStatusText)
		}
	case "image":
		st.Type, st.Media = "media", &engine.MediaInfo{Kind: "image", MimeType: "image/jpeg", Caption: st.Text}
		if n := utf8.RuneCountInString(st.Text); n > maxStatusCaption {
			p.Add("text", "too_big", "text (the caption) must be at most %d characters", maxStatusCaption)
		}
	default:
		p.Add("type", "invalid_enum_value", "type must be text or image")
	}
	if c := in.BackgroundColor; c != nil {
		argb, ok := parseColor(*c)
		if !ok {
			p.Add("backgroundColor", "invalid_string", "backgroundColor must be #RRGGBB or #AARRGGBB")
		}
		st.BackgroundArgb = argb
	}
	if f := in.Font; f != nil {
		if !slices.Contains(engine.StatusFonts, *f) {
			p.Add("font", "invalid_enum_value", "font must be one of 0, 1, 2, 6, 7, 8, 9, 10")
		}
		st.Font = *f
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	eng, err := r.actingEngine(ctx, in.EngineID, "", "simulating a status")
	if err != nil {
		return nil, err
	}
	sim, ok := eng.(simulator)
	if !ok {
		return nil, switchboard.Errorf(switchboard.ECONFLICT, "The engine %s is not a sandbox; it reports real statuses only.", eng.ID())
	}
	st.Key = engine.Key{Remote: engine.StatusChat, ID: engine.WireID(switchboard.NewID("sbs")), Participant: from}
	now := time.Now()
	if err := sim.Simulate(ctx, engine.Event{Type: engine.EventStatus, Key: st.Key, Status: st}); err != nil {
		return nil, err
	}
	typ := "text"
	if st.Media != nil {
		typ = st.Media.Kind
	}
	row := &ent.Story{ID: inbox.StatusID(eng.ID(), st.Key), EngineID: eng.ID(), Author: from, Type: typ, Text: st.Text,
		BackgroundColor: inbox.StatusColor(st.BackgroundArgb), Font: st.Font, Status: "received", WaID: st.Key.ID,
		CreatedAt: now, ExpiresAt: now.Add(engine.StatusLifetime)}
	if st.Media != nil {
		row.MediaMime = st.Media.MimeType
	}
	return statusModel(row, now), nil
}

// statusModel is a stored status as the API tells it.
func statusModel(s *ent.Story, now time.Time) *model.Status {
	out := &model.Status{ID: s.ID, EngineID: s.EngineID, FromMe: s.FromMe, From: s.Author, SenderName: s.SenderName,
		Type: s.Type, Text: s.Text, Font: s.Font, Status: s.Status, WaMessageID: s.WaID,
		CreatedAt: s.CreatedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(), Expired: !now.Before(s.ExpiresAt),
		BackgroundColor: nonEmpty(s.BackgroundColor), MediaURL: nonEmpty(s.MediaURL), MediaMimeType: nonEmpty(s.MediaMime)}
	if len(s.Audience) > 0 {
		out.Audience = s.Audience
	}
	return out
}
