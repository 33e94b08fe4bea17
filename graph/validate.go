package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/engine"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/media"
	"github.com/switchboardhq/switchboard/messaging"
)

// Bounds from the spec and the reference contract.
const (
	maxText          = messaging.MaxText
	maxMediaURL      = 2048
	maxMediaBase64   = 15 << 20
	maxFilename      = 255
	maxPollQuestion  = 255
	maxPollOption    = 100
	minPollOptions   = 2
	maxPollOptions   = 12
	maxReplyTo       = 256
	maxSecret        = 256
	maxIdempotency   = 64
	maxSearchToken   = 200
	minSendAhead     = 10 * time.Second
	maxSendAhead     = 365 * 24 * time.Hour
	defaultPageLimit = 50
	maxPageLimit     = 200
)

var (
	// A chat id: a user by phone number (c.us) or by LID (lid, WhatsApp's
	// number-hiding address), a group (with the legacy creator-timestamp form),
	// or a channel.
	jidRE     = regexp.MustCompile(`^(?:[0-9]+(?:-[0-9]+)?@(?:c[.]us|g[.]us|newsletter)|[0-9]+@lid)$`)
	e164RE    = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	mentionRE = regexp.MustCompile(`@\[([^\]\n]{1,100})\]\(([0-9]+@c[.]us)\)`)
	types     = []string{"text", "media", "poll", engine.TypeLocation, engine.TypeVCard}
)

// NormalizeChatID turns a path chat id (E.164 phone or JID) into a JID.
func NormalizeChatID(raw string) (string, error) {
	switch {
	case e164RE.MatchString(raw):
		return raw[1:] + "@c.us", nil
	case jidRE.MatchString(raw):
		return raw, nil
	}
	return "", &switchboard.Error{
		Code:    switchboard.EINVALID,
		Message: "chatId must be a phone number in E.164 form (+15551234567) or a chat id (<digits>@c.us, <digits>@lid, <digits>@g.us, <digits>@newsletter).",
		Details: []switchboard.Detail{{Path: "chatId", Code: "invalid_string", Message: "Invalid chat id " + quote(raw)}},
	}
}

// IsJID reports whether s is a chat id in the spec's JID pattern.
func IsJID(s string) bool { return jidRE.MatchString(s) }

// draft is a validated, normalized message about to be stored: the message
// (messaging.Draft) and the bytes of an upload, stored before it.
type draft struct {
	messaging.Draft
	MediaBytes  []byte `json:"-"`
	MediaDigest string `json:"mediaDigest,omitempty"`
	// EngineID is the engine the message must go through; "" lets dispatch
	// choose (dispatch.Route).
	EngineID string `json:"engineId,omitempty"`
	// ForwardedFrom is the key of the stored message a forward copies.
	ForwardedFrom string `json:"-"`
}

// sendAtRule says whether sendAt may be given.
type sendAtRule int

const (
	sendAtAllowed sendAtRule = iota
	sendAtForbidden
)

