package rest

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5"

	"github.com/switchboardhq/switchboard"
	"github.com/switchboardhq/switchboard/ent"
	"github.com/switchboardhq/switchboard/graph/model"
	"github.com/switchboardhq/switchboard/messaging"
	"github.com/switchboardhq/switchboard/view"
)

// messageBody is the flat JSON body of a send (spec endpoints 4 and 5) or an edit.
type messageBody struct {
	Type              *string  `json:"type"`
	Text              *string  `json:"text"`
	MediaURL          *string  `json:"mediaUrl"`
	MediaBase64       *string  `json:"mediaBase64"`
	MediaKind         *string  `json:"mediaKind"`
	MediaFilename     *string  `json:"mediaFilename"`
	PollQuestion      *string  `json:"pollQuestion"`
	PollOptions       []string `json:"pollOptions"`
	PollAllowMultiple *bool    `json:"pollAllowMultiple"`
	// Location is the place of a location message; in a multipart form, a part
	// holding its JSON.
	Location *model.LocationInput `json:"location"`
	// Contacts are the cards of a vcard message; in a multipart form, a part
	// holding their JSON array.
	Contacts  []*model.ContactCardInput `json:"contacts"`
	SendAt    *string                   `json:"sendAt"`
	ReplyTo   *string                   `json:"replyTo"`
	Secret    *string                   `json:"secret"`
	EngineID  *string                   `json:"engineId"`
	mediaFile *graphql.Upload
}

// typingFields are the fields a send (direct, the reference's, or scheduled)
// takes beside its message: whether "typing…" shows first, and for how much
// longer than its short jitter.
type typingFields struct {
	WithTyping    *bool    `json:"withTyping"`
	TypingSeconds *float64 `json:"typingSeconds"`
}

// directBody is the body of POST /v1/messages/{chatId} and of POST
// /v1/scheduled-messages/{chatId}.
type directBody struct {
	messageBody
	typingFields
}

// readMessageBody reads a JSON or multipart/form-data message body.
func readMessageBody(w http.ResponseWriter, r *http.Request, emptyOK bool) (*messageBody, error) {
	return readBody(w, r, emptyOK, nil)
}

// readDirectBody reads the body of a send: a message body and typingFields.
func readDirectBody(w http.ResponseWriter, r *http.Request) (*messageBody, *typingFields, error) {
	var t typingFields
	b, err := readBody(w, r, false, &t)
	return b, &t, err
}

// readBody reads a message body, and typing's fields when typing is not nil.
func readBody(w http.ResponseWriter, r *http.Request, emptyOK bool, typing *typingFields) (*messageBody, error) {
	var b messageBody
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if typing == nil {
			return &b, decodeJSON(w, r, &b, emptyOK)
		}
		d := directBody{}
		err := decodeJSON(w, r, &d, emptyOK)
		*typing = d.typingFields
		return &d.messageBody, err
	}
	if err := parseMultipart(w, r); err != nil {
		return nil, err
	}
	var p switchboard.Problems
	str := func(name string) *string {
		if v, ok := r.MultipartForm.Value[name]; ok {
			return &v[0]
		}
		return nil
	}
	accepted := acceptedFields(&b)
	if typing != nil {
		accepted = acceptedFields(&directBody{})
	}
	for name := range r.MultipartForm.Value {
		if !slices.Contains(accepted, name) && name != "pollOptions[]" {
			p = append(p, switchboard.ErrorDetails(unknownField(name, append(accepted, "mediaFile")))...)
		}
	}
	b.Type, b.Text, b.MediaURL, b.MediaBase64 = str("type"), str("text"), str("mediaUrl"), str("mediaBase64")
	b.MediaKind, b.MediaFilename, b.PollQuestion = str("mediaKind"), str("mediaFilename"), str("pollQuestion")
	b.SendAt, b.ReplyTo, b.Secret, b.EngineID = str("sendAt"), str("replyTo"), str("secret"), str("engineId")
	b.PollOptions = append(r.MultipartForm.Value["pollOptions"], r.MultipartForm.Value["pollOptions[]"]...)
	if v := str("pollAllowMultiple"); v != nil {
		allow, err := strconv.ParseBool(*v)
		if err != nil {
			p.Add("pollAllowMultiple", "invalid_type", "pollAllowMultiple must be true or false")
		}
		b.PollAllowMultiple = &allow
	}
	if v := str("location"); v != nil {
		p = append(p, jsonPart("location", *v, &b.Location)...)
	}
	if v := str("contacts"); v != nil {
		p = append(p, jsonPart("contacts", *v, &b.Contacts)...)
	}
	if v := str("withTyping"); v != nil && typing != nil {
		with, err := strconv.ParseBool(*v)
		if err != nil {
			p.Add("withTyping", "invalid_type", "withTyping must be true or false")
		}
		typing.WithTyping = &with
	}
	if v := str("typingSeconds"); v != nil && typing != nil {
		secs, err := strconv.ParseFloat(*v, 64)
		if err != nil {
			p.Add("typingSeconds", "invalid_type", "typingSeconds must be a number")
		}
		typing.TypingSeconds = &secs
	}
	if files := r.MultipartForm.File["mediaFile"]; len(files) > 0 {
		f, err := files[0].Open()
		if err != nil {
			return nil, invalidBody("mediaFile", "invalid_multipart", "mediaFile could not be read.")
		}
		b.mediaFile = &graphql.Upload{File: f, Filename: files[0].Filename, Size: files[0].Size,
			ContentType: files[0].Header.Get("Content-Type")}
	}
	for name := range r.MultipartForm.File {
		if name != "mediaFile" {
			p.Add(name, "unrecognized_keys", "Unknown file part %q; send the file as mediaFile.", name)
		}
	}
	return &b, p.Err(switchboard.EINVALID)
}