// buildDraft validates a message input against every rule of the spec. to is the
// normalized chat id; checkURL is the rule of a mediaUrl (see Resolver.mediaURLRule).
func buildDraft(to string, in model.MessageInput, now time.Time, rule sendAtRule, checkURL func(string) error) (*draft, error) {
	var p switchboard.Problems
	d := &draft{Draft: messaging.Draft{To: to, Type: in.Type}}
	if !slices.Contains(types, in.Type) {
		p.Add("type", "invalid_enum_value", "type must be one of text, media, poll, location, vcard")
	}
	text := deref(in.Text)
	if in.Text != nil {
		if n := utf8.RuneCountInString(text); n > maxText {
			p.Add("text", "too_big", "text must be at most %d characters (got %d)", maxText, n)
		}
	}
	switch in.Type {
	case "text":
		if strings.TrimSpace(text) == "" {
			p.Add("text", "too_small", "text is required for type text (1-%d characters)", maxText)
		}
		d.Text = text
	case "media":
		d.Text = text
		checkMedia(&p, d, in, checkURL)
	case "poll":
		checkPoll(&p, d, in)
	case engine.TypeLocation, engine.TypeVCard:
		if in.Text != nil {
			p.Add("text", "unrecognized_keys", "text applies only to types text and media (a caption); a %s message has none", in.Type)
		}
	}
	checkLocation(&p, d, in)
	checkCards(&p, d, in)
	if in.Type != "media" {
		checkMediaFieldsAbsent(&p, in)
	}
	if in.Type != "poll" && (in.PollQuestion != nil || in.PollOptions != nil || in.PollAllowMultiple != nil) {
		p.Add("pollQuestion", "unrecognized_keys", "poll fields apply only to type poll")
	}
	if in.SendAt != nil {
		if rule == sendAtForbidden {
			p.Add("sendAt", "unrecognized_keys", "sendAt is not accepted here; use POST /v1/scheduled-messages to defer a send")
		} else if t, err := time.Parse(time.RFC3339, *in.SendAt); err != nil {
			p.Add("sendAt", "invalid_date", "sendAt must be an RFC 3339 date-time, e.g. 2030-01-02T15:04:05Z")
		} else if ahead := t.Sub(now); ahead < minSendAhead {
			p.Add("sendAt", "too_small", "sendAt must be at least 10 seconds in the future")
		} else if ahead > maxSendAhead {
			p.Add("sendAt", "too_big", "sendAt must be at most 365 days in the future")
		} else {
			t = t.UTC()
			d.SendAt = &t
		}
	}
	if in.ReplyTo != nil {
		if len(*in.ReplyTo) > maxReplyTo {
			p.Add("replyTo", "too_big", "replyTo must be at most %d characters", maxReplyTo)
		}
		d.ReplyTo = *in.ReplyTo
	}
	if in.Secret != nil {
		if n := utf8.RuneCountInString(*in.Secret); n < 1 || n > maxSecret {
			p.Add("secret", "too_big", "secret must be 1-%d characters", maxSecret)
		}
		d.Secret = *in.Secret
	}
	for _, m := range mentionRE.FindAllStringSubmatch(d.Text, -1) {
		if !slices.Contains(d.Mentions, m[2]) {
			d.Mentions = append(d.Mentions, m[2])
		}
	}
	if err := p.Err(switchboard.EVALIDATION); err != nil {
		return nil, err
	}
	return d, nil
}

func checkMedia(p *switchboard.Problems, d *draft, in model.MessageInput, checkURL func(string) error) {
	name := deref(in.MediaFilename)
	if in.MediaFilename != nil {
		if n := utf8.RuneCountInString(name); n < 1 || n > maxFilename {
			p.Add("mediaFilename", "too_big", "mediaFilename must be 1-%d characters", maxFilename)
		}
	}
	switch {
	case in.MediaURL != nil && *in.MediaURL != "":
		u := *in.MediaURL
		if len(u) > maxMediaURL {
			p.Add("mediaUrl", "too_big", "mediaUrl must be at most %d characters", maxMediaURL)
		} else if err := checkURL(u); err != nil {
			p.Add("mediaUrl", "invalid_string", "mediaUrl must be a public https URL: it %v", err)
		} else if pu, err := url.Parse(u); name == "" && err == nil {
			name = pathBase(pu.Path)
		}
		d.MediaURL = u
	case in.MediaFile != nil:
		data, err := io.ReadAll(in.MediaFile.File)
		if err != nil || len(data) == 0 {
			p.Add("mediaFile", "invalid_type", "mediaFile must be a non-empty file")
			break
		}
		d.MediaBytes, d.MediaContentType = data, in.MediaFile.ContentType
		if name == "" {
			name = in.MediaFile.Filename
		}
	case in.MediaBase64 != nil && *in.MediaBase64 != "":
		if len(*in.MediaBase64) > maxMediaBase64 {
			p.Add("mediaBase64", "too_big", "mediaBase64 must be at most %d characters", maxMediaBase64)
			break
		}
		data, ct, err := media.DecodeBase64(*in.MediaBase64)
		if err != nil {
			p.Add("mediaBase64", "invalid_string", "mediaBase64 %v", err)
			break
		}
		d.MediaBytes, d.MediaContentType = data, ct
	default:
		p.Add("mediaUrl", "invalid_type", "type media needs mediaUrl, mediaBase64 or a mediaFile upload")
	}
	if d.MediaBytes != nil {
		sum := sha256.Sum256(d.MediaBytes)
		d.MediaDigest = hex.EncodeToString(sum[:])
	}
	d.MediaFilename = name
	if d.MediaBytes != nil && d.MediaContentType == "" {
		d.MediaContentType = http.DetectContentType(d.MediaBytes)
	}
	if in.MediaKind != nil {
		if !slices.Contains(engine.MediaKinds, *in.MediaKind) {
			p.Add("mediaKind", "invalid_enum_value", "mediaKind must be one of %s", strings.Join(engine.MediaKinds, ", "))
		} else if d.MediaBytes != nil && !kindTakes(*in.MediaKind, d.MediaContentType) {
			p.Add("mediaKind", "invalid_type", "mediaKind %s cannot carry a file of type %s (send it as a document)",
				*in.MediaKind, mediaTypeOf(d.MediaContentType))
		}
		d.MediaKind = *in.MediaKind
	} else {
		d.MediaKind = media.DetectKind(d.MediaContentType, name)
	}
}

// kindTakes reports whether a media kind can carry a file of contentType: an
// image or sticker an image, a video or video note a video, a gif a GIF or a
// video, audio or a voice note audio (Ogg included); a document anything.
func kindTakes(kind, contentType string) bool {
	mt := mediaTypeOf(contentType)
	switch kind {
	case "image", "sticker":
		return strings.HasPrefix(mt, "image/") && mt != "image/svg+xml"
	case "video", "ptv":
		return strings.HasPrefix(mt, "video/")
	case "gif":
		return mt == "image/gif" || strings.HasPrefix(mt, "video/")
	case "audio", "voice":
		return strings.HasPrefix(mt, "audio/") || mt == "application/ogg"
	}
	return true
}

// mediaTypeOf is contentType without its parameters, lower case.
func mediaTypeOf(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// checkLocation checks the location of a location message, which no other
// type takes: latitude -90..90, longitude -180..180, name and address short.
func checkLocation(p *switchboard.Problems, d *draft, in model.MessageInput) {
	l := in.Location
	switch {
	case in.Type != engine.TypeLocation && l != nil:
		p.Add("location", "unrecognized_keys", "location applies only to type location")
		return
	case in.Type != engine.TypeLocation:
		return
	case l == nil:
		p.Add("location", "invalid_type", "location is required for type location ({latitude, longitude, name?, address?})")
		return
	}
	if math.IsNaN(l.Latitude) || l.Latitude < -90 || l.Latitude > 90 {
		p.Add("location.latitude", "too_big", "location.latitude must be a number between -90 and 90")
	}
	if math.IsNaN(l.Longitude) || l.Longitude < -180 || l.Longitude > 180 {
		p.Add("location.longitude", "too_big", "location.longitude must be a number between -180 and 180")
	}
	loc := &engine.Location{Latitude: l.Latitude, Longitude: l.Longitude, Name: deref(l.Name), Address: deref(l.Address)}
	for _, f := range []struct{ name, v string }{{"name", loc.Name}, {"address", loc.Address}} {
		if len(f.v) > engine.MaxShortText {
			p.Add("location."+f.name, "too_big", "location.%s must be at most %d bytes", f.name, engine.MaxShortText)
		}
	}
	d.Location = loc
}

// checkCards checks the contact cards of a vcard message, which no other
// type takes: 1-256 cards, each a vCard (BEGIN:VCARD … END:VCARD) of at most
// 64 KiB with a short shown name.
func checkCards(p *switchboard.Problems, d *draft, in model.MessageInput) {
	switch {
	case in.Type != engine.TypeVCard && in.Contacts != nil:
		p.Add("contacts", "unrecognized_keys", "contacts applies only to type vcard")
		return
	case in.Type != engine.TypeVCard:
		return
	case len(in.Contacts) == 0:
		p.Add("contacts", "too_small", "contacts is required for type vcard (1-%d contact cards)", engine.MaxContacts)
		return
	case len(in.Contacts) > engine.MaxContacts:
		p.Add("contacts", "too_big", "contacts must have at most %d contact cards (got %d)", engine.MaxContacts, len(in.Contacts))
		return
	}
	for i, c := range in.Contacts {
		path := "contacts." + itoa(i)
		card := strings.TrimSpace(c.Vcard)
		switch {
		case len(c.Vcard) > engine.MaxVCard:
			p.Add(path+".vcard", "too_big", "a vcard must be at most %d bytes", engine.MaxVCard)
		case !isVCard(card):
			p.Add(path+".vcard", "invalid_string", "a vcard must start with BEGIN:VCARD and end with END:VCARD")
		}
		if len(deref(c.DisplayName)) > engine.MaxShortText {
			p.Add(path+".displayName", "too_big", "displayName must be at most %d bytes", engine.MaxShortText)
		}
		d.Contacts = append(d.Contacts, engine.ContactCard{DisplayName: deref(c.DisplayName), VCard: card})
	}
}

// isVCard reports whether s (trimmed) is framed as a vCard: a BEGIN:VCARD
// line, at least one line of content, and an END:VCARD line.
func isVCard(s string) bool {
	const begin, end = "BEGIN:VCARD", "END:VCARD"
	if len(s) < len(begin)+len(end) || !strings.EqualFold(s[:len(begin)], begin) ||
		!strings.EqualFold(s[len(s)-len(end):], end) {
		return false
	}
	body := s[len(begin) : len(s)-len(end)]
	return (strings.HasPrefix(body, "\n") || strings.HasPrefix(body, "\r\n")) &&
		strings.HasSuffix(body, "\n") && strings.TrimSpace(body) != ""
}

func checkMediaFieldsAbsent(p *switchboard.Problems, in model.MessageInput) {
	if in.MediaURL != nil || in.MediaBase64 != nil || in.MediaFile != nil || in.MediaKind != nil || in.MediaFilename != nil {
		p.Add("mediaUrl", "unrecognized_keys", "media fields apply only to type media")
	}
}

func checkPoll(p *switchboard.Problems, d *draft, in model.MessageInput) {
	q := strings.TrimSpace(deref(in.PollQuestion))
	if n := utf8.RuneCountInString(q); n < 1 || n > maxPollQuestion {
		p.Add("pollQuestion", "too_small", "pollQuestion is required for type poll (1-%d characters)", maxPollQuestion)
	}
	d.PollQuestion = q
	if n := len(in.PollOptions); n < minPollOptions || n > maxPollOptions {
		code := "too_small"
		if n > maxPollOptions {
			code = "too_big"
		}
		p.Add("pollOptions", code, "pollOptions must have %d-%d items (got %d)", minPollOptions, maxPollOptions, n)
	}
	seen := map[string]bool{}
	for i, o := range in.PollOptions {
		path := "pollOptions." + itoa(i)
		if n := utf8.RuneCountInString(strings.TrimSpace(o)); n < 1 || n > maxPollOption {
			p.Add(path, "too_big", "each poll option must be 1-%d characters", maxPollOption)
		} else if seen[strings.ToLower(strings.TrimSpace(o))] {
			p.Add(path, "custom", "poll options must be unique")
		}
		seen[strings.ToLower(strings.TrimSpace(o))] = true
	}
	d.PollOptions = in.PollOptions
	allow := in.PollAllowMultiple != nil && *in.PollAllowMultiple
	d.PollAllowMultiple = &allow
}

// checkPage validates limit and skip and applies their defaults.
func checkPage(limit, skip *int) (int, int, error) {
	var p switchboard.Problems
	l, s := defaultPageLimit, 0
	if limit != nil {
		if l = *limit; l < 1 || l > maxPageLimit {
			p.Add("limit", boundCode(l, 1), "limit must be between 1 and %d", maxPageLimit)
		}
	}
	if skip != nil {
		if s = *skip; s < 0 {
			p.Add("skip", "too_small", "skip must be 0 or more")
		}
	}
	return l, s, p.Err(switchboard.EINVALID)
}

// boundCode is the detail code of a number outside its bounds: too_small below
// min, too_big above.
func boundCode(n, min int) string {
	if n < min {
		return "too_small"
	}
	return "too_big"
}

// pageError is the EINVALID error of a page bound broken by the argument name.
func pageError(name, format string, args ...any) error {
	var p switchboard.Problems
	p.Add(name, "too_big", format, args...)
	return p.Err(switchboard.EINVALID)
}

// checkIdempotencyKey validates the Idempotency-Key.
func checkIdempotencyKey(k string) error {
	if k == "" || len(k) > maxIdempotency {
		return &switchboard.Error{Code: switchboard.EINVALID, Message: "Idempotency-Key must be 1-64 characters.",
			Details: []switchboard.Detail{{Path: "Idempotency-Key", Code: "too_big", Message: "Idempotency-Key must be 1-64 characters"}}}
	}
	return nil
}

// checkStatus validates a status filter.
func checkStatus(s string) error {
	if slices.Contains(messaging.Statuses, messaging.Status(s)) {
		return nil
	}
	return &switchboard.Error{Code: switchboard.EINVALID, Message: "Unknown status " + quote(s) + ".",
		Details: []switchboard.Detail{{Path: "status", Code: "invalid_enum_value", Message: "status must be one of " + joinValues(messaging.Statuses)}}}
}

// joinValues lists the values of an enumeration (statuses) for a message, comma-separated.
func joinValues[S ~string](values []S) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "" || len(p) > maxFilename {
		return ""
	}
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}