// jsonPart decodes the JSON of the form part name into v, or names the part
// in a problem.
func jsonPart(name, raw string, v any) switchboard.Problems {
	var p switchboard.Problems
	d := json.NewDecoder(strings.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		p.Add(name, "invalid_type", "%s must be JSON: %v", name, err)
	}
	return p
}

// close closes the uploaded file, if any (its temporary file is removed after the
// handler by releaseMultipart).
func (b *messageBody) close() {
	if b != nil && b.mediaFile != nil {
		if c, ok := b.mediaFile.File.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

func (b *messageBody) input() (model.MessageInput, error) {
	if b.Type == nil {
		return model.MessageInput{}, &switchboard.Error{Code: switchboard.EVALIDATION, Message: "type is required (text, media, poll, location or vcard).",
			Details: []switchboard.Detail{{Path: "type", Code: "invalid_type", Message: "Required"}}}
	}
	return model.MessageInput{
		Type: *b.Type, Text: b.Text, MediaURL: b.MediaURL, MediaBase64: b.MediaBase64, MediaFile: b.mediaFile,
		MediaKind: b.MediaKind, MediaFilename: b.MediaFilename, PollQuestion: b.PollQuestion,
		PollOptions: b.PollOptions, PollAllowMultiple: b.PollAllowMultiple, SendAt: b.SendAt,
		ReplyTo: b.ReplyTo, Secret: b.Secret, EngineID: b.EngineID, Location: b.Location, Contacts: b.Contacts,
	}, nil
}

func (b *messageBody) patch() model.MessagePatch {
	return model.MessagePatch{
		Type: b.Type, Text: b.Text, MediaURL: b.MediaURL, MediaBase64: b.MediaBase64, MediaFile: b.mediaFile,
		MediaKind: b.MediaKind, MediaFilename: b.MediaFilename, PollQuestion: b.PollQuestion,
		PollOptions: b.PollOptions, PollAllowMultiple: b.PollAllowMultiple, SendAt: b.SendAt,
		ReplyTo: b.ReplyTo, Secret: b.Secret, EngineID: b.EngineID, Location: b.Location, Contacts: b.Contacts,
	}
}

// scheduleMessage serves POST /v1/scheduled-messages/{chatId}.
func (s *server) scheduleMessage(w http.ResponseWriter, r *http.Request) error {
	b, typing, err := readDirectBody(w, r)
	defer b.close()
	if err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	var key *string
	if h, ok := r.Header["Idempotency-Key"]; ok {
		key = &h[0]
	}
	p, err := s.mutation.ScheduleMessage(r.Context(), chi.URLParam(r, "chatId"), in, key, typing.WithTyping, typing.TypingSeconds)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if p.Replayed {
		status = http.StatusOK
	}
	return writeData(w, status, view.NewMessage(p.Message))
}

// sendMessage serves POST /v1/messages/{chatId}.
func (s *server) sendMessage(w http.ResponseWriter, r *http.Request) error {
	b, typing, err := readDirectBody(w, r)
	defer b.close()
	if err != nil {
		return err
	}
	in, err := b.input()
	if err != nil {
		return err
	}
	m, err := s.mutation.SendMessage(r.Context(), chi.URLParam(r, "chatId"), in, typing.WithTyping, typing.TypingSeconds)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusCreated, view.NewMessage(m))
}

// listScheduledMessages serves GET /v1/scheduled-messages.
func (s *server) listScheduledMessages(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	filter := &model.ScheduledMessageFilter{
		ChatID: queryString(r, "chatId"), SearchToken: queryString(r, "searchToken"),
		Status: queryString(r, "status"), Order: queryString(r, "order"), EngineID: queryString(r, "engineId"),
	}
	page, err := s.query.ScheduledMessages(r.Context(), filter, limit, skip)
	if err != nil {
		return err
	}
	out := make([]view.Message, len(page.Items))
	for i, m := range page.Items {
		out[i] = view.NewMessage(m)
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getScheduledMessage serves GET /v1/scheduled-messages/{id}.
func (s *server) getScheduledMessage(w http.ResponseWriter, r *http.Request) error {
	m, err := s.query.ScheduledMessage(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, view.NewMessage(m))
}

// updateScheduledMessage serves PATCH /v1/scheduled-messages/{id}.
func (s *server) updateScheduledMessage(w http.ResponseWriter, r *http.Request) error {
	b, err := readMessageBody(w, r, false)
	defer b.close()
	if err != nil {
		return err
	}
	m, err := s.mutation.UpdateScheduledMessage(r.Context(), chi.URLParam(r, "id"), b.patch())
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, view.NewMessage(m))
}

// cancelScheduledMessage serves DELETE /v1/scheduled-messages/{id}.
func (s *server) cancelScheduledMessage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.mutation.CancelScheduledMessage(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, p)
}

// getMessage serves GET /v1/messages/{id}.
func (s *server) getMessage(w http.ResponseWriter, r *http.Request) error {
	m, err := s.query.Message(r.Context(), chi.URLParam(r, "id"), queryString(r, "chatId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, chatMessage(m))
}

func chatMessage(m *ent.Message) view.ChatMessage {
	return view.NewChatMessage(m, messaging.AckOf(m))
}

// listStoredMessages serves GET /v1/messages.
func (s *server) listStoredMessages(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	limit, skip := queryInt(r, "limit", &p), queryInt(r, "skip", &p)
	f := &model.StoredMessageFilter{ChatID: queryString(r, "chatId"), SearchToken: queryString(r, "searchToken"),
		Order: queryString(r, "order"), Since: queryString(r, "since"), Until: queryString(r, "until"),
		MessageTypes: queryList(r, "messageTypes"), Mime: queryString(r, "mime"),
		FilenameContains: queryString(r, "filenameContains"), HasMedia: queryBool(r, "hasMedia", &p),
		Sender: queryString(r, "sender"), EngineID: queryString(r, "engineId")}
	if q, ok := r.URL.Query()["queryAny"]; ok {
		f.QueryAny = q
	}
	_, _ = queryBool(r, "loadFromPhoneIfNeeded", &p), queryBool(r, "includeMediaContent", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	page, err := s.query.StoredMessages(r.Context(), f, limit, skip)
	if err != nil {
		return err
	}
	out, err := s.chatMessages(r.Context(), page.Items)
	if err != nil {
		return err
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}

// getMessageAck serves GET /v1/messages/ack/{waMessageKey}.
func (s *server) getMessageAck(w http.ResponseWriter, r *http.Request) error {
	ack, err := s.query.MessageAck(r.Context(), chi.URLParam(r, "waMessageKey"), queryString(r, "chatId"))
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, map[string]int{"ack": ack})
}

// getMessageAcks serves POST /v1/messages/acks.
func (s *server) getMessageAcks(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		MessageKeys []string `json:"messageKeys"`
		ChatID      *string  `json:"chatId"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	acks, err := s.query.MessageAcks(r.Context(), b.MessageKeys, b.ChatID)
	if err != nil {
		return err
	}
	return writeList(w, acks, len(acks), 0, len(acks))
}

// loadOlder serves POST /v1/messages/load_older/{chatId} (spec endpoint 6).
func (s *server) loadOlder(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Pages     *int             `json:"pages"`
		UntilDate *json.RawMessage `json:"until_date"`
	}
	if err := decodeJSON(w, r, &b, true); err != nil {
		return err
	}
	var until *string
	if b.UntilDate != nil {
		var v any
		_ = json.Unmarshal(*b.UntilDate, &v)
		switch t := v.(type) {
		case string:
			until = &t
		case float64:
			u := strconv.FormatFloat(t, 'f', -1, 64)
			until = &u
		default:
			return invalidBody("until_date", "invalid_type", "until_date must be a date-time string or a Unix time number.")
		}
	}
	res, err := s.mutation.LoadOlderMessages(r.Context(), chi.URLParam(r, "chatId"), b.Pages, until)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, res)
}

// mediaRecord is the reference's media answer: url (where the bytes are
// served) or mediaUnavailable. dataBase64 is never sent: the bytes are always
// at url.
type mediaRecord struct {
	URL              *string `json:"url,omitempty"`
	Mimetype         *string `json:"mimetype,omitempty"`
	Filename         *string `json:"filename,omitempty"`
	DataBase64       *string `json:"dataBase64,omitempty"`
	OriginalQuality  *bool   `json:"originalQuality,omitempty"`
	MediaUnavailable *string `json:"mediaUnavailable,omitempty"`
}

// getMessageMedia serves GET /v1/messages/media/{waMessageKey}: the reference's
// envelope of where the attachment's bytes are served (an unguessable /media/
// URL, served with the headers of safe media), or why there are none.
func (s *server) getMessageMedia(w http.ResponseWriter, r *http.Request) error {
	var p switchboard.Problems
	attempts := queryInt(r, "maxAttempts", &p)
	if err := p.Err(switchboard.EINVALID); err != nil {
		return err
	}
	m, err := s.query.MessageMedia(r.Context(), chi.URLParam(r, "waMessageKey"), queryString(r, "chatId"), attempts)
	if err != nil {
		return err
	}
	return writeData(w, http.StatusOK, mediaRecord{URL: m.URL, Mimetype: m.Mimetype, Filename: m.Filename,
		OriginalQuality: m.OriginalQuality, MediaUnavailable: m.MediaUnavailable})
}

// reactToMessage serves POST /v1/messages/reactions/{waMessageKey}.
func (s *server) reactToMessage(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Emoji *string `json:"emoji"`
	}
	if err := decodeJSON(w, r, &b, false); err != nil {
		return err
	}
	if b.Emoji == nil {
		return &switchboard.Error{Code: switchboard.EVALIDATION, Message: "emoji is required (\"\" removes the reaction).",
			Details: []switchboard.Detail{{Path: "emoji", Code: "invalid_type", Message: "Required"}}}
	}
	if _, err := s.mutation.ReactToMessage(r.Context(), chi.URLParam(r, "waMessageKey"), *b.Emoji, queryString(r, "chatId")); err != nil {
		return err
	}
	return writeData(w, http.StatusOK, okBody)
}

// pinMessage serves POST /v1/messages/pin/{waMessageKey}.
func (s *server) pinMessage(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Duration *int `json:"duration"`
	}
	if err := decodeJSON(w, r, &b, true); err != nil {
		return err
	}
	if _, err := s.mutation.PinMessage(r.Context(), chi.URLParam(r, "waMessageKey"), b.Duration, queryString(r, "chatId")); err != nil {
		return err
	}
	return writeData(w, http.StatusOK, okBody)
}

// unpinMessage serves POST /v1/messages/unpin/{waMessageKey}.
func (s *server) unpinMessage(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.mutation.UnpinMessage(r.Context(), chi.URLParam(r, "waMessageKey"), queryString(r, "chatId")); err != nil {
		return err
	}
	return writeData(w, http.StatusOK, okBody)
}

// pinnedMessage is the reference's pinned-message item.
type pinnedMessage struct {
	Key    string `json:"key"`
	ChatID string `json:"chatId"`
	Text   string `json:"text,omitempty"`
}

// listPinnedMessages serves GET /v1/messages/pinned/{chatId}.
func (s *server) listPinnedMessages(w http.ResponseWriter, r *http.Request) error {
	page, err := s.query.PinnedMessages(r.Context(), chi.URLParam(r, "chatId"))
	if err != nil {
		return err
	}
	out := make([]pinnedMessage, len(page.Items))
	for i, m := range page.Items {
		out[i] = pinnedMessage{Key: m.WaSerialized, ChatID: m.To, Text: m.Text}
	}
	return writeList(w, out, page.Limit, page.Skip, page.Total)
}
